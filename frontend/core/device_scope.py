"""Device placement as TF's: `tfn.device(name)` scopes, device names, soft placement.

`with tfn.device("/GPU:0"):` places what runs inside it: a tfn.function called there is traced and compiled for
that device (as is one made with `tfn.function(..., jit_device="GPU:0")` wherever it is called), and
`tfn.identity(x)` copies x there. Eager ops run by NumPy kernels on the host CPU, so under a GPU scope they are
placed on the CPU (their GPU inputs copied back) — soft placement, on by default as in TF. With
`tfn.config.set_soft_device_placement(False)` a device that does not exist, or an eager op placed on a GPU, is an
InvalidArgumentError naming the device.

Scopes are per thread (TF's): `_STATE.stack` holds (kind, index) per open scope, None for `tfn.device(None)`.
"""
import re
import threading

from tfn.dialects.errors import InvalidArgumentError
from tfn.runtime import devices

_STATE = threading.local()
_OPEN_LOCK = threading.Lock()
OPEN = [0]  # scopes open in any thread: 0 lets every call skip looking at its thread's scope
SOFT = [True]  # soft device placement (tfn.config.set_soft_device_placement)
_KINDS = ("CPU", "GPU", "TPU")
_PART = r"^(?:device:|physical_device:)?([A-Za-z_]+)(?::(\d+|\*))?$"  # (compiled on first use, by re's cache)


def parse(name):
    """(kind, index) of a device name such as '/GPU:0', 'gpu:1', '/device:CPU:0',
    '/job:localhost/replica:0/task:0/device:GPU:0'; None for '' or None (no device). ValueError if malformed."""
    if name is None:
        return None
    if isinstance(name, devices.Device):
        return (name.kind, name.index)
    if isinstance(name, tuple) and len(name) == 2 and name[0] in _KINDS and isinstance(name[1], int):
        return name  # already parsed
    if not isinstance(name, str):
        raise TypeError(f"a device name must be a string, got {type(name).__name__}: {name!r}")
    found = None
    for part in [p for p in name.strip().split("/") if p]:
        key = part.split(":", 1)[0].lower()
        if key in ("job", "replica", "task"):
            if key == "job" and part != "job:localhost" or key != "job" and part not in (f"{key}:0",):
                raise ValueError(f"Unknown device {part!r} in {name!r}: only /job:localhost/replica:0/task:0 "
                                 "exists (one process)")
            continue
        m = re.match(_PART, part)
        if m is None or m.group(1).upper() not in _KINDS or found is not None:
            raise ValueError(f"Unknown attribute: '{part}' in '{name}'")
        index = m.group(2)
        found = (m.group(1).upper(), 0 if index in (None, "*") else int(index))
    return found


def full_name(spec):
    kind, index = spec
    return f"/job:localhost/replica:0/task:0/device:{kind}:{index}"


class device:
    """`with tfn.device("/GPU:0"):` — TF's device scope (see the module's docstring); `tfn.device(None)` clears."""

    def __init__(self, device_name):
        self._spec = parse(device_name)
        self.name = device_name

    def __enter__(self):
        _stack().append(self._spec)
        with _OPEN_LOCK:
            OPEN[0] += 1
        return self

    def __exit__(self, *exc):
        _stack().pop()
        with _OPEN_LOCK:
            OPEN[0] -= 1
        return False


def _stack():
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    return stack


def current():
    """The (kind, index) of this thread's innermost device scope, or None."""
    if not OPEN[0]:
        return None
    stack = getattr(_STATE, "stack", None)
    return stack[-1] if stack else None


def resolve(spec, what):
    """The visible device `spec` ((kind, index)) names; if it does not exist: the CPU under soft placement, else
    InvalidArgumentError (TF's message) naming it and `what` (the op or function placed)."""
    found = devices.find(*spec)
    if found is not None:
        return found
    if SOFT[0]:
        return devices.HOST_CPU
    visible = devices.devices()
    kinds = ", ".join(dict.fromkeys(d.kind for d in visible))
    why = f" ({devices.why_no_gpu()})" if spec[0] == "GPU" else ""
    raise InvalidArgumentError(
        f"Could not satisfy device specification '{full_name(spec)}'. enable_soft_placement=0. Supported device "
        f"types [{kinds}]. All available devices [{', '.join(d.name for d in visible)}].{why} [{what}]")


def eager_op_device(opdef):
    """Where an eager op runs under the current scope: always the host CPU (NumPy kernels); under hard placement a
    scope naming a GPU is an InvalidArgumentError."""
    spec = current()
    if spec is None or spec[0] == "CPU" or SOFT[0]:
        return
    resolve(spec, f"Op:{opdef.tf_name}")  # a missing device is named first
    raise InvalidArgumentError(
        f"Cannot assign a device for operation {opdef.tf_name}: Could not satisfy explicit device specification "
        f"'{full_name(spec)}' because no supported kernel for GPU devices is available: tfn runs eager ops with "
        f"NumPy on the CPU (place a tfn.function on the GPU instead, or enable soft placement) [Op:{opdef.tf_name}]")
