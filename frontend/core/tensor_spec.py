"""TensorSpec: the type of a tensor argument, with unknown dimensions as None."""
from tfn import dtypes
from tfn.core import graph_stack
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.types import TensorType
from tfn.tracing.trace import TraceType


class TensorSpec(TraceType):
    """Describes a tensor: `TensorSpec(shape, dtype=tfn.float32, name=None)`; the trace type of tensors."""

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

    def is_subtype_of(self, other):
        """Same dtype, and this shape is the other's or more specific (ranked < unranked, n < None); names aside."""
        return (type(other) is TensorSpec and self._dtype is other._dtype
                and shape_is_subtype(self._shape._dims, other._shape._dims))

    def most_specific_common_supertype(self, others):
        """The spec keeping the dims all agree on (unknown rank where ranks differ); None across dtypes."""
        if any(type(o) is not TensorSpec or o._dtype is not self._dtype for o in others):
            return None
        dims = self._shape._dims
        for o in others:
            dims = shape_supertype(dims, o._shape._dims)
        names = {self._name, *(o._name for o in others)}
        return TensorSpec(dims, self._dtype, self._name if len(names) == 1 else None)

    def placeholder_value(self, placeholder_context=None):
        """A new input of the graph being traced (`placeholder_context.graph`, else the current one)."""
        g = getattr(placeholder_context, "graph", None) or graph_stack.current()
        if g is None:
            raise ValueError(f"{self!r}.placeholder_value() needs a tfn.function trace in progress")
        if self._shape.rank is None:
            raise ValueError(f"{self!r} has an unknown rank: a graph input needs one")
        return g.add_input(TensorType(self._shape._dims, self._dtype), self._name or "placeholder")

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self._shape == other._shape and self._dtype is other._dtype
                and self._name == other._name)

    def __hash__(self):
        return hash((self._shape, self._dtype.name, self._name))

    def __repr__(self):
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"


def shape_is_subtype(a, b):
    """Whether dims `a` (None: unknown rank) fit dims `b`."""
    if b is None:
        return True
    return a is not None and len(a) == len(b) and all(d is None or c == d for c, d in zip(a, b))


def shape_supertype(a, b):
    """The most specific dims both `a` and `b` fit: unknown rank (None) where the ranks differ."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(c if c == d else None for c, d in zip(a, b))
