"""tf.math.lgamma and tf.math.digamma, composed of tfn ops in float64 and rounded once: Lanczos' series (g = 7,
9 terms) for log|Gamma|, the recurrence to x + 10 then the asymptotic series for digamma, and the reflection
formulas below 1/2 (lgamma) and 0 (digamma) with sin/tan(pi x) taken of x's distance to the nearest integer.
Non-positive integers give inf (lgamma) and NaN (digamma), as TF (Eigen). Gradients as TF's: lgamma' = digamma,
digamma' = polygamma(1, x) (the trigamma function, by the same recurrence and series)."""
import math

from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import fill_ops, math_ops, rounding_ops
from tfn.ops.composite import require_dtype, with_gradient

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT = 10  # digamma/trigamma: the asymptotic series from x + 10 on is within 2e-14 of them


def _wide(x):
    return math_ops.cast(x, dtypes.float64)


def _distance_to_integer(x):
    """x - round(x): exact in float64, so sin/tan(pi x) keep their precision for large |x|."""
    return x - rounding_ops.round(x)


def _full(x, value):
    return fill_ops.zeros_like(x) + value


def _non_positive_integer(x):
    return math_ops.logical_and(math_ops.less_equal(x, 0), math_ops.equal(x, rounding_ops.floor(x)))


def _lanczos(x):
    """log Gamma(x) for x >= 1/2 (float64)."""
    z = x - 1.0
    a = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], 1):
        a = a + c / (z + float(i))
    t = z + 7.5
    return _HALF_LOG_2PI + (z + 0.5) * math_ops.log(t) - t + math_ops.log(a)


def _lgamma64(x):
    reflect = math_ops.less(x, 0.5)
    lg = _lanczos(math_ops.where(reflect, 1.0 - x, x))
    s = math_ops.abs(math_ops.sin(math.pi * _distance_to_integer(x)))
    out = math_ops.where(reflect, math.log(math.pi) - math_ops.log(s) - lg, lg)
    inf = math_ops.equal(math_ops.abs(x), math.inf)
    out = math_ops.where(math_ops.logical_or(math_ops.equal(x, 1.0), math_ops.equal(x, 2.0)), _full(x, 0.0), out)
    return math_ops.where(math_ops.logical_or(inf, _non_positive_integer(x)), _full(x, math.inf), out)


def _series(x, shifted, asymptotic):
    """sum over k < _SHIFT of shifted(x + k), plus asymptotic(x + _SHIFT)."""
    total = asymptotic(x + float(_SHIFT))
    for k in range(_SHIFT):
        total = total + shifted(x + float(k))
    return total


def _digamma_asymptotic(y):
    r = 1.0 / (y * y)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
    return math_ops.log(y) - 0.5 / y - tail


def _digamma64(x):
    reflect = math_ops.less(x, 0.0)
    y = math_ops.where(reflect, 1.0 - x, x)
    out = _series(y, lambda v: -1.0 / v, _digamma_asymptotic)
    out = math_ops.where(reflect, out - math.pi / math_ops.tan(math.pi * _distance_to_integer(x)), out)
    nan = math_ops.logical_or(_non_positive_integer(x), math_ops.equal(x, -math.inf))
    out = math_ops.where(math_ops.equal(x, math.inf), x, out)
    return math_ops.where(nan, _full(x, math.nan), out)


def _trigamma_asymptotic(y):
    r = 1.0 / (y * y)
    tail = 1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30)))
    return 1.0 / y + 0.5 * r + r / y * tail


def _trigamma64(x):
    reflect = math_ops.less(x, 0.0)
    y = math_ops.where(reflect, 1.0 - x, x)
    out = _series(y, lambda v: 1.0 / (v * v), _trigamma_asymptotic)
    s = math_ops.sin(math.pi * _distance_to_integer(x))
    out = math_ops.where(reflect, math.pi ** 2 / (s * s) - out, out)
    return math_ops.where(_non_positive_integer(x), _full(x, math.inf), out)


def _in_float64(fn, x):
    return math_ops.cast(fn(_wide(x)), x.dtype) if x.dtype is not dtypes.float64 else fn(x)


@export("math.lgamma")
def lgamma(x, name=None):
    """log |Gamma(x)|."""
    x = convert_to_tensor(x)
    require_dtype("Lgamma", x, rules.FLOATS)
    return with_gradient(lambda v: _in_float64(_lgamma64, v), lambda y, g: [g * digamma(x)], x)


@export("math.digamma")
def digamma(x, name=None):
    """d/dx log Gamma(x)."""
    x = convert_to_tensor(x)
    require_dtype("Digamma", x, rules.FLOATS)
    return with_gradient(lambda v: _in_float64(_digamma64, v),
                         lambda y, g: [g * _in_float64(_trigamma64, x)], x)
