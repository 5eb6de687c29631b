"""`tfn.config`: run tfn.functions eagerly (for debugging), ask whether code runs eagerly, see the target CPU, turn
tiered compilation on or off and wait for optimised code, list devices and set soft placement;
`tfn.config.experimental`: GPU memory, device details, host<->device copy counts."""
import collections
import types

from tfn import runtime
from tfn.core import device_scope
from tfn.core import graph as graph_mod
from tfn.runtime import cuda_driver, devices, tiering

# The public surface (what `dir(tfn.config)` lists); the rest are this module's helpers and imports.
__all__ = ["LogicalDevice", "PhysicalDevice", "executing_eagerly", "experimental", "functions_run_eagerly",
           "get_soft_device_placement", "get_target", "get_tiered_compilation", "list_logical_devices",
           "list_physical_devices", "run_functions_eagerly", "set_soft_device_placement", "set_tiered_compilation",
           "wait_for_optimized_code"]

_RUN_EAGERLY = [False]


def run_functions_eagerly(run_eagerly):
    """Make every tfn.function run its Python function eagerly instead of tracing (`True`), or not."""
    _RUN_EAGERLY[0] = bool(run_eagerly)


def functions_run_eagerly():
    """Whether tfn.functions currently run eagerly (set by `run_functions_eagerly`)."""
    return _RUN_EAGERLY[0]


def executing_eagerly():
    """False while a tfn.function is being traced on this thread, True otherwise."""
    return graph_mod.current() is None


def get_target():
    """The CPU target compiled code is generated for: ISA, vector width, cores, caches (`.describe()` says it in
    one line). Detected from the host once; TFN_TARGET_FEATURES (`native`, `avx512`, `avx2`, `sse`, `neon`) picks
    a lower instruction-set level, read when code is compiled."""
    return runtime.current_target()


def set_tiered_compilation(enabled):
    """Tiered compilation (on by default; TFN_TIERED_COMPILATION=0 turns it off): the first call of a big function
    runs quickly generated code at once while its optimised code is built in a background process; later calls run
    the optimised code once it is in place, and the artifact cache stores only that. Off, the first call waits for
    the optimised code. `None` returns to the environment variable's choice. Affects functions compiled later."""
    tiering.set_enabled(enabled)


def get_tiered_compilation():
    """Whether tiered compilation is on (see set_tiered_compilation)."""
    return tiering.enabled()


def wait_for_optimized_code(timeout=None):
    """Wait until the optimised code of every function that started on quick code is in place (for benchmarks and
    tests: steady-state timings then measure it). Returns False if `timeout` seconds passed first; raises the
    InternalError of an optimised build that failed (its function keeps running its quick code, with the same
    results)."""
    return tiering.wait(timeout)


# --- devices (core/device_scope.py places ops and functions; runtime/devices.py holds devices and copies) --------

class PhysicalDevice(collections.namedtuple("PhysicalDevice", ["name", "device_type"])):
    """A device of this machine, as TF's `tf.config.PhysicalDevice`."""


class LogicalDevice(collections.namedtuple("LogicalDevice", ["name", "device_type"])):
    """A device ops can be placed on, as TF's `tf.config.LogicalDevice`."""


def list_physical_devices(device_type=None):
    """The machine's devices ('CPU', 'GPU' or None for all), as TF: `[PhysicalDevice(name='/physical_device:CPU:0',
    device_type='CPU')]` on a machine without a GPU. GPUs are those the CUDA driver reports (none where
    libcuda.so.1 is missing), or one emulated GPU where TFN_GPU_EMULATE=1 (`experimental.set_gpu_emulation`)."""
    return [PhysicalDevice(f"/physical_device:{d.short_name}", d.kind) for d in _devices(device_type)]


def list_logical_devices(device_type=None):
    """The devices ops and functions can be placed on, as TF: `[LogicalDevice(name='/device:CPU:0', ...)]`."""
    return [LogicalDevice(f"/device:{d.short_name}", d.kind) for d in _devices(device_type)]


def _devices(device_type):
    kind = None if device_type is None else str(device_type).upper()
    return devices.devices(kind)


def set_soft_device_placement(enabled):
    """Soft placement (on by default, TF's): an op or function placed on a device that does not exist, or an eager
    op placed on a GPU (tfn's eager kernels are NumPy), runs on the CPU; off, either is an InvalidArgumentError."""
    device_scope.SOFT[0] = bool(enabled)


def get_soft_device_placement():
    """Whether soft device placement is on."""
    return device_scope.SOFT[0]


def _device_of(device):
    """The visible runtime Device a name such as 'GPU:0' (or a PhysicalDevice / LogicalDevice) names, or ValueError
    (TF's get_memory_info)."""
    spec = device_scope.parse(device.name if isinstance(device, (PhysicalDevice, LogicalDevice)) else device)
    found = devices.find(*spec) if spec is not None else None
    if found is None:
        raise ValueError(f"No matching devices found for '{device}'")
    return found


def _get_memory_info(device):
    """{'current': bytes of the device's memory tfn holds now, 'peak': the most it held} (TF's; GPUs only)."""
    found = _device_of(device)
    if not found.is_gpu:
        raise ValueError(f"get_memory_info is not supported for {found.short_name}: tfn tracks GPU memory only")
    return devices.memory_info(found)


def _reset_memory_stats(device):
    """Make a GPU's peak memory its current use (TF's)."""
    found = _device_of(device)
    if not found.is_gpu:
        raise ValueError(f"reset_memory_stats is not supported for {found.short_name}: tfn tracks GPU memory only")
    devices.reset_memory_stats(found)


def _get_device_details(device):
    """{'device_name': ..., 'compute_capability': (major, minor)} of a GPU (TF's); {} for the CPU."""
    found = _device_of(device)
    if not found.is_gpu or found.backend != devices.CUDA:
        return {"device_name": found.description} if found.is_gpu else {}
    gpu = cuda_driver.probe().gpus[found.index]
    return {"device_name": gpu.name, "compute_capability": gpu.compute_capability}


def _get_device_copy_stats():
    """Host<->device copies since the start or the last reset (tfn's counter): `{'host_to_device': n,
    'host_to_device_bytes': b, 'device_to_host': n, 'device_to_host_bytes': b}`. Every copy the runtime makes —
    a function's host input sent to its GPU, `.numpy()` of a GPU tensor, `tfn.identity` under a GPU scope — counts
    once; tensors already on the function's device are used where they are."""
    return devices.copy_stats()


experimental = types.SimpleNamespace(
    get_memory_info=_get_memory_info,
    reset_memory_stats=_reset_memory_stats,
    get_device_details=_get_device_details,
    get_device_copy_stats=_get_device_copy_stats,
    reset_device_copy_stats=devices.reset_copy_stats,
    set_gpu_emulation=devices.set_gpu_emulation,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
)


def __dir__():
    return list(__all__)
