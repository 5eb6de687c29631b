"""Element structures of datasets: nested TensorSpecs, and elements as flat tuples of NumPy arrays inside."""
import numpy as np

from tfn import dtypes, nest
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor
from tfn.core.tensor_spec import TensorSpec


def spec_of(value):
    """The element spec of a nested structure of tensors (TensorSpec of each leaf)."""
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), value)


def to_tensors(value):
    """A nested structure (tuples, dicts) with each leaf converted to a tensor; as in tf.data, a Python list is
    one tensor, not a structure."""
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, dict):
        return nest.mapping_like(type(value), [(k, to_tensors(value[k])) for k in nest.sorted_keys(value)])
    if isinstance(value, tuple):
        return nest.sequence_like(value, [to_tensors(v) for v in value])
    return convert_to_tensor(value)


class WindowSpec:
    """The spec of an element component that is itself a dataset (Dataset.window's), of elements `element_spec`;
    the component is held as that Dataset object, not as an array."""

    __slots__ = ("element_spec",)

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __eq__(self, other):
        return isinstance(other, WindowSpec) and repr(other.element_spec) == repr(self.element_spec)

    def __hash__(self):
        return hash(repr(self.element_spec))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"


def pack(spec, arrays):
    """The user's element: the spec's structure with a tfn.Tensor per array (a dataset component as it is)."""
    return nest.pack_sequence_as(spec, [a if isinstance(s, WindowSpec) else Tensor(a, s.dtype)
                                        for a, s in zip(arrays, nest.flatten(spec))])


def has_windows(spec):
    """Whether an element has dataset components (Dataset.window's)."""
    return any(isinstance(s, WindowSpec) for s in nest.flatten(spec))


def pack_like(spec, tensors):
    """The spec's structure holding the given (symbolic) tensors."""
    return nest.pack_sequence_as(spec, list(tensors))


def pack_numpy(spec, arrays):
    """As `as_numpy_iterator` yields elements: NumPy arrays, 0-d ones as NumPy scalars."""
    if has_windows(spec):
        raise TypeError(f"as_numpy_iterator() does not support datasets of datasets (element spec {spec!r}): "
                        "flat_map them into tensors first")
    return nest.pack_sequence_as(spec, [a[()] if a.ndim == 0 else a for a in arrays])


def flat_arrays(spec, value, what):
    """A user value (tensors, arrays, Python values) as the flat tuple of arrays of an element of `spec`; the
    spec's structure decides what is a leaf (a Python list there is one tensor)."""
    out = []
    _walk(spec, value, what, out)
    return tuple(out)


def _walk(spec, value, what, out):
    if isinstance(spec, TensorSpec):
        out.append(_array(value, spec, what))
        return
    if isinstance(spec, dict):
        if not isinstance(value, dict) or nest.sorted_keys(value) != nest.sorted_keys(spec):
            raise TypeError(f"{what} returned {value!r}, which does not match the element structure {spec!r}")
        for k in nest.sorted_keys(spec):
            _walk(spec[k], value[k], what, out)
        return
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        raise TypeError(f"{what} returned {value!r}, which does not match the element structure {spec!r}")
    for s, v in zip(spec, value):
        _walk(s, v, what, out)


def _array(value, spec, what):
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"{what} returned a symbolic tensor {value!r}; it must return eager values")
    arr = value._value if isinstance(value, Tensor) else np.asarray(value, dtype=spec.dtype.np)
    if arr.dtype != spec.dtype.np:
        if isinstance(value, Tensor):
            raise TypeError(f"{what} returned a {dtypes.as_dtype(arr.dtype).name} tensor where the element spec "
                            f"expects {spec.dtype.name}: {spec!r}")
        arr = arr.astype(spec.dtype.np)
    if not spec.is_compatible_with(TensorSpec(arr.shape, spec.dtype)):
        raise ValueError(f"{what} returned a value of shape {arr.shape}, which is incompatible with {spec!r}")
    return arr


def batched(spec, size):
    """The spec of a batch of elements of `spec` (leading dim `size`, None when unknown)."""
    return nest.map_structure(lambda s: TensorSpec([size] + list(s.shape) if s.shape.rank is not None else None,
                                                   s.dtype), spec)


def unbatched(spec, what):
    def one(s):
        if s.shape.rank == 0:
            raise ValueError(f"{what}: cannot unbatch an element with a scalar component: {s!r}")
        return TensorSpec(None if s.shape.rank is None else list(s.shape)[1:], s.dtype)
    return nest.map_structure(one, spec)


def as_args(element):
    """A map/filter function's arguments for an element: a tuple's items, otherwise the element itself."""
    return element if type(element) is tuple else (element,)
