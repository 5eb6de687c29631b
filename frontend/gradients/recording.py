"""The hook ops call when they run: the tapes recording now, and what each op hands them.

This module imports nothing of tfn, so `core.dispatch` and `state.variables` can import it: with no tape
active the whole cost of recording is one truth test of `ACTIVE` at each op.
"""
import threading

ACTIVE = []  # the GradientTapes recording now, on any thread (each checks that it is its own thread)
_local = threading.local()


def paused():
    """Whether recording is paused on this thread (inside stop_gradient/custom_gradient's forward)."""
    return getattr(_local, "paused", 0) > 0


class pause:
    """Run a block without recording on this thread's tapes; `reads` (a list) collects the variables it reads."""

    def __init__(self, reads=None):
        self._reads = reads

    def __enter__(self):
        _local.paused = getattr(_local, "paused", 0) + 1
        if self._reads is not None:
            _local.reads = getattr(_local, "reads", []) + [self._reads]

    def __exit__(self, *exc):
        _local.paused -= 1
        if self._reads is not None:
            _local.reads = _local.reads[:-1]
        return False


def tapes_here():
    """The tapes recording on this thread now (none while paused)."""
    return _tapes()


def _tapes():
    if paused():
        return ()
    me = threading.get_ident()
    return [t for t in ACTIVE if t._thread == me]


def record_op(opdef, inputs, attrs, outputs):
    """An op of the table ran: `outputs` (tensors) = opdef(inputs, attrs)."""
    for tape in _tapes():
        tape._record_op(opdef, inputs, attrs, outputs)


def record_read(variable, tensor):
    """A variable was read: `tensor` is its value at this point of the program."""
    logs = getattr(_local, "reads", None)
    if logs and paused():
        logs[-1].append(variable)
    for tape in _tapes():
        tape._record_read(variable, tensor)


def record_opaque(construct, inputs, outputs, where):
    """A construct without a gradient (control flow) made `outputs` from `inputs`; `where` = (file, line)."""
    for tape in _tapes():
        tape._record_opaque(construct, inputs, outputs, where)


def record_backward(inputs, outputs, backward, location=None):
    """A composite whose gradient is `backward(output_grads) -> input_grads` made `outputs` from `inputs`."""
    for tape in _tapes():
        tape._record(inputs, outputs, backward, location)


def recording(inputs):
    """The tapes on this thread that would record an op on `inputs` (some input is one they track)."""
    return [t for t in _tapes() if t._tracks_any(inputs)]
