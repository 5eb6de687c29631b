"""Run-time checks that pass their operand through: check_numerics (TF's CheckNumerics: NaN or Inf is an error),
ensure_shape (TF's EnsureShape: the dims must match the expected ones; the result has the refined type) and check
(a condition computed at run time, with a message of the caller's: the run-time shapes of reshape and broadcast_to)."""
import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.ops_shape import shape_str
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType

NAN, INF = 2, 1  # check_numerics' run-time detail: what it found (NaN wins over Inf)


def numerics_message(message, found):
    return f"{message} : Tensor had {'NaN' if found == NAN else 'Inf'} values"


def _numerics_infer(types, attrs):
    rules.allowed("CheckNumerics", types[0].dtype, rules.FLOATS)
    return types[0]


def _numerics_kernel(arrays, attrs):
    x = arrays[0]
    with np.errstate(all="ignore"):
        found = NAN if np.isnan(x).any() else INF if np.isinf(x).any() else 0
    if found:
        raise InvalidArgumentError(numerics_message(attrs["message"], found) + " [Op:CheckNumerics]")
    return x.copy()


define("check_numerics", ["x"], _numerics_infer, _numerics_kernel, {"message": "str"}, tf_name="CheckNumerics",
       summary="x, checked when it runs: a NaN or an infinity raises InvalidArgumentError with the message",
       tf_api="debugging.check_numerics")


def shape_text(shape):
    """shape_str, a negative size (an attribute's "any") also shown as ?."""
    return shape_str([None if d is None or d < 0 else d for d in shape])


def _ensure_infer(types, attrs):
    x, want = types[0], [None if d < 0 else int(d) for d in attrs["shape"]]
    if x.rank != len(want) or any(a is not None and b is not None and a != b for a, b in zip(x.shape, want)):
        raise InvalidArgumentError(f"Shape of tensor {shape_text(x.shape)} is not compatible with expected shape "
                                   f"{shape_text(want)}. [Op:EnsureShape]")
    return TensorType(tuple(a if a is not None else b for a, b in zip(x.shape, want)), x.dtype)


def _ensure_kernel(arrays, attrs):
    x = arrays[0]
    want = attrs["shape"]
    if x.ndim != len(want) or any(d >= 0 and d != n for n, d in zip(x.shape, want)):
        raise InvalidArgumentError(f"Shape of tensor {shape_text(x.shape)} is not compatible with expected shape "
                                   f"{shape_text(want)}. [Op:EnsureShape]")
    return x.copy()


define("ensure_shape", ["x"], _ensure_infer, _ensure_kernel, {"shape": "i64s"}, tf_name="EnsureShape",
       summary="x with the dims of `shape` (-1: any) checked when it runs, its type refined by them",
       tf_api="ensure_shape")



def _check_infer(types, attrs):
    x, ok, *details = types
    if ok.rank != 0 or not ok.dtype.is_bool:
        raise InvalidArgumentError(f"the condition of a check must be a bool scalar, got {ok}")
    for d in details:
        if d.rank != 0 or d.dtype != dtypes.int64:
            raise InvalidArgumentError(f"the details of a check must be int64 scalars, got {d}")
    return TensorType(x.shape, x.dtype)


def check_message(message, details):
    """The text of a failed check: its message with the run-time details put in ({0}, {1}, ...)."""
    return message.format(*details)


def _check_kernel(arrays, attrs):
    x, ok, *details = arrays
    if not bool(ok):
        raise InvalidArgumentError(check_message(attrs["message"], [int(d) for d in details]))
    return x


# The details share one type (a variadic group): int64 scalars, the values the message shows.
define("check", ["x", "ok", "*details"], _check_infer, _check_kernel, {"message": "str"}, tf_name="Assert",
       summary="`x`, once the scalar `ok` holds; else InvalidArgumentError(message.format(*details))")
