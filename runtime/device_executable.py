"""A compiled function that runs on a GPU: device buffers in, device buffers out.

Inputs already in the function's device memory are passed as they are; any other input (a host array, or a
buffer of another device) is copied there first, each copy counted (runtime/devices.py). Results stay in device
memory as DeviceBuffers until the caller copies them out.

- The emulated GPU: the function was compiled by the GPU emulation pipeline into CPU code (an ordinary
  Executable); its buffers are host arrays only this code and the counted copies touch.
- A CUDA GPU: the host code of the compiled function (gpu-to-llvm) takes memref descriptors of device memory,
  launches the kernels through libmlir_cuda_runtime.so and returns results it allocated with `gpu.alloc`.
"""
import _ctypes
import atexit
import ctypes
import os

import numpy as np

from tfn.dialects.errors import FailedPreconditionError, InvalidArgumentError
from tfn.runtime import cuda_driver, devices
from tfn.runtime.executable import descriptor_type


class DeviceExecutable:
    """`__call__(values) -> list[DeviceBuffer]`; values are DeviceBuffers or host arrays."""

    def __init__(self, device, in_types, out_types, executable=None, so_path=None, symbol=None):
        self.device = device
        self.in_types, self.out_types = list(in_types), list(out_types)
        self._exe = executable  # the emulated GPU's CPU code
        self.source = executable.source if executable is not None else so_path
        if device.backend == devices.CUDA:
            self._cuda = _CudaCall(so_path, symbol, self.in_types, self.out_types)

    def __call__(self, values):
        bufs = [self.on_device(v, i) for i, v in enumerate(values)]
        if self.device.backend == devices.EMULATED:
            outs = self._exe([b.array for b in bufs])
            return [devices.EmulatedBuffer(self.device, a) for a in outs]
        return self._cuda(self.device, bufs)

    def on_device(self, value, i):
        """Input i in this device's memory: a buffer already there as it is, anything else copied (counted)."""
        if isinstance(value, devices.DeviceBuffer):
            if value.device == self.device:
                self._check(value.dtype, value.shape, i)
                return value
            value = value.to_host()
        value = np.asarray(value)
        self._check(value.dtype, value.shape, i)
        return devices.to_device(self.device, value)

    def _check(self, dtype, shape, i):
        t = self.in_types[i]
        if np.dtype(dtype) != np.dtype(t.dtype.np) or len(shape) != t.rank or any(
                d is not None and d != s for d, s in zip(t.shape, shape)):
            raise InvalidArgumentError(f"input {i}: expected a {t.dtype.name} tensor of shape {list(t.shape)}, got "
                                       f"{np.dtype(dtype).name} of shape {list(shape)}")


# The compiled GPU libraries this process loaded (paths), closed at interpreter exit (_close_libraries).
_LIBRARIES = set()
_EXITING = []


def _close_libraries():
    """Unload the compiled GPU libraries while the CUDA driver still runs: unloading one runs its destructor, which
    unloads its kernels' module (mgpuModuleUnload). Left to the C library's exit, the destructors would run after
    the driver's own teardown and each would print "'cuModuleUnload(module)' failed". Every handle on a library is
    closed (each _CudaCall of it opened one): while RTLD_NOLOAD still finds it loaded."""
    _EXITING.append(True)
    for path in _LIBRARIES:
        for _ in range(64):
            try:
                handle = _ctypes.dlopen(path, os.RTLD_NOW | os.RTLD_NOLOAD)
            except OSError:
                break  # unloaded
            _ctypes.dlclose(handle)  # the reference RTLD_NOLOAD took
            _ctypes.dlclose(handle)  # one of the others


class _CudaCall:
    """The C interface of a compiled GPU function over memref descriptors of device memory."""

    def __init__(self, so_path, symbol, in_types, out_types):
        cuda_driver.runtime()  # mgpu* and the driver in the global scope before the library binds to them
        self.lib = ctypes.CDLL(so_path)
        if not _LIBRARIES:
            atexit.register(_close_libraries)  # runs before the C library's exit handlers (the driver's teardown)
        _LIBRARIES.add(so_path)
        self.in_desc = [descriptor_type(t.rank) for t in in_types]
        self.out_np = [np.dtype(t.dtype.np) for t in out_types]
        fields = [(f"r{i}", descriptor_type(t.rank)) for i, t in enumerate(out_types)]
        self.results_type = type("Results", (ctypes.Structure,), {"_fields_": fields}) if fields else None
        n = len(in_types) + (1 if fields else 0)
        fptr = ctypes.cast(getattr(self.lib, f"_mlir_ciface_{symbol}"), ctypes.c_void_p).value
        self.fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n)(fptr)

    def __call__(self, device, bufs):
        if _EXITING:
            raise FailedPreconditionError("a GPU function was called after the interpreter began to exit (its "
                                          "compiled library is closed)")
        cuda = cuda_driver.runtime()
        cuda.select(device.index)
        descs = []
        for desc_type, b in zip(self.in_desc, bufs):
            d = desc_type()
            d.allocated, d.aligned, d.offset = b.ptr, b.aligned, 0
            stride = 1
            for j in range(len(b.shape) - 1, -1, -1):
                d.sizes[j], d.strides[j] = b.shape[j], stride
                stride *= max(b.shape[j], 1)
            descs.append(d)
        results = self.results_type() if self.results_type is not None else None
        self.fn(*[ctypes.addressof(d) for d in ([results] if results is not None else []) + descs])
        inputs, outs = {b.ptr for b in bufs}, []
        for i, dt in enumerate(self.out_np):
            d = getattr(results, f"r{i}")
            shape = tuple(d.sizes) if hasattr(d, "sizes") else ()
            aligned = d.aligned + d.offset * dt.itemsize
            if d.allocated in inputs or any(d.allocated == o.ptr for o in outs):
                # An input or an earlier result returned again: a buffer of its own (device to device).
                n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
                ptr = cuda.alloc(n)
                cuda.copy(ptr, aligned, n)
                outs.append(devices.CudaBuffer(device, ptr, shape, dt))
            else:
                outs.append(devices.CudaBuffer(device, d.allocated, shape, dt, aligned))
        return outs
