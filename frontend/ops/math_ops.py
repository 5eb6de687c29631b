"""Public math functions (`tfn.math.*` and their top-level aliases)."""
from tfn import dtypes
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects.rules import same_dtype


def _unary(name):
    @op_api(name)
    def fn(x, name=None):
        return apply(_op, [convert_to_tensor(x)])
    _op = name
    fn.__name__ = name
    fn.__doc__ = f"Elementwise `tfn.{name}`."
    return fn


def _binary(name):
    @op_api(name)
    def fn(x, y, name=None):
        return apply(_op, tensors(x, y))
    _op = name
    fn.__name__ = name
    fn.__doc__ = f"Elementwise `tfn.{name}` with broadcasting."
    return fn


identity = _unary("identity")
negative = _unary("negative")
abs = _unary("abs")  # noqa: A001
sign = _unary("sign")
square = _unary("square")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
exp = _unary("exp")
log = _unary("log")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
sin = _unary("sin")
cos = _unary("cos")
logical_not = _unary("logical_not")

add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
floordiv = _binary("floordiv")
floormod = _binary("floormod")
pow = _binary("pow")  # noqa: A001
maximum = _binary("maximum")
minimum = _binary("minimum")
equal = _binary("equal")
not_equal = _binary("not_equal")
less = _binary("less")
less_equal = _binary("less_equal")
greater = _binary("greater")
greater_equal = _binary("greater_equal")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")

mod = floormod
floor_div = floordiv
neg = negative


@op_api("divide")
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


@op_api("cast")
def cast(x, dtype, name=None):
    """Convert to another dtype (float -> int truncates toward zero)."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return apply("cast", [x], {"dtype": dtype})


@op_api("select")
def where(condition, x=None, y=None, name=None):
    """Elementwise `condition ? x : y` with broadcasting (`tf.where` with x and y)."""
    if x is None or y is None:
        raise ValueError("tfn.where needs both x and y (the one-argument form is not supported)")
    condition = convert_to_tensor(condition)
    x, y = tensors(x, y)
    return apply("select", [condition, x, y])


def _is_tensor(x):
    return isinstance(x, TensorBase)


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
