"""Public math functions (`tfn.math.*` and their top-level aliases)."""
from tfn import dtypes
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects import ops
from tfn.dialects.rules import same_dtype


def _both(opdef):
    """The default exports of an elementwise function: tfn.<name> and tfn.math.<name>."""
    return opdef.name, "math." + opdef.name


def _unary(opdef, *exports):
    """The public function of an elementwise op of one operand, exported at `exports` (default: `_both`)."""
    @op_api(opdef, exports=exports or _both(opdef))
    def fn(x, name=None):
        return apply(opdef, [convert_to_tensor(x)])
    fn.__name__ = opdef.name
    fn.__doc__ = f"Elementwise `{opdef.full_name}`."
    return fn


def _binary(opdef, *exports):
    """The public function of a broadcasting elementwise op of two operands, exported as `_unary`'s."""
    @op_api(opdef, exports=exports or _both(opdef))
    def fn(x, y, name=None):
        return apply(opdef, tensors(x, y))
    fn.__name__ = opdef.name
    fn.__doc__ = f"Elementwise `{opdef.full_name}` with broadcasting."
    return fn


identity = _unary(ops.identity, "identity")
negative = _unary(ops.negative)
abs = _unary(ops.abs)  # noqa: A001
sign = _unary(ops.sign)
square = _unary(ops.square)
sqrt = _unary(ops.sqrt)
rsqrt = _unary(ops.rsqrt, "math.rsqrt")
exp = _unary(ops.exp)
log = _unary(ops.log, "math.log")
tanh = _unary(ops.tanh)
sigmoid = _unary(ops.sigmoid)
log1p = _unary(ops.log1p, "math.log1p")
expm1 = _unary(ops.expm1, "math.expm1")
erf = _unary(ops.erf, "math.erf")
softplus = _unary(ops.softplus, "math.softplus", "nn.softplus")
sin = _unary(ops.sin)
cos = _unary(ops.cos)
logical_not = _unary(ops.logical_not)
atan = _unary(ops.atan)
asin = _unary(ops.asin)
acos = _unary(ops.acos)
tan = _unary(ops.tan)
sinh = _unary(ops.sinh)
cosh = _unary(ops.cosh)
asinh = _unary(ops.asinh)
acosh = _unary(ops.acosh)
atanh = _unary(ops.atanh)
erfc = _unary(ops.erfc, "math.erfc")

add = _binary(ops.add)
subtract = _binary(ops.subtract)
multiply = _binary(ops.multiply)
floordiv = _binary(ops.floordiv, "math.floordiv", "math.floor_div")
floormod = _binary(ops.floormod, "math.floormod", "math.mod")
pow = _binary(ops.pow)  # noqa: A001
maximum = _binary(ops.maximum)
minimum = _binary(ops.minimum)
equal = _binary(ops.equal)
not_equal = _binary(ops.not_equal)
less = _binary(ops.less)
less_equal = _binary(ops.less_equal)
greater = _binary(ops.greater)
greater_equal = _binary(ops.greater_equal)
logical_and = _binary(ops.logical_and)
logical_or = _binary(ops.logical_or)

mod = floormod


@op_api(ops.atan2, exports=("atan2", "math.atan2"))
def atan2(y, x, name=None):
    """The angle of the point (x, y) in (-pi, pi], elementwise with broadcasting (TF's argument order: y first)."""
    return apply(ops.atan2, tensors(y, x))


floor_div = floordiv
neg = negative


@op_api(ops.divide, exports=("divide", "truediv", "math.divide", "math.truediv"))
def truediv(x, y, name=None):
    """x / y; integer tensors are first cast to float (int8/16 -> float32, int32/64 -> float64), as TF."""
    x, y = tensors(x, y)
    dt = x.dtype
    if dt.is_integer or dt.is_bool:
        if y.dtype is not dt:
            same_dtype("RealDiv", [x, y])
        to = dtypes.float64 if dt in (dtypes.int32, dtypes.int64) else dtypes.float32
        x, y = cast(x, to), cast(y, to)
    return apply("divide", [x, y])


divide = truediv


@op_api(ops.cast, exports=("cast",))
def cast(x, dtype, name=None):
    """Convert to another dtype (float -> int truncates toward zero)."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return apply("cast", [x], {"dtype": dtype})


@op_api(ops.select, exports=("where",))
def where(condition, x=None, y=None, name=None):
    """Elementwise `condition ? x : y` with broadcasting (`tf.where` with x and y)."""
    if x is None or y is None:
        raise ValueError("tfn.where needs both x and y (the one-argument form is not supported)")
    condition = convert_to_tensor(condition)
    x, y = tensors(x, y)
    return apply("select", [condition, x, y])


# --- Python's operators on tensors --------------------------------------------------------------------------

def _operator(fn, reflected):
    """A TensorBase operator method: `self <op> other` calls fn(self, other); reflected, fn(other, self)."""
    if reflected:
        def method(self, other):
            return fn(other, self)
    else:
        def method(self, other):
            return fn(self, other)
    return method


def _eq(self, other):
    return False if other is None else equal(self, other)


def _ne(self, other):
    return True if other is None else not_equal(self, other)


def _install_operators():
    """Install the arithmetic, comparison and logical operators on TensorBase (each calls its op)."""
    binary = {"add": add, "sub": subtract, "mul": multiply, "truediv": truediv, "floordiv": floordiv,
              "mod": floormod, "pow": pow, "and": logical_and, "or": logical_or}
    for name, fn in binary.items():
        setattr(TensorBase, f"__{name}__", _operator(fn, False))
        setattr(TensorBase, f"__r{name}__", _operator(fn, True))
    for name, fn in {"lt": less, "le": less_equal, "gt": greater, "ge": greater_equal}.items():
        setattr(TensorBase, f"__{name}__", _operator(fn, False))
    TensorBase.__eq__, TensorBase.__ne__ = _eq, _ne
    TensorBase.__neg__ = lambda self: negative(self)
    TensorBase.__abs__ = lambda self: abs(self)
    TensorBase.__invert__ = lambda self: logical_not(self)


_install_operators()
