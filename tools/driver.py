"""tfn-opt's work on one input: parse each chunk, verify, run the pipeline, report diagnostics."""
import re
import sys
import traceback

from mlir import ir

from tfn.dialects.context import new_context
from tfn.passes.registry import pass_manager
from tfn.passes.tfn_verify import verify_module
from tfn.tools import diagnostics


def parse(ctx, name, first, lines):
    """Parse a chunk that starts at line `first` of `name`, so locations name the original file and lines.

    Like mlir-opt, anything but a single `builtin.module` is wrapped in an implicit module; the wrapper goes on
    a padding line (or, for a chunk starting at line 1, in front of line 1).
    """
    text = "\n".join(lines)
    try:
        op = ir.Operation.parse("\n" * (first - 1) + text, source_name=name, context=ctx)
        if op.operation.name == "builtin.module":
            return op
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise
    k = _first_op_line(lines)
    if k == 0:
        wrapped = ("\n" * (first - 2) + "module {\n" if first > 1 else "module {") + text + "\n}"
    else:  # attribute/type aliases stay in front of the wrapper, whose `{` ends the last alias line
        head = lines[:k]
        j = max((i for i, line in enumerate(head) if line.strip() and "//" not in line), default=None)
        if j is None:
            head, body = head, ["module {" + lines[k]] + lines[k + 1:]
        else:
            head, body = head[:j] + [head[j] + " module {"] + head[j + 1:], lines[k:]
        wrapped = "\n" * (first - 1) + "\n".join(head + body) + "\n}"
    return ir.Operation.parse(wrapped, source_name=name, context=ctx)


_ALIAS = re.compile(r"\s*[#!][\w.$-]+\s*=")


def _first_op_line(lines):
    """Index of the chunk's first line after its leading attribute/type alias definitions (`#map = ...`,
    `!t = ...`, their indented continuation lines, blank lines and comments); 0 when it has none."""
    in_alias, first = False, 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if _ALIAS.match(line):
            in_alias, first = True, i + 1
        elif in_alias and line[:1].isspace():
            first = i + 1
        else:
            return first if in_alias else 0
    return first if in_alias else 0


# Text the wheels' MLIR parser aborts on (an assertion, not a diagnostic): a dense array of `index` elements
# (Type::getIntOrFloatBitWidth on index). Found by test_fuzz.py; rejected before the text reaches the parser.
# Also linalg's custom syntax `permutation = [...]` / `dimensions = [...]` (transpose, broadcast, reduce) when the
# list is malformed: the op's parser stores the failed parse's null attribute (NamedAttrList::set asserts).
_ABORTING = [(re.compile(r"\barray\s*<\s*index\b"),
              "a dense array cannot hold 'index' elements (its element type must be an integer or float type of a "
              "fixed width, such as i64)"),
             (re.compile(r"\)\s*(?P<at>permutation|dimensions)\s*=(?!\s*\[\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\])"),
              "expected a list of integers in brackets after '=' (e.g. permutation = [1, 0])")]
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


# MLIR's parser, verifier, printer and passes recurse once per level of nested regions, types and attributes: a few
# thousand levels overflow the stack (a segfault, measured from ~4,000 nested regions on an 8 MiB stack). Nesting
# deeper than this is rejected before the text reaches the parser; real IR nests a few dozen levels.
MAX_NESTING = 1000
_BRACKET = re.compile(r"[(\[{<]|[)\]}]|(?<!-)>(?!=)")  # (`->` and `>=` close nothing)


def aborting_syntax(name, first, lines):
    """Diagnostics for the constructs in a chunk (starting at line `first`) that MLIR's parser would abort on
    instead of reporting: one error at the first such place, outside string literals and comments."""
    code = "\n".join(_STRING.sub(lambda m: " " * len(m.group()), line).split("//")[0] for line in lines)

    def error(at, message):
        line = code.count("\n", 0, at)
        col = at - (code.rfind("\n", 0, at) + 1) + 1
        where = (name, first + line, col)
        return [diagnostics.Diag("error", message, *where, f'loc("{name}":{where[1]}:{col})')]
    for pattern, message in _ABORTING:
        found = pattern.search(code)
        if found:
            return error(found.start("at" if "at" in pattern.groupindex else 0), message)
    depth = 0
    for found in _BRACKET.finditer(code):
        if found.group() in "([{<":
            depth += 1
            if depth > MAX_NESTING:
                return error(found.start(), f"regions, types or attributes nested more than {MAX_NESTING} levels "
                                            "deep (MLIR's recursive parser would overflow the stack)")
        else:
            depth = max(depth - 1, 0)
    return []


def _internal(name, first, exc):
    """A diagnostic for a Python exception escaping a pass: reported with its innermost frame, no traceback."""
    message = f"internal error: {type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if frames and not isinstance(exc, ir.MLIRError):
        message += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    return diagnostics.Diag("error", message, name, first, 1, f'loc("{name}":{first}:1)')


class Driver:
    """One context and one PassManager shared by every chunk of the input."""

    def __init__(self, args, pipeline):
        self.args = args
        self.ctx = new_context()
        self.ctx.allow_unregistered_dialects = args.allow_unregistered_dialect
        self.ctx.enable_multithreading(False)  # diagnostics in program order
        self.pm = pass_manager(pipeline, self.ctx) if pipeline else None
        if self.pm is not None and self._printing():
            self.pm.enable_ir_printing(
                print_before_all=args.mlir_print_ir_before_all, print_after_all=args.mlir_print_ir_after_all,
                print_after_change=args.mlir_print_ir_after_change,
                print_after_failure=args.mlir_print_ir_after_failure,
                print_module_scope=args.mlir_print_ir_module_scope, enable_debug_info=args.mlir_print_debuginfo,
                print_generic_op_form=args.mlir_print_op_generic)
        self.collector = diagnostics.Collector(self.ctx)

    def _printing(self):
        a = self.args
        return (a.mlir_print_ir_after_all or a.mlir_print_ir_before_all or a.mlir_print_ir_after_change
                or a.mlir_print_ir_after_failure)

    def process(self, name, first, lines):
        """(printed IR or None on failure, diagnostics) for one chunk."""
        with self.ctx:
            try:
                rejected = aborting_syntax(name, first, lines)
                if rejected:
                    return None, self.collector.take() + rejected
                op = parse(self.ctx, name, first, lines)
                if verify_module(op.operation):
                    return None, self.collector.take()
                if self.pm is not None:
                    self.pm.run(op.operation)
                return self._print(op), self.collector.take()
            except ir.MLIRError as e:
                failure = [diagnostics.copy(d) for d in e.error_diagnostics] or [_internal(name, first, e)]
            except Exception as e:  # a bug in a Python pass must not become a traceback
                failure = [_internal(name, first, e)]
        return None, self.collector.take() + failure

    def _print(self, op):
        a = self.args
        return op.operation.get_asm(enable_debug_info=a.mlir_print_debuginfo,
                                    print_generic_op_form=a.mlir_print_op_generic,
                                    use_local_scope=a.mlir_print_local_scope).rstrip("\n") + "\n"

    def run_chunks(self, name, text, chunks):
        """Process every chunk; returns (success, outputs of the chunks that succeeded)."""
        sources = {name: text.split("\n")}
        ok, outputs = True, []
        for first, lines in chunks:
            out, diags = self.process(name, first, lines)
            if out is not None:
                outputs.append(out)
            if self.args.verify_diagnostics:
                failures = diagnostics.check(diagnostics.parse_expected(lines, first), diags, name)
                ok = ok and not failures
                for f in failures:
                    print(f, file=sys.stderr)
                continue
            ok = ok and out is not None and not any(d.severity == "error" for d in diags)
            for d in diags:
                print(diagnostics.render(d, sources), file=sys.stderr)
        return ok, outputs
