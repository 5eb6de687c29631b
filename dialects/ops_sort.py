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


def stable_argsort(x, descending):
    """The NumPy kernel: np.argsort(kind="stable") puts NaN last; descending is the ascending order of the reversed
    line, reversed (equal values then keep their input order, NaN comes first)."""
    if x.shape[-1] > MAX_LINE:
        raise InvalidArgumentError(line_too_long(x.shape[-1]) + " [Op:ArgSort]")
    if not descending:
        return np.argsort(x, axis=-1, kind="stable").astype(np.int32)
    n = x.shape[-1]
    back = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return (n - 1 - back).astype(np.int32)


define("argsort", ["x"], _infer, lambda arrays, attrs: stable_argsort(arrays[0], attrs["descending"]),
       {"descending": "bool"}, tf_name="ArgSort",
       summary="int32 positions sorting each line along the last axis, stable (equal values keep their order), "
               "ascending or `descending`; NaN is larger than every number", differentiable=False,
       tf_api="argsort")
