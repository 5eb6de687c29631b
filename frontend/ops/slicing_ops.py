"""Indexing: `tfn.gather`, Python's `x[...]` on tensors (the strided_slice op), and `tfn.slice` / `tfn.strided_slice`
spelling the same index as vectors.

`x[key]` accepts what TF accepts: ints (negative count from the end), slices with start/stop/step (negative
steps too), `...`, `None` (a new axis of size 1) and scalar int32/int64 tensors. An eager scalar tensor acts as
its int; a symbolic one (or a symbolic slice bound) becomes a run-time bound of the strided_slice op, checked
when the function runs. Slice steps must be known when the function is traced.
"""
import numpy as np

from tfn import dtypes
from tfn.core.api import export, op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.dialects import ops
from tfn.dialects.errors import InvalidArgumentError

_LIMIT = 2 ** 62  # Python ints beyond this are clamped: no dim is that large, and attributes are int64


def _static_int(value, what, op):
    """An int argument known at trace time (Python/NumPy int or an eager scalar tensor)."""
    value = known(value)
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"{op}: `{what}` must be known when the function is traced, but it is the symbolic "
                        f"tensor {value!r}")
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: `{what}` must be an int, got {value!r}")
    return int(value)


@op_api(ops.gather, exports=("gather",))
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Slices of `params` along `axis` at `indices` (int16/32/64, any shape); each index must be in
    [0, params.shape[axis]), else InvalidArgumentError (raised by the compiled function when it runs)."""
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    axis = 0 if axis is None else _static_int(axis, "axis", "GatherV2")
    batch_dims = _static_int(batch_dims, "batch_dims", "GatherV2")
    return apply("gather", [params, indices], {"axis": axis, "batch_dims": batch_dims})


def _bad_index(item):
    return TypeError("Only integers, slices (`:`), ellipsis (`...`), tfn.newaxis (`None`) and scalar "
                     f"tfn.int32/tfn.int64 tensors are valid indices, got {item!r}")


def _index(item):
    """An index item as an int, a symbolic int64 scalar tensor, or None if it is not an integer index."""
    if isinstance(item, (bool, np.bool_)):
        raise _bad_index(item)
    if isinstance(item, (int, np.integer)):
        return max(-_LIMIT, min(_LIMIT, int(item)))
    if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu":
        return _index(item[()])
    if isinstance(item, TensorBase):
        item = known(item)
        if item.ndim != 0 or item.dtype not in (dtypes.int32, dtypes.int64):
            raise _bad_index(item)
        if isinstance(item, Tensor):
            return _index(item.numpy())
        return item if item.dtype is dtypes.int64 else apply("cast", [item], {"dtype": dtypes.int64})
    return None


def _expand_ellipsis(items, rank):
    """The key with `...` (or the implicit trailing one) replaced by full slices."""
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > rank:
        raise InvalidArgumentError(f"Index out of range using input dim {rank}; input has only {rank} dims "
                                   "[Op:StridedSlice]")
    at = next((k for k, i in enumerate(items) if i is Ellipsis), None)  # (`in`/`index` would compare tensors)
    if at is None:
        return items + [slice(None)] * (rank - used)
    return items[:at] + [slice(None)] * (rank - used) + items[at + 1:]


class _Spec:
    """The strided_slice attributes and dynamic bounds built from a key, one input dim at a time."""

    def __init__(self):
        self.attrs = {k: [] for k in ("begin", "end", "strides", "begin_mask", "end_mask", "shrink_axis",
                                      "new_axis", "dynamic_begin", "dynamic_end")}
        self.begins, self.ends = [], []

    def bound(self, d, value, which):
        """Record slice bound `which` (begin/end) of dim d: omitted, static or a run-time tensor."""
        v = None if value is None else _index(value)
        if value is not None and v is None:
            raise _bad_index(value)
        self.attrs[which].append(v if isinstance(v, int) else 0)
        if v is None:
            self.attrs[which + "_mask"].append(d)
        elif not isinstance(v, int):
            self.attrs["dynamic_" + which].append(d)
            (self.begins if which == "begin" else self.ends).append(v)

    def add(self, d, item):
        """Add the index item for input dim d."""
        i = _index(item)
        if i is not None:
            self.bound(d, i, "begin")
            self.attrs["end"].append(i + 1 if isinstance(i, int) else 0)
            self.attrs["strides"].append(1)
            self.attrs["shrink_axis"].append(d)
            return
        if not isinstance(item, slice):
            raise _bad_index(item)
        step = 1 if item.step is None else _static_int(item.step, "slice step", "StridedSlice")
        self.attrs["strides"].append(step)
        self.bound(d, item.start, "begin")
        self.bound(d, item.stop, "end")


def getitem(tensor, key):
    """`tensor[key]` with TF's (NumPy's basic) indexing rules; see the module docstring."""
    x = convert_to_tensor(tensor)
    tracing = isinstance(x, SymbolicTensor)
    try:
        spec = _spec(x, list(key) if isinstance(key, tuple) else [key])
        values = spec.begins + spec.ends
        tracing = any(isinstance(v, SymbolicTensor) for v in [x] + values)
        return apply("strided_slice", [x] + values, spec.attrs)
    except InvalidArgumentError as e:
        if tracing:  # as TF: a static shape error while tracing is a ValueError
            raise ValueError(str(e)) from None
        raise


def _spec(x, items):
    spec, d, pos = _Spec(), 0, 0
    for item in _expand_ellipsis(items, x.ndim):
        if item is None:
            spec.attrs["new_axis"].append(pos)
        else:
            spec.add(d, item)
            d += 1
            if d - 1 in spec.attrs["shrink_axis"]:
                continue
        pos += 1
    return spec


op_api(ops.strided_slice)(getitem)
TensorBase.__getitem__ = getitem  # x[key] on every tensor


def _vector(value, what, op):
    """A list of ints or scalar tensors from a 1-D int argument (a list, an array, a tensor of known length)."""
    value = known(value)
    if isinstance(value, TensorBase):
        if value.ndim != 1 or not value.dtype.is_integer or value.shape[0] is None:
            raise InvalidArgumentError(f"{what} must be a 1-D int tensor of known length, got {value!r} [Op:{op}]")
        return [value[i] for i in range(value.shape[0])] if isinstance(value, SymbolicTensor) else \
            [int(v) for v in value.numpy()]
    return [v if isinstance(v, TensorBase) else int(v) for v in np.asarray(value).tolist()] \
        if not isinstance(value, (list, tuple)) else list(value)


@export("slice")
def slice_(input_, begin, size, name=None):
    """`input_[begin[i] : begin[i] + size[i]]` along every dim (`tf.slice`); a size of -1 takes the rest."""
    x = convert_to_tensor(input_)
    begin, size = _vector(begin, "begin", "Slice"), _vector(size, "size", "Slice")
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise InvalidArgumentError(f"Expected begin and size arguments to be 1-D tensors of size {x.ndim}, but got "
                                   f"shapes [{len(begin)}] and [{len(size)}] instead. [Op:Slice]")
    key = []
    for d, (b, s) in enumerate(zip(begin, size)):
        n = x.shape[d]
        if isinstance(b, int) and isinstance(s, int) and n is not None and not (
                0 <= b <= n and (s == -1 or 0 <= s <= n - b)):
            raise InvalidArgumentError(f"Expected begin[{d}] in [0, {n}] and size[{d}] in [0, {n - b}] (or -1), but "
                                       f"got {b} and {s} [Op:Slice]")
        if isinstance(s, int) and s == -1:
            key.append(slice(b, None))
        else:
            key.append(slice(b, b + s))
    return getitem(x, tuple(key))


@export("strided_slice")
def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """`tf.strided_slice`: the index `input_[...]` spelled as begin/end/strides vectors and bit masks (bit i of a
    mask is about entry i: begin_mask/end_mask ignore that bound, ellipsis_mask makes it `...`, new_axis_mask
    `None`, shrink_axis_mask an int index)."""
    begin, end = _vector(begin, "begin", "StridedSlice"), _vector(end, "end", "StridedSlice")
    strides = [1] * len(begin) if strides is None else _vector(strides, "strides", "StridedSlice")
    if not len(begin) == len(end) == len(strides):
        raise InvalidArgumentError(f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                                   f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead. [Op:StridedSlice]")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b)
        else:
            key.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return getitem(input_, tuple(key))
