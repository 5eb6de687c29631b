"""TF's elementwise functions that guard a division or a logarithm (divide_no_nan, xlogy, ...), and the small
arithmetic helpers composed of one or two ops (reciprocal, squared_difference, scalar_mul, logical_xor, rint,
truncatediv, truncatemod, realdiv). Guards use the double `where`: the unsafe operand is replaced before the
division or logarithm, so neither the value nor the gradient of the branch not taken is NaN."""
from tfn.core.api import export
from tfn.core.dispatch import tensors
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import fill_ops, math_ops, rounding_ops
from tfn.ops.composite import require_dtype


def _floats(op, x, y):
    x, y = tensors(x, y)
    require_dtype(op, x, rules.FLOATS)
    return x, y


@export("math.reciprocal")
def reciprocal(x, name=None):
    """1 / x (integer division for integer tensors, as TF's Reciprocal)."""
    x = convert_to_tensor(x)
    if x.dtype.is_floating:
        return math_ops.divide(fill_ops.ones_like(x), x)
    return truncatediv(fill_ops.ones_like(x), x)


@export("math.reciprocal_no_nan")
def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0."""
    x = convert_to_tensor(x)
    return divide_no_nan(fill_ops.ones_like(x), x)


@export("math.divide_no_nan")
def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (even where x is NaN or infinite)."""
    x, y = _floats("DivNoNan", x, y)
    zero = math_ops.equal(y, 0)
    safe = math_ops.where(zero, fill_ops.ones_like(y), y)
    return _zero_where(zero, x / safe)


@export("math.multiply_no_nan")
def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 (even where x is NaN or infinite)."""
    x, y = _floats("MulNoNan", x, y)
    return math_ops.where(math_ops.equal(y, 0), fill_ops.zeros_like(x), x) * y


def _zero_where(zero, value):
    return math_ops.where(zero, fill_ops.zeros_like(value), value)


def _x_zero(x, y, replacement):
    """(x == 0, y with `replacement` (a function of y) where x is 0, broadcast to the result's shape)."""
    zero = math_ops.equal(x, 0)
    return zero, math_ops.where(zero, replacement(y), y)


@export("math.xlogy")
def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0 (even where y is 0 or NaN)."""
    x, y = _floats("Xlogy", x, y)
    zero, safe = _x_zero(x, y, fill_ops.ones_like)
    return _zero_where(zero, x * math_ops.log(safe))


@export("math.xlog1py")
def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0."""
    x, y = _floats("Xlog1py", x, y)
    zero, safe = _x_zero(x, y, fill_ops.zeros_like)
    return _zero_where(zero, x * math_ops.log1p(safe))


@export("math.xdivy")
def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0 (even where y is 0)."""
    x, y = _floats("Xdivy", x, y)
    zero, safe = _x_zero(x, y, fill_ops.ones_like)
    return _zero_where(zero, x / safe)


@export("math.squared_difference")
def squared_difference(x, y, name=None):
    """(x - y) ** 2."""
    x, y = tensors(x, y)
    return math_ops.square(x - y)


@export("math.scalar_mul", "scalar_mul")
def scalar_mul(scalar, x, name=None):
    """scalar * x, scalar a 0-d value."""
    scalar = convert_to_tensor(scalar)
    if scalar.shape.rank not in (None, 0):
        raise ValueError(f"Only scalar multiply works, got shape {scalar.shape}")
    return scalar * x


@export("math.logical_xor")
def logical_xor(x, y, name=None):
    """x != y on booleans."""
    x, y = tensors(x, y)
    return math_ops.logical_and(math_ops.logical_or(x, y), math_ops.logical_not(math_ops.logical_and(x, y)))


@export("math.rint")
def rint(x, name=None):
    """The nearest integer, halves to the even one (tf.math.round's rule, floats only)."""
    x = convert_to_tensor(x)
    require_dtype("Rint", x, rules.FLOATS)
    return rounding_ops.round(x)


def _fmod_fix(x, y, r):
    """floormod's remainder r (the sign of y) turned into fmod's (the sign of x)."""
    differ = math_ops.not_equal(math_ops.less(x, 0), math_ops.less(y, 0))
    return math_ops.logical_and(math_ops.not_equal(r, 0), differ)


@export("truncatemod", "math.truncatemod")
def truncatemod(x, y, name=None):
    """The remainder of the division rounded toward zero (C's fmod: the sign of x)."""
    x, y = tensors(x, y)
    r = math_ops.floormod(x, y)
    return math_ops.where(_fmod_fix(x, y, r), r - y, r)


@export("truncatediv", "math.truncatediv")
def truncatediv(x, y, name=None):
    """x / y rounded toward zero (C's integer division)."""
    x, y = tensors(x, y)
    if x.dtype.is_floating:
        q = x / y
        return math_ops.where(math_ops.less(q, 0), rounding_ops.ceil(q), rounding_ops.floor(q))
    fix = _fmod_fix(x, y, math_ops.floormod(x, y))
    return math_ops.floordiv(x, y) + math_ops.cast(fix, x.dtype)


@export("realdiv")
def realdiv(x, y, name=None):
    """x / y: floats divide, integers divide rounding toward zero (TF's RealDiv)."""
    x, y = tensors(x, y)
    return math_ops.divide(x, y) if x.dtype.is_floating else truncatediv(x, y)
