"""The devices compiled code runs on, device buffers, and host<->device copies (every one explicit and counted).

Devices: the host CPU (`CPU:0`, always), each GPU the CUDA driver reports (`GPU:i`, runtime/cuda_driver.py) and,
where emulation is on (`TFN_GPU_EMULATE=1` or `set_gpu_emulation(True)`), one emulated `GPU:0` in place of any
real GPU: its functions are compiled by the GPU emulation pipeline into CPU loops over blocks and threads, and its
memory is modelled — buffers only it reads, filled and read back by counted copies — so placement, copies and the
kernels' mapping are tested on machines without a GPU.

A `DeviceBuffer` is one array in a device's memory; it is freed when the last reference to it goes. Every copy
between host and device goes through `to_device` / `DeviceBuffer.to_host`, which count copies and bytes in
`copy_stats()`; `memory_info(device)` gives the bytes a device holds now and at most.
"""
import os
import threading
import weakref

import numpy as np

from tfn.dialects.errors import NotFoundError
from tfn.dialects.frozen import Frozen
from tfn.runtime import cuda_driver

CPU, GPU = "CPU", "GPU"
HOST, CUDA, EMULATED = "host", "cuda", "emulated"
EMULATE_ENV = "TFN_GPU_EMULATE"
_EMULATE = [None]  # set_gpu_emulation's choice; None: the environment variable decides
_LOCK = threading.Lock()
_STATS = {"host_to_device": 0, "host_to_device_bytes": 0, "device_to_host": 0, "device_to_host_bytes": 0}
_MEMORY = {}  # device name -> [bytes in use, peak]


class Device(Frozen):
    """A device code runs on: kind CPU or GPU, its index, the backend that runs it (host, cuda, emulated)."""

    _fields = ("kind", "index", "backend", "description")

    def __init__(self, kind, index, backend, description=""):
        self._set(kind=kind, index=index, backend=backend, description=description)

    @property
    def name(self):
        """TF's full device name: '/job:localhost/replica:0/task:0/device:GPU:0'."""
        return f"/job:localhost/replica:0/task:0/device:{self.kind}:{self.index}"

    @property
    def short_name(self):
        return f"{self.kind}:{self.index}"

    @property
    def is_gpu(self):
        return self.kind == GPU


HOST_CPU = Device(CPU, 0, HOST, "the host CPU")


def gpu_emulation():
    """Whether the emulated GPU stands in for real ones: set_gpu_emulation's choice, else TFN_GPU_EMULATE=1."""
    if _EMULATE[0] is not None:
        return _EMULATE[0]
    return os.environ.get(EMULATE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def set_gpu_emulation(enabled):
    """Make one emulated GPU visible as GPU:0 (True), hide it (False), or let TFN_GPU_EMULATE decide (None)."""
    _EMULATE[0] = None if enabled is None else bool(enabled)


def devices(kind=None):
    """The visible devices, CPU first; `kind` ('CPU' or 'GPU') keeps those of that kind."""
    found = [HOST_CPU]
    if gpu_emulation():
        found.append(Device(GPU, 0, EMULATED, "an emulated GPU: kernels run as CPU loops over blocks and threads"))
    else:
        found += [Device(GPU, g.index, CUDA, f"{g.name}, compute capability {g.compute_capability[0]}."
                         f"{g.compute_capability[1]}") for g in cuda_driver.probe().gpus]
    return [d for d in found if kind is None or d.kind == kind]


def find(kind, index):
    """The visible device kind:index, or None."""
    return next((d for d in devices(kind) if d.index == index), None)


def why_no_gpu():
    """Why a GPU asked for is not there, for error messages: emulation, or what the CUDA driver reports."""
    if gpu_emulation():
        return f"GPU emulation ({EMULATE_ENV}) makes one emulated GPU:0 the only GPU"
    state = cuda_driver.probe()
    return state.reason or f"the CUDA driver reports {len(state.gpus)} GPU(s)"


# --- copies and their counts -------------------------------------------------------------------------------------

def copy_stats():
    """Host<->device copies since the start (or the last reset): counts and bytes each way."""
    with _LOCK:
        return dict(_STATS)


def reset_copy_stats():
    with _LOCK:
        for k in _STATS:
            _STATS[k] = 0


def _count(direction, nbytes):
    with _LOCK:
        _STATS[direction] += 1
        _STATS[direction + "_bytes"] += nbytes


def memory_info(device):
    """{'current': bytes of device memory held by live buffers, 'peak': the most held at once} (TF's)."""
    with _LOCK:
        current, peak = _MEMORY.get(device.name, (0, 0))
        return {"current": current, "peak": peak}


def reset_memory_stats(device):
    """Make the device's peak its current use (TF's reset_memory_stats)."""
    with _LOCK:
        used = _MEMORY.setdefault(device.name, [0, 0])
        used[1] = used[0]


def _hold(device, nbytes):
    with _LOCK:
        used = _MEMORY.setdefault(device.name, [0, 0])
        used[0] += nbytes
        used[1] = max(used[1], used[0])


def _release(name, nbytes):
    with _LOCK:
        _MEMORY[name][0] -= nbytes


class DeviceBuffer:
    """One array in a device's memory: `device`, `shape`, `dtype`, `nbytes`; `to_host()` copies it out (counted)."""

    __slots__ = ("device", "shape", "dtype", "nbytes", "__weakref__")

    def __init__(self, device, shape, dtype):
        self.device, self.shape, self.dtype = device, tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        _hold(device, self.nbytes)

    def to_host(self):
        """A new host array holding the buffer's value: one device-to-host copy."""
        _count("device_to_host", self.nbytes)
        return self._read()


class EmulatedBuffer(DeviceBuffer):
    """A buffer of the emulated GPU: a host array only compiled code and the copies touch."""

    __slots__ = ("array",)

    def __init__(self, device, array):
        super().__init__(device, array.shape, array.dtype)
        self.array = array
        weakref.finalize(self, _release, device.name, self.nbytes)

    def _read(self):
        return np.array(self.array, copy=True)


class CudaBuffer(DeviceBuffer):
    """A buffer in a CUDA GPU's memory at device pointer `ptr` (`aligned`: where its elements start)."""

    __slots__ = ("ptr", "aligned")

    def __init__(self, device, ptr, shape, dtype, aligned=None):
        super().__init__(device, shape, dtype)
        self.ptr, self.aligned = ptr, aligned if aligned is not None else ptr
        # Not at exit: the driver may be shutting down, and the process's device memory goes with it anyway.
        weakref.finalize(self, _free_cuda, device.name, ptr, self.nbytes).atexit = False

    def _read(self):
        out = np.empty(self.shape, self.dtype)
        cuda_driver.runtime().copy(out.ctypes.data, self.aligned, self.nbytes)
        return out


def _free_cuda(name, ptr, nbytes):
    cuda_driver.runtime().free(ptr)
    _release(name, nbytes)


def to_device(device, array):
    """A new buffer on GPU `device` holding `array`'s value: one host-to-device copy."""
    array = np.require(array, requirements="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    if device.backend == EMULATED:
        _count("host_to_device", array.nbytes)
        return EmulatedBuffer(device, np.array(array, copy=True, order="C"))
    if device.backend == CUDA:
        cuda = cuda_driver.runtime()
        cuda.select(device.index)
        ptr = cuda.alloc(array.nbytes)
        buf = CudaBuffer(device, ptr, array.shape, array.dtype)
        _count("host_to_device", array.nbytes)
        cuda.copy(ptr, array.ctypes.data, array.nbytes)
        return buf
    raise NotFoundError(f"{device.name} has no device memory: it is {device.description}")
