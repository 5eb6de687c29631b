"""tf.math.erfinv and tf.math.ndtri, composed of tfn ops in float64 and rounded once: Giles' single-precision
polynomial ("Approximating the erfinv function", 2010) as the first guess, then three Newton steps on erf (|y| < 1/2)
or on erfc (|y| >= 1/2, with 1 - |y| formed exactly, so the tails keep their precision; ndtri hands over 2p or
2(1 - p) directly). erfinv(+-1) = +-inf, |y| > 1 gives NaN; ndtri(0) = -inf, ndtri(1) = inf. Gradients as TF's:
erfinv' = sqrt(pi)/2 exp(erfinv(y)**2), ndtri' = sqrt(2 pi) exp(ndtri(p)**2 / 2)."""
import math

from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import fill_ops, math_ops
from tfn.ops.composite import require_dtype, with_gradient

_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
            -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
         0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _horner(coefficients, w):
    p = coefficients[0] + w * 0
    for c in coefficients[1:]:
        p = c + p * w
    return p


def _erfinv_abs(a, t):
    """erfinv(a) for 0 <= a <= 1 given t = 1 - a (exact), float64."""
    safe_t = math_ops.where(math_ops.greater(t, 0), t, t * 0 + 1.0)
    log_t = math_ops.log(safe_t)
    w = math_ops.negative(log_t + math_ops.log(2.0 - safe_t))  # -log(1 - a**2)
    central = math_ops.less(w, 5.0)
    w_central = math_ops.where(central, w, w * 0) - 2.5
    w_tail = math_ops.sqrt(math_ops.where(central, w * 0 + 5.0, w)) - 3.0
    x = a * math_ops.where(central, _horner(_CENTRAL, w_central), _horner(_TAIL, w_tail))
    # beyond float32's tail (Giles' range), erfc(x) ~ e**-x**2 / (x sqrt(pi)) solved by fixed-point steps
    far = math_ops.greater(w, 16.0)
    guess = math_ops.sqrt(math_ops.negative(log_t))
    for _ in range(3):
        guess = math_ops.sqrt(math_ops.maximum(math_ops.negative(log_t) - math_ops.log(guess * math.sqrt(math.pi)),
                                               guess * 0 + 1.0))
    x = math_ops.where(far, guess, x)
    tail = math_ops.greater_equal(a, 0.5)
    for _ in range(4):
        slope = _TWO_OVER_SQRT_PI * math_ops.exp(math_ops.negative(x * x))
        # the tails by Newton on log erfc (no cancelling, robust far out), the centre on erf
        tail_x = math_ops.where(tail, x, x * 0 + 1.0)
        e = math_ops.erfc(tail_x)
        tail_step = (log_t - math_ops.log(e)) * e / math_ops.where(tail, slope, slope * 0 + 1.0)
        x = math_ops.where(tail, x - tail_step, x - (math_ops.erf(x) - a) / slope)
    x = math_ops.where(math_ops.equal(t, 0), fill_ops.zeros_like(x) + math.inf, x)
    return math_ops.where(math_ops.less(t, 0), fill_ops.zeros_like(x) + math.nan, x)


def _signed(negative, x):
    return math_ops.where(negative, math_ops.negative(x), x)


def _erfinv64(y):
    a = math_ops.abs(y)
    return _signed(math_ops.less(y, 0), _erfinv_abs(a, 1.0 - a))


def _ndtri64(p):
    low = math_ops.less(p, 0.5)
    t = math_ops.where(low, 2.0 * p, 2.0 * (1.0 - p))  # 1 - |2p - 1|, exactly
    x = _erfinv_abs(1.0 - t, t) * math.sqrt(2.0)
    bad = math_ops.logical_or(math_ops.less(p, 0), math_ops.greater(p, 1))
    return math_ops.where(bad, fill_ops.zeros_like(p) + math.nan, _signed(low, x))


def _in_float64(fn, x):
    return fn(x) if x.dtype is dtypes.float64 else math_ops.cast(fn(math_ops.cast(x, dtypes.float64)), x.dtype)


@export("math.erfinv")
def erfinv(x, name=None):
    """The inverse of erf on (-1, 1)."""
    x = convert_to_tensor(x)
    require_dtype("Erfinv", x, rules.FLOATS)
    return with_gradient(lambda v: _in_float64(_erfinv64, v),
                         lambda y, g: [g * (math.sqrt(math.pi) / 2) * math_ops.exp(y * y)], x)


@export("math.ndtri")
def ndtri(x, name=None):
    """The inverse of the standard normal CDF on (0, 1)."""
    x = convert_to_tensor(x)
    require_dtype("Ndtri", x, rules.FLOATS)
    return with_gradient(lambda v: _in_float64(_ndtri64, v),
                         lambda y, g: [g * math.sqrt(2 * math.pi) * math_ops.exp(y * y / 2)], x)

