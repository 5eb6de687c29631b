"""`tfn.floor`, `tfn.math.ceil`, `tfn.round` (half to even) and the float classes `tfn.math.is_nan`, `is_inf`,
`is_finite`, composed of tfn ops. As TF, floor/ceil/round have no gradient (tapes see no path through them)."""
import numpy as np

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.gradients import recording
from tfn.ops import math_ops
from tfn.ops.composite import require_dtype

FLOATS = rules.FLOATS


def _integral_above(dtype):
    """The magnitude from which every value of a float dtype is an integer: 2 ** (mantissa bits)."""
    return float(2.0 ** np.finfo(dtype.np).nmant)


def _floor(x):
    """floor of a float tensor: floordiv by 1 where that is exact, x itself where x is already an integer, inf or
    NaN (floordiv would give NaN for inf)."""
    small = math_ops.less(math_ops.abs(x), _integral_above(x.dtype))
    return math_ops.where(small, math_ops.floordiv(x, 1), x)


@export("floor", "math.floor")
def floor(x, name=None):
    """The largest integer not greater than x, elementwise (float16/32/64)."""
    x = convert_to_tensor(x)
    require_dtype("Floor", x, FLOATS)
    with recording.pause():
        return _floor(x)


@export("math.ceil")
def ceil(x, name=None):
    """The smallest integer not less than x, elementwise (float16/32/64)."""
    x = convert_to_tensor(x)
    require_dtype("Ceil", x, FLOATS)
    with recording.pause():
        return -_floor(-x)


@export("round", "math.round")
def round(x, name=None):  # noqa: A001
    """x rounded to the nearest integer, halves to the even one (banker's rounding, as TF); integers unchanged."""
    x = convert_to_tensor(x)
    require_dtype("Round", x, rules.NUMERIC)
    if not x.dtype.is_floating:
        return math_ops.identity(x)
    with recording.pause():
        low = _floor(x)
        high = low + 1
        d = x - low
        odd = math_ops.equal(math_ops.floormod(low, 2), 1)
        tie = math_ops.where(odd, high, low)
        r = math_ops.where(math_ops.greater(d, 0.5), high, math_ops.where(math_ops.less(d, 0.5), low, tie))
        return math_ops.where(math_ops.equal(r, 0), x * 0, r)  # -0.4 rounds to -0.0, as TF


@export("math.is_nan", "debugging.is_nan")
def is_nan(x, name=None):
    """Where x is NaN (a bool tensor of x's shape); float16/32/64."""
    x = convert_to_tensor(x)
    require_dtype("IsNan", x, FLOATS)
    return math_ops.not_equal(x, x)


@export("math.is_inf", "debugging.is_inf")
def is_inf(x, name=None):
    """Where x is +inf or -inf (a bool tensor of x's shape); float16/32/64."""
    x = convert_to_tensor(x)
    require_dtype("IsInf", x, FLOATS)
    return math_ops.equal(math_ops.abs(x), np.inf)


@export("math.is_finite", "debugging.is_finite")
def is_finite(x, name=None):
    """Where x is neither infinite nor NaN (a bool tensor of x's shape); float16/32/64."""
    x = convert_to_tensor(x)
    require_dtype("IsFinite", x, FLOATS)
    return math_ops.less(math_ops.abs(x), np.inf)
