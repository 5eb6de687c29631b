"""The one place the `tfn` dialect is loaded into an MLIR context."""
import threading

from mlir import ir
from mlir.dialects import irdl

from tfn.dialects import irdl_gen, ops, types  # noqa: F401  (ops fills the table)

_lock = threading.Lock()
_shared = None
_irdl_modules = []  # each dialect definition must outlive its context's uses
# The upstream dialects whose ops tfn may build outside a pass pipeline (tracing builds func, scf, tensor; the
# rest are cheap neighbours). Building an op of a registered dialect that is not loaded aborts the process.
# Loading all ~50 registered dialects costs ~5 ms more, most of a new process's first call of a function the
# artifact cache holds; passes build ops of any dialect: passes/registry.pass_manager loads all first.
TFN_DIALECTS = ("builtin", "func", "arith", "cf", "scf", "tensor", "math", "memref", "index", "ub", "complex",
                "affine", "vector", "irdl")


def new_context(all_dialects=True):
    """A fresh MLIR context with the `tfn` dialect and every upstream dialect (or only TFN_DIALECTS) loaded."""
    ctx = ir.Context(load_on_create_dialects=[])
    if all_dialects:
        ctx.load_all_available_dialects()
    else:
        for name in TFN_DIALECTS:
            ctx.get_dialect_descriptor(name)  # loads it (ctx.dialects[name] also builds Python classes: slower)
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(irdl_gen.generate())
        irdl.load_dialects(module)
    _irdl_modules.append(module)
    return ctx


def shared_context():
    """The process-wide context used for tracing and compiling."""
    global _shared
    if _shared is None:
        with _lock:
            if _shared is None:
                ctx = new_context(all_dialects=False)
                types.keep_types_in(ctx)
                _shared = ctx
    return _shared


def is_shared(ctx):
    """Whether `ctx` is the shared context (never creates it)."""
    return ctx is not None and ctx is _shared
