"""`tfn.math.unsorted_segment_sum` and `tfn.math.segment_sum`: sums of the rows of data that share a segment id,
as a tensor_scatter_nd_add of the rows into zeros (so an id out of range raises InvalidArgumentError naming
TensorScatterAdd and the user's line, and the gradient is a gather of the output's gradient)."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, scatter_ops, shape_ops
from tfn.ops.composite import user_error


def _check(op, data, ids):
    if not ids.dtype.is_integer or ids.dtype.is_unsigned:
        raise user_error(TypeError(f"{op}: segment_ids must be int32 or int64, got {ids.dtype.name}"))
    if data.dtype.is_bool or data.dtype.is_string:
        raise user_error(TypeError(f"{op}: data of dtype {data.dtype.name} cannot be summed"))
    if ids.ndim > data.ndim or any(a is not None and b is not None and a != b
                                   for a, b in zip(ids._shape, data._shape)):
        raise user_error(ValueError(f"{op}: segment_ids.shape {ids.shape} must be a prefix of data.shape "
                                    f"{data.shape}"))


def _sum_into(data, ids, num_segments, drop_negative):
    rest = [d if d is not None else shape_ops.shape(data)[i] for i, d in enumerate(data._shape)][ids.ndim:]
    if drop_negative:  # as TF's unsorted_segment_sum: rows with a negative id are dropped
        negative = math_ops.less(ids, 0)
        data = math_ops.where(_expand(negative, len(rest)), fill_ops.zeros_like(data), data)
        ids = math_ops.maximum(ids, 0)
    zeros = fill_ops.zeros([num_segments] + rest, data.dtype)
    return scatter_ops.tensor_scatter_nd_add(zeros, array_ops.expand_dims(ids, -1), data)


def _expand(t, n):
    for _ in range(n):
        t = array_ops.expand_dims(t, -1)
    return t


def _count(num_segments):
    n = num_segments
    if isinstance(n, TensorBase):
        if n.ndim != 0 or not n.dtype.is_integer:
            raise user_error(ValueError(f"num_segments must be a scalar int, got {n!r}"))
        return math_ops.cast(n, dtypes.int32)
    return int(n)


@export("math.unsorted_segment_sum")
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """out[i, ...] = the sum of data[j..., ...] over the j with segment_ids[j...] == i, for i < num_segments (ids in
    any order; a negative id drops its row; an id >= num_segments raises InvalidArgumentError)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    _check("UnsortedSegmentSum", data, ids)
    return _sum_into(data, ids, _count(num_segments), drop_negative=True)


@export("math.segment_sum")
def segment_sum(data, segment_ids, name=None):
    """out[i, ...] = the sum of the rows data[j, ...] with segment_ids[j] == i, for i up to the largest id (a
    segment no row names is 0). TF requires sorted ids; tfn does not check the order (any order sums the same)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    _check("SegmentSum", data, ids)
    if ids.ndim != 1:
        raise user_error(ValueError(f"SegmentSum: segment_ids should be a vector, got shape {ids.shape}"))
    count = math_ops.maximum(reduction_ops.reduce_max(ids) + 1, 0)
    count = math_ops.cast(count, dtypes.int32)
    return _sum_into(data, ids, count, drop_negative=False)
