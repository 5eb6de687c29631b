"""`tfn.summary`: scalars, histograms, text and images for TensorBoard, in its event files
(frontend/summary/events.py), eagerly and from inside tfn.functions (the write is a run-time callback: it happens
when the function runs, with the values of that call).

As TF 2: `writer = tfn.summary.create_file_writer(logdir)`, then `with writer.as_default(): tfn.summary.scalar(
"loss", loss, step=step)`; the step defaults to `tfn.summary.experimental.set_step`'s; outside any default writer
(or under `record_if(False)`) a summary writes nothing and returns False.
"""
import contextlib
import threading
from types import SimpleNamespace

import numpy as np

from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor
from tfn.ops.py_function import py_function
from tfn.state.variables import Variable
from tfn.summary import events

_STATE = threading.local()
_STEP = [None]


def _writers():
    if not hasattr(_STATE, "writers"):
        _STATE.writers = []
    return _STATE.writers


class SummaryWriter:
    """Writes summaries into one event file of `logdir` (`tf.summary.SummaryWriter`)."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
        self._file = events.EventFile(logdir, filename_suffix or "")
        self.closed = False

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this the writer summaries go to inside the `with` (and `step` the default step there)."""
        _writers().append(self)
        previous = _STEP[0]
        if step is not None:
            _STEP[0] = step
        try:
            yield self
        finally:
            _writers().pop()
            if step is not None:
                _STEP[0] = previous
            self.flush()

    def set_as_default(self, step=None):
        _writers().append(self)
        if step is not None:
            _STEP[0] = step

    def write(self, summary_bytes, step):
        if self.closed:
            raise RuntimeError("The summary writer is closed")
        self._file.write(events.event(step, summary=summary_bytes))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()
        self.closed = True

    def init(self):
        """Nothing to do: the file is opened on the first write."""


class _NoopWriter:
    @contextlib.contextmanager
    def as_default(self, step=None):
        _writers().append(None)
        try:
            yield self
        finally:
            _writers().pop()

    def set_as_default(self, step=None):
        _writers().append(None)

    def flush(self):
        pass

    def close(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix, name)


def create_noop_writer():
    return _NoopWriter()


_RECORDING = [True]


@contextlib.contextmanager
def record_if(condition):
    """Summaries inside the `with` are written only when `condition` (a bool, or a callable giving one) holds."""
    previous = _RECORDING[0]
    _RECORDING[0] = condition
    try:
        yield
    finally:
        _RECORDING[0] = previous


def should_record_summaries():
    cond = _RECORDING[0]
    cond = cond() if callable(cond) else cond
    return bool(cond) and bool(_writers()) and _writers()[-1] is not None


def flush(writer=None, name=None):
    target = writer or (_writers()[-1] if _writers() else None)
    if target is not None:
        target.flush()


def _set_step(step):
    _STEP[0] = step


def _get_step():
    return _STEP[0]


experimental = SimpleNamespace(set_step=_set_step, get_step=_get_step)


def _write(kind, name, data, step, make):
    """Write one summary with the default writer: now eagerly, when the function runs inside one (a callback with
    the data and step of that call). Returns whether it was written (a bool tensor inside a function)."""
    if not should_record_summaries():
        return False
    writer = _writers()[-1]
    step = _STEP[0] if step is None else step
    if step is None:
        raise ValueError(f"tfn.summary.{kind}: no step was given and none is set: pass step= or call "
                         "tfn.summary.experimental.set_step()")
    if isinstance(step, Variable):
        step = step.value()
    data_t, step_t = convert_to_tensor(data), convert_to_tensor(step)
    if graph_mod.current() is not None and (isinstance(data_t, SymbolicTensor) or isinstance(step_t, SymbolicTensor)):
        def emit(values, at):
            writer.write(make(name, np.asarray(values.numpy())), int(at.numpy()))
            return np.bool_(True)
        return py_function(emit, [data_t, step_t], "bool")
    writer.write(make(name, np.asarray(data_t.numpy() if isinstance(data_t, TensorBase) else data_t)),
                 int(np.asarray(step_t.numpy())))
    return True


def scalar(name, data, step=None, description=None):
    """A scalar (its value as a float) under tag `name`."""
    def make(tag, value):
        if value.size != 1:
            raise ValueError(f"tfn.summary.scalar {tag!r}: data must be a scalar, got shape {list(value.shape)}")
        return events.scalar_value(tag, float(value.reshape(())))
    return _write("scalar", name, data, step, make)


def histogram(name, data, step=None, buckets=None, description=None):
    """The distribution of data's values in `buckets` (default 30) equal buckets."""
    return _write("histogram", name, data, step, lambda tag, v: events.histogram_value(tag, v, buckets or 30))


def text(name, data, step=None, description=None):
    def make(tag, value):
        item = value.reshape(-1)[0] if value.size else b""
        return events.text_value(tag, item if isinstance(item, bytes) else str(item).encode())
    return _write("text", name, data, step, make)


def image(name, data, step=None, max_outputs=3, description=None):
    """Images [k, height, width, channels] (floats in [0, 1] or uint8), the first max_outputs, each its own tag
    (`name/image/0`, ...), PNG encoded."""
    def make(tag, images):
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise ValueError(f"tfn.summary.image {tag!r}: data must be [k, h, w, 1|3|4], got {list(images.shape)}")
        if images.dtype != np.uint8:
            images = (np.clip(images, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        values = [events.image_value(f"{tag}/image/{i}" if len(images) > 1 else tag, im)
                  for i, im in enumerate(images[:max_outputs])]
        return b"".join(values)
    return _write("image", name, data, step, make)
