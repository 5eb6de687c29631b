"""Public math functions (`tfn.math.*` and their top-level aliases)."""
from tfn import dtypes
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects import ops


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
sin = _unary(ops.sin)
cos = _unary(ops.cos)
logical_not = _unary(ops.logical_not)

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
floor_div = floordiv
neg = negative


@op_api(ops.divide, exports=("divide", "truediv", "math.divide", "math.truediv"))
def truediv(x, y, name=None):
    """x / y; integer tensors are first cast to float (int8/16 -> float32, int32/64 -> float64), as TF."""
    x, y = tensors(x, y)
    dt = x.dtype
    if dt.is_integer or dt.is_bool:
        if y.dtype is not dt:
            from tfn.dialects.rules import same_dtype
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


def _is_tensor(x):
    return isinstance(x, TensorBase)


from tfn.ops.linalg_ops import matmul  # noqa: E402,F401  (TensorBase.__matmul__ calls math_ops.matmul)
