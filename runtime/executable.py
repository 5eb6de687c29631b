"""A loaded compiled function and its calling convention over memref descriptors.

The C interface `_mlir_ciface_<name>(results*, arg descriptors*...)` takes one ranked memref descriptor
per argument — {allocated, aligned, offset, sizes[r], strides[r]} — and fills a struct of result
descriptors. Inputs are passed without copying; each result is a fresh malloc that the NumPy array
wrapping it owns and frees exactly once.
"""
import ctypes
import shutil

import numpy as np

from tfn.dialects.errors import InvalidArgumentError
from tfn.passes.lowering.runtime_errors import DETAIL, DETAIL_LEN, FLAG

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None
_free = _libc.free
_GLOBAL_SENTINEL = 0xDEADBEEF  # memref.get_global's `allocated`: a constant, never freed
_DESCRIPTORS = {}


def descriptor_type(rank):
    """The ctypes struct of a rank-r memref descriptor."""
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


class _Owner:
    """Owns one malloc'ed result buffer; NumPy arrays viewing it keep it alive, the last frees it."""

    __slots__ = ("__array_interface__", "_ptr")

    def __init__(self, ptr, aligned, shape, dtype):
        self._ptr = ptr
        self.__array_interface__ = {"data": (aligned, False), "shape": shape, "typestr": dtype.str,
                                    "version": 3}

    def __del__(self):
        _free(self._ptr)


class Executable:
    """One compiled function: `__call__(arrays) -> list[np.ndarray]`."""

    def __init__(self, so_path, name, in_types, out_types, scratch=None, on_error=None):
        self.lib = ctypes.CDLL(so_path)
        # The run-time error channel (passes/lowering/runtime_errors.py); on_error(code, details) -> message.
        self._error_flag = _exported(self.lib, FLAG, ctypes.c_int32)
        self._error_detail = _exported(self.lib, DETAIL, ctypes.c_int64 * DETAIL_LEN)
        self._on_error = on_error
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)  # the loaded library stays mapped
        self.in_types = list(in_types)
        self.out_types = list(out_types)
        self._in_descs = [descriptor_type(t.rank)() for t in self.in_types]
        for d, t in zip(self._in_descs, self.in_types):
            if t.rank and t.is_static:
                _fill_shape(d, t.shape)
        self._dynamic = [not t.is_static for t in self.in_types]
        self._out_np = [t.dtype.np for t in self.out_types]
        if self.out_types:
            fields = [(f"r{i}", descriptor_type(t.rank)) for i, t in enumerate(self.out_types)]
            self._results = type("Results", (ctypes.Structure,), {"_fields_": fields})()
            addrs = [ctypes.addressof(self._results)]
        else:
            self._results = None
            addrs = []
        addrs += [ctypes.addressof(d) for d in self._in_descs]
        self._addrs = addrs
        fptr = ctypes.cast(getattr(self.lib, f"_mlir_ciface_{name}"), ctypes.c_void_p).value
        self._fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(addrs))(fptr)

    def __call__(self, arrays):
        inputs = {}
        for d, a, dyn in zip(self._in_descs, arrays, self._dynamic):
            p = a.__array_interface__["data"][0]
            d.allocated = p
            d.aligned = p
            if dyn:
                _fill_shape(d, a.shape)
            inputs[p] = a
        self._fn(*self._addrs)
        if self._error_flag is not None and self._error_flag.value:
            self._raise_error(inputs)
        return self._collect(inputs)

    def _raise_error(self, inputs):
        """Reset the error flag, free this call's results and raise the InvalidArgumentError its code names."""
        code, self._error_flag.value = self._error_flag.value, 0
        details = list(self._error_detail) if self._error_detail is not None else []
        self._collect(inputs)  # dropped: the owners free the buffers
        message = self._on_error(code, details) if self._on_error else f"run-time error (code {code})"
        raise InvalidArgumentError(message)

    def _collect(self, inputs):
        outs, owners = [], {}
        for i, npdt in enumerate(self._out_np):
            d = getattr(self._results, f"r{i}")
            shape = tuple(d.sizes) if hasattr(d, "sizes") else ()
            outs.append(self._wrap(d.allocated or 0, d.aligned or 0, d.offset, shape, np.dtype(npdt),
                                   inputs, owners))
        return outs

    @staticmethod
    def _wrap(allocated, aligned, offset, shape, dtype, inputs, owners):
        aligned += offset * dtype.itemsize
        n = int(np.prod(shape, dtype=np.int64))
        if allocated == _GLOBAL_SENTINEL or allocated in inputs or allocated in owners:
            # A constant, an input or an earlier result returned again: copy it, never free it twice.
            buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(aligned) if n else b""
            return np.frombuffer(buf, dtype).reshape(shape).copy()
        if n == 0 or allocated == 0:
            if allocated:
                owners[allocated] = None  # the same empty buffer may be returned again: free it once
                _free(allocated)
            return np.empty(shape, dtype)
        owner = owners[allocated] = _Owner(allocated, aligned, shape, dtype)
        return np.asarray(owner)


def _exported(lib, name, ctype):
    """The variable a loaded library exports as `name`, or None."""
    try:
        return ctype.in_dll(lib, name)
    except ValueError:
        return None


def _fill_shape(desc, shape):
    stride = 1
    for i in range(len(shape) - 1, -1, -1):
        desc.sizes[i] = shape[i]
        desc.strides[i] = stride
        stride *= max(shape[i], 1)
