"""`Optional`: what `get_next_as_optional` returns (`tf.experimental.Optional`)."""
import numpy as np

from tfn.core.tensor import Tensor
from tfn.dialects.errors import OutOfRangeError


class Optional:
    """A value that may be absent (`tf.experimental.Optional`): `has_value()`, `get_value()`."""

    def __init__(self, value, element_spec, has=None):
        self._value = value
        self._spec = element_spec
        self._has = has

    @property
    def element_spec(self):
        return self._spec

    def has_value(self, name=None):
        if self._has is not None:
            return self._has
        return Tensor(np.bool_(self._value is not None))

    def get_value(self, name=None):
        if self._has is None and self._value is None:
            raise OutOfRangeError("The optional has no value")
        return self._value
