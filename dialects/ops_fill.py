"""Tensor-making ops: fill, fill_like (zeros_like/ones_like), range, one_hot, eye and pad."""
import math

import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType, check_memory


def _scalar(op, what, t):
    if t.rank != 0:
        raise InvalidArgumentError(f"{what} must be a scalar, got shape {list(t.shape)} [Op:{op}]")


# fill / fill_like --------------------------------------------------------------------------------------

def _fill_infer(types, attrs):
    _scalar("Fill", "value", types[0])
    for d in attrs["shape"]:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0 [Op:Fill]")
    return TensorType(attrs["shape"], types[0].dtype)


define("fill", ["value"], _fill_infer, lambda a, at: np.full(at["shape"], a[0], a[0].dtype), {"shape": "i64s"},
       summary="a tensor of a static shape with every element the scalar `value`", tf_api="fill")


def _fill_like_infer(types, attrs):
    _scalar("Fill", "value", types[1])
    return TensorType(types[0].shape, types[1].dtype)


define("fill_like", ["x", "value"], _fill_like_infer, lambda a, at: np.full(a[0].shape, a[1], a[1].dtype),
       tf_name="Fill", summary="a tensor of x's shape (dynamic dims included) filled with the scalar `value`",
       differentiable=False, tf_api=("zeros_like", "ones_like"))


# range -------------------------------------------------------------------------------------------------

RANGE_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32,
                dtypes.float64)


def _range_infer(types, attrs):
    for what, t in zip(("start", "limit", "delta"), types):
        _scalar("Range", what, t)
    dt = rules.same_dtype("Range", types)
    rules.allowed("Range", dt, RANGE_DTYPES)
    return TensorType([None], dt)


RANGE_ERRORS = ("Requires delta != 0: {2}", "Requires start <= limit when delta > 0: {0}/{1}",
                "Requires start >= limit when delta < 0: {0}/{1}", "Range size of {0}..{1} by {2} is not finite")


def range_size(start, limit, delta, dtype):
    """(number of elements, error kind or None) of TF's Range: ceil(|limit - start| / |delta|)."""
    if delta == 0:
        return 0, 0
    if delta > 0 and start > limit:
        return 0, 1
    if delta < 0 and start < limit:
        return 0, 2
    if dtype.is_integer:
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta)), None
    with np.errstate(all="ignore"):
        q = np.abs((dtype.np.type(limit) - dtype.np.type(start)) / dtype.np.type(delta))
    if not np.isfinite(q):
        return 0, 3
    return int(math.ceil(float(q))), None


def _range_kernel(arrays, attrs):
    start, limit, delta = (a[()] for a in arrays)
    dt = dtypes.as_dtype(arrays[0].dtype)
    size, error = range_size(start, limit, delta, dt)
    if error is not None:
        raise InvalidArgumentError(RANGE_ERRORS[error].format(start, limit, delta) + " [Op:Range]")
    check_memory(TensorType([size], dt))  # before NumPy: an overflowing or too big size is TF's error
    with np.errstate(all="ignore"):
        if dt.is_integer:
            return (np.arange(size, dtype=np.int64) * int(delta) + int(start)).astype(dt.np)
        return start + np.arange(size).astype(dt.np) * delta


define("range", ["start", "limit", "delta"], _range_infer, _range_kernel,
       summary="[start, start + delta, ...) up to limit (exclusive); a 1-D tensor of dynamic size",
       differentiable=False, tf_api="range")


# one_hot -----------------------------------------------------------------------------------------------

ONE_HOT_INDEX_DTYPES = (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64)


def one_hot_axis(rank, axis):
    """The position of the depth dim in the result (axis -1 is the last)."""
    if not -1 <= axis <= rank:
        raise InvalidArgumentError(f"Expected axis to be -1 or between [0, {rank + 1}).  But received: {axis} "
                                   "[Op:OneHot]")
    return rank if axis == -1 else axis


def _one_hot_infer(types, attrs):
    indices, on, off = types
    rules.allowed("OneHot", indices.dtype, ONE_HOT_INDEX_DTYPES)
    _scalar("OneHot", "on_value", on)
    _scalar("OneHot", "off_value", off)
    dt = rules.same_dtype("OneHot", [on, off])
    if attrs["depth"] < 0:
        raise InvalidArgumentError(f"depth must be non-negative, got: {attrs['depth']} [Op:OneHot]")
    a = one_hot_axis(indices.rank, attrs["axis"])
    return TensorType(indices.shape[:a] + (attrs["depth"],) + indices.shape[a:], dt)


def _one_hot_kernel(arrays, attrs):
    indices, on, off = arrays
    a = one_hot_axis(indices.ndim, attrs["axis"])
    ids = np.arange(attrs["depth"]).reshape([-1 if i == a else 1 for i in range(indices.ndim + 1)])
    hit = np.expand_dims(indices.astype(np.int64), a) == ids
    return np.where(hit, on, off).astype(on.dtype)


define("one_hot", ["indices", "on_value", "off_value"], _one_hot_infer, _one_hot_kernel,
       {"depth": "i64", "axis": "i64"},
       summary="on_value where the new `axis` position equals the index, off_value elsewhere (out-of-range "
               "indices give an all-off row)", differentiable=False, tf_api="one_hot")


# pad ---------------------------------------------------------------------------------------------------

def pad_pairs(x_rank, paddings):
    """The flat `paddings` attribute as (before, after) per dim of x; InvalidArgumentError as TF's Pad."""
    if len(paddings) != 2 * x_rank:
        raise InvalidArgumentError("The first dimension of paddings must be the rank of inputs"
                                   f"{[len(paddings) // 2, 2]}, [{x_rank}] [Op:Pad]")
    pairs = list(zip(paddings[0::2], paddings[1::2]))
    for before, after in pairs:
        if before < 0 or after < 0:
            raise InvalidArgumentError(f"Paddings must be non-negative: {before} {after} [Op:Pad]")
    return pairs


def _pad_infer(types, attrs):
    x, value = types
    _scalar("PadV2", "constant_values", value)
    rules.same_dtype("PadV2", [x, value])
    pairs = pad_pairs(x.rank, attrs["paddings"])
    return TensorType(tuple(None if d is None else d + a + b for d, (a, b) in zip(x.shape, pairs)), x.dtype)


def _pad_kernel(arrays, attrs):
    x, value = arrays
    return np.pad(x, pad_pairs(x.ndim, attrs["paddings"]), constant_values=value[()])


define("pad", ["x", "value"], _pad_infer, _pad_kernel, {"paddings": "i64s"}, tf_name="PadV2",
       summary="x surrounded by the scalar `value`: paddings[2i], paddings[2i+1] elements before and after dim i",
       tf_api="pad")


# eye ---------------------------------------------------------------------------------------------------

def _eye_infer(types, attrs):
    for d in attrs["shape"]:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0 [Op:Eye]")
    if len(attrs["shape"]) < 2:
        raise InvalidArgumentError(f"eye needs [..., rows, columns], got shape {list(attrs['shape'])} [Op:Eye]")
    return TensorType(attrs["shape"], attrs["dtype"])


def _eye_kernel(arrays, attrs):
    *batch, rows, cols = attrs["shape"]
    one = np.eye(rows, cols, dtype=attrs["dtype"].np)
    return np.broadcast_to(one, tuple(batch) + (rows, cols)).copy()


define("eye", [], _eye_infer, _eye_kernel, {"shape": "i64s", "dtype": "dtype"}, tf_name="Eye",
       summary="identity matrices of a static shape [..., rows, columns]: 1 where row == column, else 0",
       differentiable=False, tf_api=("eye", "linalg.eye"))
