"""TensorSpec: the type of a tensor argument, with unknown dimensions as None."""
from tfn import dtypes
from tfn.tensor_shape import TensorShape


class TensorSpec:
    """Describes a tensor: `TensorSpec(shape, dtype=tfn.float32, name=None)`."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, other):
        """Whether a tensor or spec fits this spec (same dtype, dims equal where this one is known)."""
        dims, other_dims = self._shape._dims, TensorShape(other.shape)._dims
        if self._dtype is not other.dtype:
            return False
        if dims is None:
            return True
        if other_dims is None or len(dims) != len(other_dims):
            return False
        return all(a is None or a == b for a, b in zip(dims, other_dims))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self._shape == other._shape and self._dtype is other._dtype
                and self._name == other._name)

    def __hash__(self):
        return hash((self._shape, self._dtype.name, self._name))

    def __repr__(self):
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"
