"""Ahead-of-time libraries: a traced function compiled into a shared object with a C entry point and its header.

`build_library` lowers the traced module with the pipeline every tfn function runs (driver.lower), generates its
object code (compiler.build_object) and links it, with a generated C wrapper (runtime/aot_c.py writes it), into
`lib<name>.so` through the C compiler driver (compiler.driver_link_command); `<name>.h` declares the entry point.

What the library needs at run time is libc and libm only, which the link checks (`--no-undefined`):
- big kernels run on worker threads as in the process (tfn-async-parallel, split for the target's cores): tfn's
  async runtime (runtime/_async_runtime.c, which needs only libc) is compiled into the library, its functions
  local to it, with a pool of its own (the CPUs of the calling process's affinity mask less one threads, started on
  the first parallel kernel);
- the one MLIR runner-utils function lowered code calls, memrefCopy, is defined by the wrapper;
- code that calls back into Python (tfn.print, tfn.py_function, string ops) is refused before anything is built;
- the error channel (dialects/abi.py) is thread-local (tfn-thread-local-errors): the entry point reads the calling
  thread's copy through the code's `tfn_error_flag_slot()`, so threads call the library at once, each with its own
  error. The object code's thread-local storage is native ELF TLS (runtime/llvm_codegen.py; where the
  ExecutionEngine generates it instead, emulated: libgcc is linked statically (`-static-libgcc`), its emutls
  routine goes into the library); either way the library needs no libgcc_s;
- only the entry point and `<name>_last_error` are exported (a version script): two libraries can be linked into
  one program.
"""
import ctypes
import ctypes.util
import dataclasses
import os
import re
import shutil
import subprocess

from mlir import ir

from tfn.dialects import attrs, optable
from tfn.dialects.abi import DETAIL_LEN, ERROR_FLAG
from tfn.dialects.errors import CompileError
from tfn.dialects.locations import file_location, with_excerpt
from tfn.dialects.types import TensorType
from tfn.passes import target as target_mod
from tfn.passes.lowering import runtime_errors
from tfn.runtime import aot_c, async_runtime, compiler, driver, toolchain

# Functions the lowered code may call that the C library (libc, libm) does not define; the wrapper defines them
# (and the async runtime linked in, those of compiler.ASYNC_PREFIX).
WRAPPER_DEFINES = ("memrefCopy",)


@dataclasses.dataclass(frozen=True)
class Library:
    """What build_library wrote: the shared object and the C header."""
    library: str
    header: str


def build_library(module, *, symbol, in_types, out_types, outputs, in_names, out_dir, name, function_name,
                  features=None):
    """Build `<out_dir>/lib<name>.so` and `<out_dir>/<name>.h` from function `symbol` of traced `module` (tfn
    dialect, static shapes, left unchanged).

    in_types/out_types: TensorTypes of its arguments and results; outputs: per C output (`out0`, `out1`, ...) the
    index of the result it receives, or its value (an ndarray) when it is a constant; in_names: C identifiers of
    the arguments; function_name: the name in messages; features: an instruction-set level (passes/target.py:
    native, avx2, ...; None: TFN_TARGET_FEATURES or the host's). Raises ValueError for a function that calls back
    into Python, CompileError when building fails."""
    with module.context:
        refuse_callbacks(module, function_name)
        on = target_mod.current() if features is None else target_mod.target_for(features)
        lowered = driver.lower(module, "tfn-pipeline", on, function_name)
        has_errors = _has_error_channel(lowered)
        _check_calls(lowered, function_name)
        parallel = compiler.uses_async_runtime(compiler.declared_functions(lowered))
        messages = error_messages(module.operation, symbol) if has_errors else []  # named as the runtime names it
        obj, work, _ = compiler.build_object(lowered, 3, on)
    try:
        spec = aot_c.Spec(name, symbol, list(in_types), list(out_types), list(outputs), list(in_names),
                          has_errors, messages, function_name,
                          f"{on.arch} {on.isa} ({on.vector_bits}-bit vectors): CPUs with these instructions",
                          parallel)
        wrapper = os.path.join(work, "wrapper.c")
        with open(wrapper, "w") as f:
            f.write(aot_c.wrapper_source(spec))
        exports = os.path.join(work, "exports.map")
        with open(exports, "w") as f:
            f.write(f"{{\n  global: {name}; {name}_last_error;\n  local: *;\n}};\n")
        so = os.path.join(work, f"lib{name}.so")
        _run([toolchain.linker(), "-c", "-fPIC", "-O2", "-std=gnu11", "-pthread", "-o", wrapper + ".o", wrapper],
             "compiling the C wrapper")
        objs = [obj, wrapper + ".o"]
        if parallel:
            objs.append(os.path.join(work, "async_runtime.o"))
            _run([toolchain.linker(), "-c", "-fPIC", "-O2", "-pthread", "-fvisibility=hidden", "-o", objs[-1],
                  async_runtime.SOURCE], "compiling the async runtime")
        _run(compiler.driver_link_command(so, objs, [], rpath="$ORIGIN",
                                          extra=["-pthread", "-static-libgcc", "-Wl,--no-undefined",
                                                 f"-Wl,--version-script={exports}",
                                                 f"-Wl,-soname,lib{name}.so"]), "linking the library")
        os.makedirs(out_dir, exist_ok=True)
        library, header = os.path.join(out_dir, f"lib{name}.so"), os.path.join(out_dir, f"{name}.h")
        shutil.copyfile(so, library + ".tmp")
        os.replace(library + ".tmp", library)  # a program running the old library keeps its mapping
        with open(header + ".tmp", "w") as f:
            f.write(aot_c.header_source(spec))
        os.replace(header + ".tmp", header)
        return Library(library, header)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def freeze(module, symbol, values):
    """A copy of traced `module` whose function `symbol` has its arguments at the indices of `values` ({index:
    ndarray}) replaced by tfn.constant ops holding those values (a captured variable's value becomes code)."""
    with module.context:
        frozen = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        fn = ir.SymbolTable(frozen.operation)[symbol]
        block = fn.regions[0].blocks[0]
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        constant = optable.OPS["constant"]
        with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown():
            for i in sorted(values):
                arg = block.arguments[i]
                tt = TensorType.from_mlir(arg.type)
                op = ir.Operation.create(constant.full_name, results=[arg.type],
                                         attributes={"value": attrs.to_mlir("dense", (values[i], tt))})
                arg.replace_all_uses_with(op.result)
        for i in sorted(values, reverse=True):
            block.erase_argument(i)
        inputs = [t for i, t in enumerate(ftype.inputs) if i not in values]
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, ftype.results))
    return frozen


def refuse_callbacks(module, function_name):
    """ValueError naming the first op of traced `module` that calls back into Python, with the user's line."""
    # start-up cost: the lowering patterns (~250 ms) load when a library is built, not at `import tfn`
    from tfn.passes.lowering import callbacks

    with module.context:
        found = callbacks.callback_ops(module.operation)
    if not found:
        return
    op, what = found[0]
    where = file_location(op.location)
    at = f" at {where[0]}:{where[1]}" if where else ""
    more = f" (and {len(found) - 1} more such op{'s' * (len(found) > 2)})" if len(found) > 1 else ""
    raise ValueError(with_excerpt(
        f"cannot compile '{function_name}' ahead of time: it calls {what}{at}{more}, which runs Python code, and "
        "a library compiled ahead of time runs without Python. Remove the call from the function (or keep it out "
        "of the traced code).", where))


def _has_error_channel(llvm_module):
    """Whether the lowered module exports the error flag (dialects/abi.py)."""
    return any(op.operation.name == "llvm.mlir.global" and op.attributes["sym_name"].value == ERROR_FLAG
               for op in llvm_module.body.operations)


def _check_calls(llvm_module, function_name):
    """CompileError naming a function the code calls that neither the C library nor the wrapper defines."""
    libc = _c_library_symbols()
    missing = [f for f in compiler.declared_functions(llvm_module)
               if f not in WRAPPER_DEFINES and not f.startswith(compiler.ASYNC_PREFIX) and f not in libc]
    if missing:
        raise CompileError(f"cannot compile '{function_name}' ahead of time: its code calls {', '.join(missing)}, "
                           "which a library without MLIR's runtime libraries cannot resolve")


def _c_library_symbols():
    """A membership test for the functions libc and libm define (asked of the libraries themselves)."""
    libs = [ctypes.CDLL(ctypes.util.find_library(n) or f"lib{n}.so.6") for n in ("c", "m")]

    class Symbols:
        def __contains__(self, name):
            return any(hasattr(lib, name) for lib in libs)
    return Symbols()


# Error messages ---------------------------------------------------------------------------------------------------
# The runtime formats a run-time error's message in Python from the op's formatter and the details the compiled code
# recorded (runtime_errors.describe). The library has no Python: each formatter is run here on marker details, and the
# message it makes becomes a template — text with the places where a marker shows. A formatter that branches on
# details[0] (a kind of error) is run once per small value of it (and, where that fails, per small value of
# details[1], which some formatters read as a count). A template is kept only if it reproduces the
# formatter's message on probe details (a formatter that computes with a detail, or reads one as a count, does not);
# otherwise the library reports the op, the user's line and the raw details.

_MARK = 7_100_000_000_000_000
KINDS = 4  # values of details[0] a template is made for; other values use the all-markers template
_PROBES = ((3, 1, 2, 5, 7, 11, 13, 17), (2, 4, 0, 1, 9, 6, 3, 8), (1, 2, 3, 4, 5, 6, 7, 9))
TF_CODES = {"InvalidArgumentError": 3, "NotFoundError": 5, "ResourceExhaustedError": 8,
            "FailedPreconditionError": 9, "OutOfRangeError": 11, "UnimplementedError": 12, "InternalError": 13}


def error_messages(module_op, function_name):
    """Per error code k (list index k - 1): its variants [(conditions {detail index: value}, TF status code,
    template)], the first whose conditions hold applies (the last has none); a template is a list of str (text)
    and int (the index of a detail shown there)."""
    marks = [_MARK + 1_000_003 * i for i in range(DETAIL_LEN)]
    out = []
    for code, op in enumerate(runtime_errors.error_sites(module_op), 1):
        variants = []
        for kind in [*range(KINDS), None]:  # details[0] = kind, then any other value
            when = {} if kind is None else {0: kind}
            made = _template(op, when, marks, function_name)
            if made is None:  # details[1] may be a count the formatter reads (a number of coordinates): split on it
                for count in range(KINDS):
                    split = _template(op, {**when, 1: count}, marks, function_name)
                    if split is not None:
                        variants.append(({**when, 1: count}, *split))
            variants.append((when, *(made or (3, _raw_details_message(op, code, function_name)))))
        out.append(variants)
    return out


def _template(op, when, marks, function_name):
    """(TF status code, template) of the message of failing `op` for details meeting `when` ({index: value}; details[0]
    is past KINDS where `when` does not fix it), or None when no template reproduces the formatter's messages."""
    made = _message(op, [when.get(i, m) for i, m in enumerate(marks)], function_name)
    if made is None:
        return None
    status, text = made
    parts = []
    for i, piece in enumerate(re.split(r"(\d{13,})", text)):
        if i % 2 == 0:
            parts.append(piece)
        elif int(piece) in marks:
            parts.append(marks.index(int(piece)))
        else:
            return None
    for probe in _PROBES:
        details = [when.get(i, v) for i, v in enumerate([KINDS + probe[0], *probe[1:DETAIL_LEN]])]
        shown = "".join(p if isinstance(p, str) else str(details[p]) for p in parts)
        if _message(op, details, function_name) != (status, shown):
            return None
    return status, parts


def _message(op, details, function_name):
    """(TF status code, text) of the runtime's message for failing `op` with `details`, or None if it fails."""
    try:
        message = runtime_errors.describe_op(op, list(details), function_name)
    except Exception:  # a formatter that cannot take these values: no template
        return None
    return TF_CODES.get(type(message).__name__, 3), str(message)


def _raw_details_message(op, code, function_name):
    """A template naming the op, the user's line and the raw details (when the formatter's cannot be made)."""
    found = file_location(op.location)
    where = f" defined at {found[0]}:{found[1]}" if found else ""
    head = (f"compiled function '{function_name}' reported a run-time error (code {code}) in op "
            f"{{{{node {optable.lookup(op.name).tf_name}}}}}{where}; details:")
    parts = [head]
    for i in range(DETAIL_LEN):
        parts += [" ", i]
    return parts


def _run(argv, what):
    try:
        proc = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise CompileError(f"{what} failed: cannot run {argv[0]}: {e}") from None
    if proc.returncode != 0:
        raise CompileError(f"{what} failed:\n{proc.stderr.strip()}")
