"""The one place the `tfn` dialect is loaded into an MLIR context."""
import threading

from mlir import ir
from mlir.dialects import irdl

from tfn.dialects import irdl_gen, ops  # noqa: F401  (ops fills the table)

_lock = threading.Lock()
_shared = None
_irdl_modules = []  # each dialect definition must outlive its context's uses


def new_context():
    """A fresh MLIR context with every upstream dialect and the `tfn` dialect loaded."""
    ctx = ir.Context()
    ctx.load_all_available_dialects()
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
                _shared = new_context()
    return _shared
