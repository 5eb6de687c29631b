"""tfn-aot: compile a Python function ahead of time into a C library (lib<name>.so) and its header (<name>.h).

The function is named as FILE.py:NAME or package.module:NAME (NAME may be dotted: model.predict). It is a
tfn.function with an input_signature, a concrete function, or any function (a tfn.function or plain Python) given
--signature: one DTYPE[DIMS] per tensor argument, e.g. `float32[2,3] int32[5]` (`float32[]` for a scalar).
Captured variables are frozen at the values they have once the file has run. See tfn.experimental.aot_compile.
"""
import argparse
import importlib
import importlib.util
import os
import re
import sys

import tfn

_SPEC = re.compile(r"\s*([A-Za-z0-9_]+)\s*\[([^\]]*)\]\s*\Z")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(1, f"tfn-aot: error: {message} (see tfn-aot --help)\n")


class UsageError(Exception):
    """A bad command line or a function that cannot be found: reported in one line, exit status 1."""


def make_parser():
    parser = _Parser(prog="tfn-aot", description=__doc__.split(":", 1)[1].strip(), allow_abbrev=False,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("function", help="FILE.py:NAME or package.module:NAME")
    parser.add_argument("-o", "--output-dir", default=".", metavar="DIR", help="where to write (default: .)")
    parser.add_argument("-n", "--name", help="the C entry point and library name (default: the function's name)")
    parser.add_argument("-s", "--signature", nargs="+", metavar="DTYPE[DIMS]",
                        help="the tensor arguments' types, e.g. float32[2,3] int32[5]")
    parser.add_argument("--target-features", metavar="LEVEL",
                        help="instruction-set level: native (default), avx512, avx2, sse, neon "
                             "(as TFN_TARGET_FEATURES)")
    return parser


def parse_spec(text):
    """`float32[2,3]` -> tfn.TensorSpec([2, 3], tfn.float32)."""
    m = _SPEC.match(text)
    if not m:
        raise UsageError(f"bad signature {text!r}: expected DTYPE[DIMS], e.g. float32[2,3] or int32[] for a scalar")
    try:
        dtype = tfn.as_dtype(m.group(1))
    except (TypeError, ValueError):
        raise UsageError(f"bad signature {text!r}: unknown dtype {m.group(1)!r}") from None
    dims = [d.strip() for d in m.group(2).split(",")] if m.group(2).strip() else []
    if not all(d.isdigit() for d in dims):
        raise UsageError(f"bad signature {text!r}: dimensions must be non-negative integers (a library compiled "
                         "ahead of time takes static shapes)")
    return tfn.TensorSpec([int(d) for d in dims], dtype)


def load_function(target):
    """The object `FILE.py:NAME` or `module:NAME` names (the file or module runs)."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise UsageError(f"expected FILE.py:NAME or module:NAME, got {target!r}")
    if where.endswith(".py") or os.sep in where:
        if not os.path.isfile(where):
            raise UsageError(f"no such file: {where}")
        name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(where))[0])
        spec = importlib.util.spec_from_file_location(name, where)
        if spec is None:  # (not a Python source file: no loader for it)
            raise UsageError(f"expected a Python file (FILE.py:NAME), got {where}")
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))  # its own imports, as `python FILE.py`
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{where} has no {attr!r}")
        obj = getattr(obj, part)
    return obj


def concrete_function(obj, signature):
    """The ConcreteFunction to compile: obj's, for the signature when one is given."""
    if isinstance(obj, tfn.ConcreteFunction):
        if signature:
            raise UsageError("--signature cannot be given for a concrete function (it is traced already)")
        return obj
    if not callable(obj):
        raise UsageError(f"{type(obj).__name__} object is not a function")
    if not isinstance(obj, tfn.PolymorphicFunction):
        obj = tfn.function(obj)
    if signature:
        return obj.get_concrete_function(*signature)
    if obj.input_signature is None:
        raise UsageError("the function has no input_signature: give its arguments' types with --signature")
    return obj.get_concrete_function()


def main(argv=None):
    """Entry point of the `tfn-aot` console script; returns the exit status (0 ok, 1 any failure)."""
    args = make_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        signature = [parse_spec(s) for s in args.signature or []]
        concrete = concrete_function(load_function(args.function), signature)
        lib = tfn.experimental.aot_compile(concrete, args.output_dir, name=args.name,
                                           target_features=args.target_features)
    except UsageError as e:
        print(f"tfn-aot: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the user's file failed, or the function cannot be compiled: its message, no traceback
        print(f"tfn-aot: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {lib.library}\nwrote {lib.header}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
