"""TensorShape: a shape whose dimensions may be unknown (None)."""
import operator


def _dim(value):
    """A dimension as TF's Dimension takes it: None, or an integer (2.5 was truncated to 2, 'a' a ValueError)."""
    if value is None:
        return None
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"Dimension value must be integer or None or have an __index__ method, got value "
                        f"'{value!r}' with type '{type(value)}'") from None
    if value < 0:
        raise ValueError(f"Dimension {value} must be >= 0")
    return value


class TensorShape:
    """The shape of a tensor, as `tf.TensorShape`."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        self._dims = None if dims is None else tuple(_dim(d) for d in dims)

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and None not in self._dims

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        return iter(self._dims)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return TensorShape(self._dims[i])
        return self._dims[i]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if isinstance(other, (list, tuple)):
            return self._dims == tuple(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"
