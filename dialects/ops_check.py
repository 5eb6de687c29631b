"""Run-time checks: check (a tensor passed through once a condition computed at run time holds)."""
from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType


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
