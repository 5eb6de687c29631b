"""tfn-opt: mlir-opt for the tfn dialect — parse, verify, run tfn and upstream passes, print."""
import argparse
import re
import sys

from tfn.passes.options import resolve
from tfn.passes.pipelines import PIPELINES
from tfn.passes.registry import all_passes
from tfn.passes.target import current as current_target
from tfn.tools.driver import Driver

SPLIT_MARKER = "// -----"

_OPTIONS = [
    (("-o", "--output"), dict(default="-", metavar="FILE", help="output file (default: stdout)")),
    (("-p", "--pass-pipeline"), dict(metavar="PIPELINE",
                                     help="textual pipeline, e.g. 'builtin.module(tfn-to-linalg, canonicalize)'")),
    (("--split-input-file",), dict(action="store_true",
                                   help=f"process each chunk between '{SPLIT_MARKER}' lines on its own")),
    (("--verify-diagnostics",), dict(action="store_true",
                                     help="check diagnostics against expected-error/warning/note/remark lines")),
    (("--mlir-print-ir-after-all",), dict(action="store_true", help="print the IR after every pass (stderr)")),
    (("--mlir-print-ir-before-all",), dict(action="store_true", help="print the IR before every pass (stderr)")),
    (("--mlir-print-ir-after-change",), dict(action="store_true", help="print the IR after passes that change it")),
    (("--mlir-print-ir-after-failure",), dict(action="store_true", help="print the IR after a failing pass")),
    (("--mlir-print-ir-module-scope",), dict(action="store_true", help="IR printing shows the whole module")),
    (("--mlir-print-debuginfo",), dict(action="store_true", help="print locations")),
    (("--mlir-print-op-generic",), dict(action="store_true", help="print ops in the generic form")),
    (("--mlir-print-local-scope",), dict(action="store_true", help="print attributes and types inline")),
    (("--allow-unregistered-dialect",), dict(action="store_true", help="accept ops of unknown dialects")),
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(1, f"tfn-opt: error: {message} (see tfn-opt --help)\n")


def _pass_rows(p, here):
    """The pass's help line, then one per option with its default on the target `here` (None: unknown)."""
    defaults = resolve(p.options, {}, here) if here else {}
    return [f"  --{p.name:<28} {p.summary}"] + [
        f"      {o.usage():<26} {o.help}" + (f" [here: {defaults[o.keyword]}]" if here else "") for o in p.options]


def _target():
    """The current target, or None when TFN_TARGET_FEATURES names none (the pipeline reports that error)."""
    try:
        return current_target()
    except ValueError:
        return None


def _epilog():
    here, passes = _target(), all_passes()
    rows = ["tfn passes:"] + [row for n in sorted(passes) for row in _pass_rows(passes[n], here)]
    rows += ["", "tfn pipelines:"] + [f"  --{n:<28} {PIPELINES[n].summary}" for n in sorted(PIPELINES)]
    rows += ["", "Options go as --<pass>=<name>=<value> or, several, '--<pass>=<name>=<value> <name>=<value>',",
             "or inside -p as <pass>{<name>=<value> ...}; defaults come from the target (TFN_TARGET_FEATURES).",
             "Any upstream MLIR pass works as --<name> or --<name>=<options>, or inside -p.",
             "Passes given as flags run in command-line order; they cannot be mixed with -p."]
    return "\n".join(rows)


def make_parser():
    """The argument parser; pass flags (`--<pass>[=<options>]`) are left over as unknown arguments."""
    parser = _Parser(prog="tfn-opt", description=__doc__.split(":", 1)[1].strip(), allow_abbrev=False,
                     epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin, the default)")
    for flags, kw in _OPTIONS:
        parser.add_argument(*flags, **kw)
    return parser


def _normalize(argv):
    """mlir-opt spells long options with one dash too: `-canonicalize` means `--canonicalize`."""
    return [f"-{a}" if re.match(r"-[A-Za-z][\w.-]+(=|$)", a) else a for a in argv]


def pass_element(flag):
    """`--name=opts` -> `name{opts}`: one element of a textual pipeline."""
    name, eq, opts = flag[2:].partition("=")
    if not eq or opts.startswith("{"):
        return name + opts
    return f"{name}{{{opts}}}"


def parse_args(argv):
    """(options, pipeline text or None); usage errors exit with status 1."""
    parser = make_parser()
    args, rest = parser.parse_known_args(_normalize(argv))
    flags = [a for a in rest if a.startswith("--")]
    if len(flags) != len(rest):
        parser.error(f"unexpected arguments: {' '.join(a for a in rest if a not in flags)}")
    if flags and args.pass_pipeline:
        parser.error("--pass-pipeline cannot be used with individual pass flags")
    pipeline = args.pass_pipeline or ", ".join(pass_element(f) for f in flags)
    return args, pipeline or None


def split_chunks(text, split):
    """[(first line number, lines)] — the whole input, or the chunks between `// -----` lines."""
    lines = text.split("\n")
    if not split:
        return [(1, lines)]
    chunks, start = [], 0
    for i, line in enumerate(lines):
        if line.rstrip() == SPLIT_MARKER:
            chunks.append((start + 1, lines[start:i]))
            start = i + 1
    chunks.append((start + 1, lines[start:]))
    return chunks


def main(argv=None):
    """Entry point of the `tfn-opt` console script; returns the exit status (0 ok, 1 any failure)."""
    args, pipeline = parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        driver = Driver(args, pipeline)
    except ValueError as e:
        print(f"tfn-opt: error: {_pipeline_error(str(e))}", file=sys.stderr)
        return 1
    text, name = _read(args.input)
    if text is None:
        return 1
    ok, outputs = driver.run_chunks(name, text, split_chunks(text, args.split_input_file))
    failed_write = _write(args.output, f"{SPLIT_MARKER}\n".join(outputs))
    return 1 if failed_write or not ok else 0


def _pipeline_error(message):
    unknown = re.search(r"'([^']+)' does not refer to a registered pass", message)
    if unknown:
        return f"unknown pass or pipeline '{unknown.group(1)}' (see tfn-opt --help)"
    return "invalid pass pipeline: " + " ".join(message.split())


def _read(path):
    try:
        if path == "-":  # UTF-8 as a file is read (the locale's text stream kept bad bytes as surrogates)
            return sys.stdin.buffer.read().decode("utf-8"), "<stdin>"
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except (OSError, UnicodeDecodeError) as e:
        print(f"tfn-opt: error: could not open input file '{path}': {e}", file=sys.stderr)
        return None, path


def _write(path, text):
    """Write the output; returns 0 on success, 1 after reporting an error."""
    try:
        if path == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return 0
    except OSError as e:
        print(f"tfn-opt: error: could not write output file '{path}': {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
