"""The sorting op: argsort, the int32 positions that sort each line along the last axis (stable).

Order: ascending, or descending with `descending`; equal values keep their input order in both directions (as
NumPy's `np.argsort(kind="stable")` ascending and TF's `tf.argsort(direction="DESCENDING", stable=True)`); NaN counts
as larger than every number (last ascending, first descending; NaNs among themselves by position); -0.0 equals 0.0.
tfn.sort, tfn.argsort and tfn.math.top_k (frontend/ops/sort_ops.py) are built on it."""
import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType

MAX_LINE = 2 ** 31 - 1  # the positions are int32


def line_too_long(n):
    return f"ArgSort: a line of {n} elements has positions past int32"


def _infer(types, attrs):
    x = types[0]
    rules.allowed("ArgSort", x.dtype, rules.NUMERIC)
    if x.rank == 0:
        raise InvalidArgumentError("ArgSort: input must be at least rank 1, got a scalar [Op:ArgSort]")
    if x.shape[-1] is not None and x.shape[-1] > MAX_LINE:
        raise InvalidArgumentError(line_too_long(x.shape[-1]) + " [Op:ArgSort]")
    return TensorType(x.shape, dtypes.int32)


def sort_keys(x, descending):
    """The integer keys the compiled sort orders (passes/lowering/sort.py), in NumPy: signed integers of x's width
    whose signed order is the op's order (NaN canonical and above +inf, -0.0 as 0.0; ~key for descending)."""
    width = x.dtype.itemsize * 8
    signed = np.dtype(f"int{width}")
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), np.array(np.nan, x.dtype), x)
        x = np.where(x == 0, np.zeros((), x.dtype), x)
        bits = x.view(signed)
        key = bits ^ ((bits >> (width - 1)) & np.array(2 ** (width - 1) - 1, signed))
    elif x.dtype.kind == "u":
        key = (x ^ np.array(1 << (width - 1), x.dtype)).view(signed)
    else:
        key = x
    return ~key if descending else key


def stable_argsort(x, descending):
    """The NumPy kernel: the stable ascending order of the keys. Keys of 32 bits or fewer go with their positions
    into one uint64 each (key above, position below: every one distinct), so NumPy's fastest sort of those gives
    the stable order; 64-bit keys take np.argsort(kind="stable")."""
    if x.shape[-1] > MAX_LINE:
        raise InvalidArgumentError(line_too_long(x.shape[-1]) + " [Op:ArgSort]")
    key = sort_keys(np.asarray(x), descending)
    if key.dtype.itemsize == 8:
        return np.argsort(key, axis=-1, kind="stable").astype(np.int32)
    width = key.dtype.itemsize * 8
    high = (key.astype(np.int64) + (1 << (width - 1))).astype(np.uint64) << np.uint64(32)
    both = np.sort(high | np.arange(x.shape[-1], dtype=np.uint64), axis=-1)
    return (both & np.uint64(0xFFFFFFFF)).astype(np.int32)


define("argsort", ["x"], _infer, lambda arrays, attrs: stable_argsort(arrays[0], attrs["descending"]),
       {"descending": "bool"}, tf_name="ArgSort",
       summary="int32 positions sorting each line along the last axis, stable (equal values keep their order), "
               "ascending or `descending`; NaN is larger than every number", differentiable=False,
       tf_api="argsort")
