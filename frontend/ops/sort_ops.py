"""`tfn.sort`, `tfn.argsort` and `tfn.math.top_k` (also `tfn.nn.top_k`), on the argsort op.

The argsort op (dialects/ops_sort.py) sorts each line along the last axis, stable: compiled, an LSD radix sort of
integer keys (O(n) per line for a fixed dtype; merge sort, O(n log n), for lines under 32-256 elements), 2n scratch
elements per line (passes/lowering/sort.py); eagerly, NumPy sorting the same keys (dialects/ops_sort.py). Other
axes are transposed to the end and back. Equal values keep their order in both directions; NaN counts as larger
than every number (last ascending, first descending); -0.0 equals 0.0. sort picks the values at those positions
with gather_nd, so its gradient reaches the picked elements (a scatter-add, O(n)); argsort has none. top_k takes
the k largest one after another (k passes of a max and an index of it: O(n·k)) up to k = TOP_K_BY_PASSES, and the
first k of the descending argsort beyond. All run on dynamic dims."""
import collections

import numpy as np

from tfn import dtypes
from tfn.core.api import export, op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.composite import norm_axis, require_dtype, user_error
from tfn.ops.debugging_ops import ensure_shape
from tfn.ops.scatter_ops import gather_nd
from tfn.ops.sequence_ops import _static_count

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

# top_k picks the k largest one by one up to this k (k passes over the line), and sorts the line beyond it
# (measured compiled on 2 cores, float32: at k = 2 passes took 0.51-0.59 ms against 0.57-0.93 ms for the sort on
# 1x100000, 100x1000 and 1000x100; from k = 4 the sort was faster, 0.55-0.98 ms against 1.0-1.1 ms)
TOP_K_BY_PASSES = 2


def _line(op, values, axis):
    """values as a tensor with the sorted axis moved last, and the permutation that moves it back (or None)."""
    x = convert_to_tensor(values)
    require_dtype(op, x, rules.NUMERIC)
    if x.ndim == 0:
        raise user_error(InvalidArgumentError(f"{op}: input must be at least rank 1, got a scalar"))
    axis = norm_axis(op, _static_count(axis, "axis", op), x.ndim)
    if axis == x.ndim - 1:
        return x, None
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    return array_ops.transpose(x, perm), [int(i) for i in np.argsort(perm)]


def _positions(x):
    n = x._shape[-1]
    count = convert_to_tensor(n, dtypes.int32) if n is not None else shape_ops.shape(x)[-1]
    return fill_ops.range(count)


def _take_along_last(x, order):
    """x[..., order[..., j]] for each j: the values of each line at the positions `order` (int32, x's shape but for
    the last dim); one gather_nd of x at full coordinates (its gradient is a scatter-add of the picked elements)."""
    if x.ndim == 1:
        return gather_nd(x, array_ops.expand_dims(order, -1))
    zero = fill_ops.zeros_like(order)
    coords = []
    for d, size in enumerate(x._shape[:-1]):
        count = convert_to_tensor(size, dtypes.int32) if size is not None else shape_ops.shape(x)[d]
        along = [1] * order.ndim
        along[d] = -1
        coords.append(math_ops.add(zero, array_ops.reshape(fill_ops.range(count), along)))
    return gather_nd(x, array_ops.stack(coords + [order], -1))


def _argsort_last(x, descending):
    return apply(ops.argsort, [x], {"descending": descending})


def _direction(direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise user_error(ValueError(f"`direction` should be one of ASCENDING or DESCENDING, got {direction!r}"))
    return direction == "DESCENDING"


@export("sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """values sorted along `axis` (stable; NaN counts as larger than every number: last ascending, first
    descending)."""
    descending = _direction(direction)
    x, back = _line("Sort", values, axis)
    out = _take_along_last(x, _argsort_last(x, descending))
    return out if back is None else array_ops.transpose(out, back)


@op_api(ops.argsort, exports=("argsort",))
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort values along `axis` (always stable: equal values keep their order)."""
    descending = _direction(direction)
    x, back = _line("ArgSort", values, axis)
    out = _argsort_last(x, descending)
    return out if back is None else array_ops.transpose(out, back)


@export("math.top_k", "nn.top_k")
def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """(values, indices) of the k largest elements along the last axis, largest first (equal values: the lower
    index first). k must be known when the function is traced."""
    x = convert_to_tensor(input)
    require_dtype("TopKV2", x, rules.NUMERIC)
    if x.ndim == 0:
        raise user_error(InvalidArgumentError("input must be at least 1-D, got a scalar [Op:TopKV2]"))
    k = _static_count(k, "k", "TopKV2")
    n = x._shape[-1]
    if k < 0:
        raise user_error(InvalidArgumentError(f"Need k >= 0, got {k} [Op:TopKV2]"))
    if n is not None and n < k:
        raise user_error(InvalidArgumentError(f"input must have at least k columns. Had {n}, needed {k} "
                                              "[Op:TopKV2]"))
    index_type = dtypes.as_dtype(index_type)
    if n is None:  # TF's error when the function runs, the line shorter than k
        count = shape_ops.shape(x, dtypes.int64)[-1]
        x = apply(ops.check, [x, math_ops.greater_equal(count, convert_to_tensor(k, dtypes.int64)), count],
                  {"message": "input must have at least k columns. Had {0}, needed " + f"{k} [Op:TopKV2]"})
    if k > TOP_K_BY_PASSES:
        order = ensure_shape(_argsort_last(x, True)[..., :k], list(x._shape[:-1]) + [k])
        return TopKV2(_take_along_last(x, order), math_ops.cast(order, index_type))
    pos = _positions(x)
    past = convert_to_tensor(np.iinfo(np.int32).max, dtypes.int32)
    taken = math_ops.less(fill_ops.zeros_like(x), fill_ops.zeros_like(x))  # all False
    zero = fill_ops.zeros_like(x)
    values, indices = [], []
    for _ in range(k):
        free = math_ops.logical_not(taken)
        nan = math_ops.logical_and(math_ops.not_equal(x, x), free)  # NaN counts as the largest, as TF's
        top = reduction_ops.reduce_max(math_ops.where(free, x, _lowest(x)), -1, keepdims=True)
        best = math_ops.logical_and(free, math_ops.equal(x, top))
        if x.dtype.is_floating:
            any_nan = reduction_ops.reduce_any(nan, -1, keepdims=True)
            best = math_ops.where(any_nan, nan, best)
        at = reduction_ops.reduce_min(math_ops.where(best, math_ops.add(math_ops.cast(zero, dtypes.int32), pos),
                                                     past), -1, keepdims=True)
        hot = math_ops.equal(pos, at)
        values.append(reduction_ops.reduce_sum(math_ops.where(hot, x, zero), -1))
        indices.append(array_ops.squeeze(at, [-1]))
        taken = math_ops.logical_or(taken, hot)
    if not values:
        shape = [d if d is not None else shape_ops.shape(x)[i] for i, d in enumerate(x._shape[:-1])] + [0]
        return TopKV2(fill_ops.zeros(shape, x.dtype), fill_ops.zeros(shape, index_type))
    return TopKV2(array_ops.stack(values, -1), math_ops.cast(array_ops.stack(indices, -1), index_type))


def _lowest(x):
    dt = x.dtype.np
    low = -np.inf if x.dtype.is_floating else np.iinfo(dt).min
    return convert_to_tensor(np.asarray(low, dt), x.dtype)
