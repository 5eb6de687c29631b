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


def _counts(data, ids, n, drop_negative):
    """How many rows each of the n segments has, as data's dtype, with 1s for data's other dims (static 1s: a
    dynamic 1 would not broadcast)."""
    counts = _sum_into(fill_ops.ones_like(ids, dtype=data.dtype), ids, n, drop_negative)
    return _expand(counts, data.ndim - ids.ndim)


def _divide_counts(sums, counts):
    """sums / counts, 0 where a segment has no rows (TF's empty segments)."""
    empty = math_ops.equal(counts, 0)
    return sums / math_ops.where(empty, fill_ops.ones_like(counts), counts)


@export("math.unsorted_segment_mean")
def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the rows of each segment (0 for a segment no row names)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    _check("UnsortedSegmentMean", data, ids)
    n = _count(num_segments)
    return _divide_counts(_sum_into(data, ids, n, True), _counts(data, ids, n, True))


@export("math.unsorted_segment_sqrt_n")
def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of the rows of each segment over the square root of their count (0 for an empty segment)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    _check("UnsortedSegmentSqrtN", data, ids)
    n = _count(num_segments)
    return _divide_counts(_sum_into(data, ids, n, True),
                          math_ops.sqrt(_counts(data, ids, n, True)))


@export("math.segment_mean")
def segment_mean(data, segment_ids, name=None):
    """The mean of the rows of each segment, for ids up to the largest (0 for a segment no row names)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    _check("SegmentMean", data, ids)
    if ids.ndim != 1:
        raise user_error(ValueError(f"SegmentMean: segment_ids should be a vector, got shape {ids.shape}"))
    count = math_ops.cast(math_ops.maximum(reduction_ops.reduce_max(ids) + 1, 0), dtypes.int32)
    return _divide_counts(_sum_into(data, ids, count, False), _counts(data, ids, count, False))
