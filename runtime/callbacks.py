"""The Python side of run-time callbacks (the contract: dialects/abi.py) and the per-call string table.

Compiled code calls one ctypes function, `_dispatch(site, args)`, whose address the runtime stores in each
loaded shared object's `tfn_callback_fn`. A call of an executable that has callbacks or string tensors runs
inside a `Frame` (a thread-local stack, so a py_function may call other tfn.functions): the frame holds the
function's handlers, the strings its handles name, the results waiting for phase 1, and the first exception a
handler raised — the dispatcher never lets an exception escape into C; later sites are skipped and the call
raises it when the compiled code returns.
"""
import ctypes
import threading

import numpy as np

from tfn.dialects.abi import (
    BUILTIN_STRING_CONCAT,
    BUILTIN_STRING_CONSTANT,
    BUILTIN_STRING_EQUAL,
    BUILTIN_STRING_NOT_EQUAL,
    CALLBACK_FN,
    CALLBACK_HEADER,
    DTYPES,
)
from tfn.dialects.errors import InvalidArgumentError

_state = threading.local()
_I64 = ctypes.c_int64


class Frame:
    """One call of an executable: its handlers, string table, pending results and first error."""

    __slots__ = ("handlers", "strings", "pending", "error")

    def __init__(self, handlers):
        self.handlers = handlers
        self.strings = []
        self.pending = {}
        self.error = None

    def handles(self, arr):
        """An int64 array of new handles naming the bytes of an object array (handle 0 is b"")."""
        flat = [v if isinstance(v, bytes) else str(v).encode() for v in np.asarray(arr, dtype=object).ravel()]
        start = len(self.strings) + 1
        self.strings.extend(flat)
        return np.arange(start, start + len(flat), dtype=np.int64).reshape(np.shape(arr))

    def values(self, handles):
        """The object array of bytes that an int64 array of handles names."""
        table = self.strings
        n = len(table)
        flat = [table[h - 1] if 0 < h <= n else b"" for h in handles.ravel().tolist()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(handles.shape)


def _frames():
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def _string_concat(arrays):
    return [np.asarray(np.frompyfunc(lambda a, b: a + b, 2, 1)(*arrays), dtype=object)]


def _string_constant(arrays):
    data, offsets = arrays[0].tobytes(), arrays[1].tolist()
    out = np.empty(len(offsets) - 1, dtype=object)
    out[:] = [data[a:b] for a, b in zip(offsets, offsets[1:])]
    return [out]


BUILTINS = {
    BUILTIN_STRING_CONSTANT: _string_constant,
    BUILTIN_STRING_CONCAT: _string_concat,
    BUILTIN_STRING_EQUAL: lambda arrays: [np.asarray(arrays[0] == arrays[1], dtype=np.bool_)],
    BUILTIN_STRING_NOT_EQUAL: lambda arrays: [np.asarray(arrays[0] != arrays[1], dtype=np.bool_)],
}


def _storage(dtype):
    """The NumPy type of a dtype's elements in compiled code's buffers."""
    if dtype.is_string:
        return np.dtype(np.int64)
    if dtype.is_bool:
        return np.dtype(np.int8)
    return dtype.np


def _layout(args):
    """(n_in, phase, entries): per operand then result (position, dtype, rank) in the array at `args`."""
    head = (_I64 * CALLBACK_HEADER).from_address(args)
    n_in, n_out, phase = head
    entries, pos = [], CALLBACK_HEADER
    for _ in range(n_in + n_out):
        code, rank = (_I64 * 2).from_address(args + 8 * pos)
        entries.append((pos, DTYPES[code], rank))
        pos += 3 + rank
    return n_in, phase, entries, (_I64 * pos).from_address(args)


def _read(frame, words, pos, dtype, rank):
    ptr, shape = words[pos + 2], tuple(words[pos + 3:pos + 3 + rank])
    store = _storage(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    buf = (ctypes.c_char * (n * store.itemsize)).from_address(ptr) if n else b""
    arr = np.frombuffer(buf, store).reshape(shape).copy()
    if dtype.is_string:
        return frame.values(arr)
    return arr.view(np.bool_) if dtype.is_bool else arr


def _check_result(value, dtype, rank, declared, index):
    """A handler's result as an array of `dtype` whose shape fits the declared dims (-1: any)."""
    arr = np.asarray(value, dtype=object if dtype.is_string else dtype.np)
    if arr.ndim != rank or any(d != -1 and d != s for d, s in zip(declared, arr.shape)):
        want = "(" + ", ".join("None" if d == -1 else str(d) for d in declared) + ("," if rank == 1 else "") + ")"
        raise InvalidArgumentError(
            f"result #{index} of the Python function has shape {arr.shape}, but the trace expects shape {want}; "
            "give Tout a tfn.TensorSpec with the shape to trace with")
    return arr


def _phase0(frame, site, entries, words, n_in):
    handler = BUILTINS[site] if site < 0 else frame.handlers[site]
    inputs = [_read(frame, words, pos, dt, rank) for pos, dt, rank in entries[:n_in]]
    outs = entries[n_in:]
    results = list(handler(inputs) or [])
    if len(results) != len(outs):
        raise InvalidArgumentError(f"the Python function returned {len(results)} values, expected {len(outs)}")
    checked = []
    for i, ((pos, dt, rank), value) in enumerate(zip(outs, results)):
        arr = _check_result(value, dt, rank, tuple(words[pos + 3:pos + 3 + rank]), i)
        words[pos + 3:pos + 3 + rank] = arr.shape
        checked.append(arr)
    if outs:
        frame.pending[site] = checked


def _phase1(frame, site, entries, words, n_in):
    results = frame.pending.pop(site, None)
    if results is None:
        return
    for (pos, dt, _), arr in zip(entries[n_in:], results):
        if dt.is_string:
            arr = frame.handles(arr)
        arr = np.ascontiguousarray(arr).view(_storage(dt)) if dt.is_bool else np.ascontiguousarray(arr)
        if arr.size:
            ctypes.memmove(words[pos + 2], arr.ctypes.data, arr.nbytes)


def _zero_results(entries, words, n_in, phase):
    """After an error: phase 0 makes every dynamic dim 0, phase 1 zero-fills the buffers compiled code made
    (it runs on to its end with deterministic values; the call then raises)."""
    for pos, dt, rank in entries[n_in:]:
        dims = words[pos + 3:pos + 3 + rank]
        if phase == 0:
            words[pos + 3:pos + 3 + rank] = [0 if d == -1 else d for d in dims]
        elif words[pos + 2]:
            ctypes.memset(words[pos + 2], 0, int(np.prod(dims, dtype=np.int64)) * _storage(dt).itemsize)


@ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
def _dispatch(site, args):
    stack = _frames()
    n_in, phase, entries, words = _layout(args)
    frame = stack[-1] if stack else None
    if frame is None or frame.error is not None:
        _zero_results(entries, words, n_in, phase)
        return 1
    try:
        (_phase1 if phase else _phase0)(frame, site, entries, words, n_in)
        return 0
    except BaseException as e:  # noqa: BLE001  (raised again by run() once the compiled code returns)
        frame.error = e
        frame.pending.clear()
        _zero_results(entries, words, n_in, phase)
        return 1


DISPATCH_ADDRESS = ctypes.cast(_dispatch, ctypes.c_void_p).value


def install(lib):
    """Point a loaded shared object's callback global at the dispatcher; False when it has no callbacks."""
    try:
        _I64.in_dll(lib, CALLBACK_FN).value = DISPATCH_ADDRESS
    except ValueError:
        return False
    return True


def run(invoke, arrays, *, handlers, string_inputs, string_outputs):
    """`invoke(arrays)` inside a new frame: string inputs become handles and string outputs bytes again."""
    frame = Frame(handlers)
    stack = _frames()
    stack.append(frame)
    try:
        arrays = list(arrays)
        for i in string_inputs:
            arrays[i] = frame.handles(arrays[i])
        try:
            outs = invoke(arrays)
        except InvalidArgumentError:
            if frame.error is None:
                raise
            outs = None
        if frame.error is not None:
            error, frame.error = frame.error, None
            raise error
        for i in string_outputs:
            outs[i] = frame.values(outs[i])
        return outs
    finally:
        stack.pop()
