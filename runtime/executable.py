"""A loaded compiled function and its calling convention over memref descriptors.

The C interface `_mlir_ciface_<name>(results*, arg descriptors*...)` takes one ranked memref descriptor
per argument — {allocated, aligned, offset, sizes[r], strides[r]} — and fills a struct of result
descriptors. Inputs are passed without copying; each result is a fresh malloc that the NumPy array
wrapping it owns and frees exactly once (with tfn_free when the buffer cache is loaded: runtime/buffer_cache.py).

Threads may call one Executable at once: each call builds its own descriptors, and the run-time error channel is
thread-local (passes/tfn_thread_local_errors.py): a call reads and resets its own thread's copy.
"""
import ctypes
import functools
import shutil
import threading

import numpy as np

from tfn.dialects.abi import DETAIL_LEN, ERROR_DETAIL, ERROR_FLAG, SLOT_FUNCTIONS
from tfn.dialects.errors import InvalidArgumentError, OpError
from tfn.runtime import async_runtime, buffer_cache, callbacks, fastcall, shared_allreduce, toolchain
from tfn.runtime.compiler import ASYNC_PREFIX

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None
_LIBC_FREE = _libc.free
_free = _LIBC_FREE  # becomes the buffer cache's tfn_free once that is loaded (_bind_allocator)
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


def load_library(so_path):
    """ctypes.CDLL(so_path), which binds every symbol at once. A library running kernels on worker threads leaves
    the async runtime's functions to the process (runtime/compiler.py): where they are missing, it is loaded
    (runtime/async_runtime.py) and the library again; a library without parallel kernels never loads it."""
    try:
        return ctypes.CDLL(so_path)
    except OSError as e:
        if f"undefined symbol: {ASYNC_PREFIX}" not in str(e) or async_runtime.loaded() is not None:
            raise
    async_runtime.load()
    return ctypes.CDLL(so_path)


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

    def __init__(self, so_path, name, in_types, out_types, scratch=None, on_error=None, handlers=None, source=None):
        toolchain.load_tls_runtime()  # binds the error channel's emulated TLS (a lean-linked .so leaves it open)
        self.lib = load_library(so_path)
        _bind_allocator(self.lib)
        # The file the code came from: its cache entry (so_path may be a link), or for quick code (runtime/tiering.py)
        # the scratch file it was built in, removed once loaded.
        self.source = source or so_path
        # Quick code whose optimised Executable is being built (runtime/tiering.py's Upgrade), or None.
        self.upgrade = None
        # The run-time error channel (dialects/abi.py): functions giving the calling thread's flag and details, or
        # None; on_error(code, details) -> message.
        self._slots = _slot_functions(self.lib)
        self._on_error = on_error
        self._adopting = threading.Lock()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)  # the loaded library stays mapped
        self.in_types = list(in_types)
        self.out_types = list(out_types)
        self._in_desc_types = [descriptor_type(t.rank) for t in self.in_types]
        self._out_np = [np.int64 if t.dtype.is_string else t.dtype.np for t in self.out_types]  # string handles
        fields = [(f"r{i}", descriptor_type(t.rank)) for i, t in enumerate(self.out_types)]
        self._results_type = type("Results", (ctypes.Structure,), {"_fields_": fields}) if fields else None
        n_args = len(self.in_types) + (1 if fields else 0)
        fptr = ctypes.cast(getattr(self.lib, f"_mlir_ciface_{name}"), ctypes.c_void_p).value
        self._fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(fptr)
        # The C trampoline when it could be built (runtime/fastcall.py); `call(values, positions=None)`.
        # Callbacks and string tensors: each call runs in a frame of runtime/callbacks.py, on the ctypes path.
        strings = [[i for i, t in enumerate(ts) if t.dtype.is_string] for ts in (self.in_types, self.out_types)]
        self.framed = callbacks.install(self.lib) or any(strings)
        if self.framed:
            self._call_ctypes = functools.partial(callbacks.run, self._call_ctypes, handlers=handlers or [],
                                                  string_inputs=strings[0], string_outputs=strings[1])
        self._name = name
        self.plan = None if self.framed else _make_plan(self.lib, name, self.in_types, self.out_types,
                                                        self._slots, self._plan_error)
        # No plan yet while the trampoline compiles in the background: switch to it once it is there.
        self._plan_pending = self.plan is None and not self.framed and not fastcall.settled()
        self.call = self.plan.call if self.plan is not None else self._call_values

    def __call__(self, arrays):
        if self._plan_pending:
            self._adopt_plan()
        if self.plan is not None:
            return self.plan.call(arrays)
        return self._call_ctypes(arrays)

    def _adopt_plan(self):
        """Make the C trampoline's plan if the extension has become available since this was loaded."""
        ext = fastcall.module()
        self._plan_pending = ext is None and not fastcall.settled()
        if ext is None:
            return
        with self._adopting:  # one plan, however many threads find the extension at once
            if self.plan is None:
                self.plan = _make_plan(self.lib, self._name, self.in_types, self.out_types, self._slots,
                                       self._plan_error)

    def _call_values(self, values, positions=None):
        """The ctypes path of `plan.call`: values are arrays or tensors, positions pick the inputs."""
        if self._plan_pending:
            self._adopt_plan()
        if self.plan is not None:
            return self.plan.call(values, positions)
        if positions is not None:
            values = [values[i] for i in positions]
        return self._call_ctypes([v if type(v) is np.ndarray else v._value for v in values])

    def _plan_error(self, code, details):
        """Called by the C trampoline after a call that reported an error (it freed the results itself): raise."""
        self._raise_error(code, details)

    def _call_ctypes(self, arrays):
        """One call on the ctypes path; its descriptors are its own (other threads may be calling too)."""
        inputs, descs = {}, []
        for desc_type, a in zip(self._in_desc_types, arrays):
            d = desc_type()
            p = a.__array_interface__["data"][0]
            d.allocated = p
            d.aligned = p
            if a.ndim:
                _fill_shape(d, a.shape)
            descs.append(d)
            inputs[p] = a
        results = self._results_type() if self._results_type is not None else None
        addrs = [ctypes.addressof(d) for d in ([results] if results is not None else []) + descs]
        if self._slots is None:
            self._fn(*addrs)
            return self._collect(inputs, results)
        # This thread's error channel (the foreign calls below run on it); a call nested in another call of this
        # thread (from a py_function) leaves the outer call's channel as it found it.
        flag = ctypes.c_int32.from_address(self._slots[0]())
        detail = (ctypes.c_int64 * DETAIL_LEN).from_address(self._slots[1]())
        saved = flag.value, list(detail)
        flag.value = 0
        self._fn(*addrs)
        code, details = flag.value, list(detail)
        flag.value, detail[:] = saved
        if code:
            self._drop(inputs, results)
            self._raise_error(code, details)
        return self._collect(inputs, results)

    def _drop(self, inputs, results):
        """Free this call's result buffers without reading them (a failed call's results may be zeroed)."""
        owners = set()
        for i in range(len(self._out_np)):
            d = getattr(results, f"r{i}")
            if d.allocated and d.allocated != _GLOBAL_SENTINEL and d.allocated not in inputs and \
                    d.allocated not in owners:
                owners.add(d.allocated)
                _free(d.allocated)

    def _raise_error(self, code, details):
        """Raise the InvalidArgumentError (or the OpError) that error `code` with `details` names."""
        message = self._on_error(code, details) if self._on_error else f"run-time error (code {code})"
        raise message if isinstance(message, OpError) else InvalidArgumentError(message)

    def _collect(self, inputs, results):
        outs, owners = [], {}
        for i, npdt in enumerate(self._out_np):
            d = getattr(results, f"r{i}")
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


def _bind_allocator(lib):
    """Point the loaded code's allocation hooks (passes/tfn_cache_large_buffers.py) at the buffer cache when it is
    available (and its shared-memory all-reduce hooks at runtime/shared_allreduce.py's functions while that is on),
    and free results with its tfn_free from then on. Either free is right for any result: tfn_free takes
    every malloc block."""
    global _free
    found = buffer_cache.hooks() if fastcall.module() is not None else None
    if found is None:
        return
    if _free is _LIBC_FREE:
        _free = buffer_cache.free_function()
    bound = dict(zip(("tfn_malloc_hook", "tfn_free_hook"), found))
    bound.update(shared_allreduce.hooks())  # a distributed job on one machine: runtime/shared_allreduce.py
    for name, address in bound.items():
        try:
            ctypes.c_void_p.in_dll(lib, name).value = address
        except ValueError:  # the code never calls it
            pass


def _make_plan(lib, name, in_types, out_types, slots, on_error):
    """The C trampoline's Plan for this library's function, or None (no extension: the ctypes path)."""
    ext = fastcall.module()
    if ext is None:
        return None
    try:  # the packed wrapper `void f(void **args)` ExecutionEngine generates for each function
        packed = ctypes.cast(getattr(lib, f"_mlir__mlir_ciface_{name}"), ctypes.c_void_p).value
    except AttributeError:
        return None
    flag_slot, detail_slot = (ctypes.cast(f, ctypes.c_void_p).value for f in slots) if slots else (0, 0)
    ins = tuple((t.dtype.np, tuple(-1 if d is None else d for d in t.shape)) for t in in_types)
    outs = tuple((t.dtype.np, t.rank) for t in out_types)
    return ext.Plan(packed, ins, outs, flag_slot, detail_slot, DETAIL_LEN, on_error)


def _slot_functions(lib):
    """(flag slot, detail slot): the library's functions giving the calling thread's error channel, or None."""
    try:
        found = tuple(getattr(lib, SLOT_FUNCTIONS[name]) for name in (ERROR_FLAG, ERROR_DETAIL))
    except AttributeError:
        return None
    for f in found:
        f.restype, f.argtypes = ctypes.c_void_p, []
    return found


def _fill_shape(desc, shape):
    stride = 1
    for i in range(len(shape) - 1, -1, -1):
        desc.sizes[i] = shape[i]
        desc.strides[i] = stride
        stride *= max(shape[i], 1)
