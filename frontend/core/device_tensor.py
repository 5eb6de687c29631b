"""Eager tensors whose value lives in a GPU's memory.

A DeviceTensor holds a runtime DeviceBuffer (runtime/devices.py): the result of a tfn.function placed on a GPU, or
`tfn.identity(x)` under `tfn.device("/GPU:0")`. Passed to another function placed on the same device it is used
where it is; anything that needs the value on the host — `.numpy()`, printing, an eager op, a CPU function — reads
`_value`, which copies it out once (a counted device-to-host copy) and keeps that host copy.
"""
import numpy as np

from tfn.core.tensor import Tensor
from tfn.dtypes import as_dtype
from tfn.runtime import devices

_HOST = Tensor._value  # the slot holding the host copy, once made


class DeviceTensor(Tensor):
    """An eager tensor on a GPU (`t.device` names it); its host value is copied out on first use."""

    __slots__ = ("_buffer",)

    def __init__(self, buffer, dtype):
        self._buffer = buffer
        self._dtype = dtype
        self._shape = buffer.shape

    @property
    def _value(self):
        try:
            return _HOST.__get__(self)
        except AttributeError:  # on the device only: copy it out (counted) and keep the copy
            value = self._buffer.to_host()
            value.flags.writeable = False
            _HOST.__set__(self, value)
            return value

    @property
    def device(self):
        return self._buffer.device.name

    backing_device = device

    @property
    def on_host(self):
        """Whether the value has been copied to the host already."""
        try:
            _HOST.__get__(self)
            return True
        except AttributeError:
            return False

    def _as_tensor(self, dtype=None):
        if dtype is not None and as_dtype(dtype) is not self._dtype:
            raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} for Tensor with dtype "
                             f"{self._dtype.name} on {self.device}")
        return self

    def __reduce__(self):
        return (Tensor, (np.array(self._value), self._dtype.name))


def copy_to(tensor, device):
    """`tensor` on GPU `device` (a runtime Device): itself if it is there, else one counted copy (through the
    host if it is on another GPU)."""
    if isinstance(tensor, DeviceTensor) and tensor._buffer.device == device:
        return DeviceTensor(tensor._buffer, tensor._dtype)
    return DeviceTensor(devices.to_device(device, tensor._value), tensor._dtype)
