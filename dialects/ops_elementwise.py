"""Elementwise ops: unary math, binary arithmetic with broadcasting, comparisons, logic, select, cast."""
import math

import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define


def _quiet(fn):
    """Run a NumPy kernel without floating-point warnings (TF's semantics are IEEE's)."""
    def kernel(arrays, attrs):
        with np.errstate(all="ignore"):
            return fn(*arrays)
    return kernel


def _unary(name, fn, allowed, summary, differentiable=True, tf_api=None):
    """An elementwise op of one operand; TF's public names default to tf.<name> and tf.math.<name>."""
    def infer(types, attrs):
        rules.allowed(name, types[0].dtype, allowed)
        return types[0]
    define(name, ["x"], infer, _quiet(fn), summary=summary, differentiable=differentiable,
           tf_api=tf_api or (name, "math." + name))


_TF_NAMES = {"floordiv": "FloorDiv", "floormod": "FloorMod", "divide": "RealDiv", "add": "AddV2"}


def _binary(name, fn, allowed, summary, result_dtype=None, differentiable=True, tf_api=None):
    """A broadcasting elementwise op of two operands; TF's public names default as `_unary`'s."""
    tf = _TF_NAMES.get(name) or "".join(p.capitalize() for p in name.split("_"))

    def infer(types, attrs):
        dt = rules.same_dtype(tf, types)
        rules.allowed(tf, dt, allowed)
        return rules.tensor(rules.broadcast_shapes(tf, types[0].shape, types[1].shape), result_dtype or dt)
    define(name, ["x", "y"], infer, _quiet(fn), tf_name=tf, summary=summary, differentiable=differentiable,
           tf_api=tf_api if tf_api is not None else (name, "math." + name))


def _check_int_divisor(y):
    if y.dtype.kind in "iu" and np.any(y == 0):
        raise InvalidArgumentError("Integer division by zero")


def _floordiv(x, y):
    _check_int_divisor(y)
    return np.floor_divide(x, y)


def _floormod(x, y):
    _check_int_divisor(y)
    return np.mod(x, y)


def _pow(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise InvalidArgumentError("Integers to negative integer powers are not allowed")
    return np.power(x, y)


def _wide(fn):
    """fn evaluated in float64 and rounded once to x's float type: float16/float32 results within 0.5 ulp. NumPy's
    own float32 functions are not within 1 ulp (measured over the whole float32 range: exp 2.4, log 3.4, expm1 2.6,
    log1p 1.9, tanh 1.4 ulp max), so they are no faster path. fn(y) may overwrite y: in place, the float64 pass
    costs 1-2 ms per million elements, a fresh array for each step would cost five times that (page faults). A
    ufunc's own buffered casting (dtype=float64 into a float32 out) is no faster on a million elements and twice
    as slow on a thousand (its set-up)."""
    def kernel(x):
        if x.dtype.kind != "f" or x.dtype.itemsize >= 8:
            return fn(x.copy())
        return fn(x.astype(np.float64)).astype(x.dtype)
    return kernel


def _in_place(ufunc):
    return lambda y: ufunc(y, out=y)


def _sigmoid(y):
    """1 / (1 + e**-y), in place."""
    np.negative(y, out=y)
    np.exp(y, out=y)
    y += 1
    return np.reciprocal(y, out=y)


def _softplus(x):
    """log(1 + e**x) without overflow: max(x, 0) + log1p(e**-|x|)."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _erf(x):
    """NumPy has no erf: libm's (math.erf), element by element, on float64."""
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x), np.float64).astype(x.dtype)


def _erfc(x):
    """1 - erf(x) without cancellation: libm's erfc, element by element, on float64."""
    return np.asarray(np.frompyfunc(math.erfc, 1, 1)(x), np.float64).astype(x.dtype)


def _atan2(y, x):
    """The angle of (x, y) in (-pi, pi], in float64 and rounded once (NumPy's float32 arctan2 is not within 1 ulp)."""
    if y.dtype.kind != "f" or y.dtype.itemsize >= 8:
        return np.arctan2(y, x)
    return np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(y.dtype)


def _rsqrt(x):
    return (1 / np.sqrt(x)).astype(x.dtype)


def _add(x, y):
    if x.dtype == object:
        return np.asarray(np.frompyfunc(lambda a, b: a + b, 2, 1)(x, y), dtype=object)  # 0-d: not a scalar
    return np.add(x, y)


SIGNED = rules.SIGNED
F = rules.FLOATS
N = rules.NUMERIC
B = rules.BOOL

_unary("identity", lambda x: x.copy(), rules.ANY, "x", tf_api="identity")
_unary("negative", np.negative, SIGNED, "-x")
_unary("abs", np.abs, SIGNED, "|x|")
_unary("sign", lambda x: np.sign(x).astype(x.dtype), SIGNED, "-1, 0 or 1 by the sign of x (NaN stays NaN)")
_unary("square", np.square, N, "x * x")
_unary("sqrt", np.sqrt, F, "square root")
_unary("rsqrt", _rsqrt, F, "1 / sqrt(x)", tf_api="math.rsqrt")
_unary("exp", _wide(_in_place(np.exp)), F, "e ** x")
_unary("log", _wide(_in_place(np.log)), F, "natural logarithm", tf_api="math.log")
_unary("tanh", _wide(_in_place(np.tanh)), F, "hyperbolic tangent")
_unary("sigmoid", _wide(_sigmoid), F, "1 / (1 + exp(-x))")
_unary("log1p", _wide(_in_place(np.log1p)), F, "log(1 + x), accurate near 0", tf_api="math.log1p")
_unary("expm1", _wide(_in_place(np.expm1)), F, "exp(x) - 1, accurate near 0", tf_api="math.expm1")
_unary("erf", _wide(_erf), F, "the error function", tf_api="math.erf")
_unary("softplus", _wide(_softplus), F, "log(1 + exp(x))", tf_api=("math.softplus", "nn.softplus"))
_unary("sin", np.sin, F, "sine")
_unary("cos", np.cos, F, "cosine")
# TF's less common elementwise functions: libm's, in float64 and rounded once (as erf); TF exports them under tf.math
# and (most) at the top level too.
for _name, _fn, _what in (("atan", np.arctan, "inverse tangent"), ("asin", np.arcsin, "inverse sine"),
                          ("acos", np.arccos, "inverse cosine"), ("tan", np.tan, "tangent"),
                          ("sinh", np.sinh, "hyperbolic sine"), ("cosh", np.cosh, "hyperbolic cosine"),
                          ("asinh", np.arcsinh, "inverse hyperbolic sine"),
                          ("acosh", np.arccosh, "inverse hyperbolic cosine"),
                          ("atanh", np.arctanh, "inverse hyperbolic tangent")):
    _unary(_name, _wide(_in_place(_fn)), F, _what)
_unary("erfc", _wide(_erfc), F, "1 - erf(x), accurate where erf(x) is near 1", tf_api="math.erfc")
_unary("logical_not", np.logical_not, B, "boolean not", differentiable=False)

_binary("add", _add, N + (dtypes.string,), "x + y")
_binary("subtract", np.subtract, N, "x - y")
_binary("multiply", np.multiply, N, "x * y")
_binary("divide", np.true_divide, F, "x / y on floats (the frontend casts integers first, as TF's truediv)",
        tf_api=("divide", "truediv", "math.divide", "math.truediv"))
_binary("floordiv", _floordiv, N, "floor(x / y)", tf_api="math.floordiv")
_binary("floormod", _floormod, N, "x - floor(x / y) * y (the sign of y, as Python's %)",
        tf_api=("math.floormod", "math.mod"))
_binary("pow", _pow, N, "x ** y")
_binary("atan2", _atan2, F, "the angle of the point (y, x) = (operand x, operand y), in (-pi, pi]",
        tf_api=("atan2", "math.atan2"))
_binary("maximum", np.maximum, N, "elementwise max (NaN propagates)")
_binary("minimum", np.minimum, N, "elementwise min (NaN propagates)")
for _name, _fn in (("equal", np.equal), ("not_equal", np.not_equal)):
    _binary(_name, _fn, rules.ANY, f"x {'==' if _name == 'equal' else '!='} y", dtypes.bool_, False)
for _name, _fn, _sym in (("less", np.less, "<"), ("less_equal", np.less_equal, "<="),
                         ("greater", np.greater, ">"), ("greater_equal", np.greater_equal, ">=")):
    _binary(_name, _fn, N, f"x {_sym} y", dtypes.bool_, False)
_binary("logical_and", np.logical_and, B, "x and y", differentiable=False)
_binary("logical_or", np.logical_or, B, "x or y", differentiable=False)
_binary("bitwise_xor", np.bitwise_xor, rules.INTEGERS, "x ^ y, bit by bit (tfn.random's Philox generator)",
        differentiable=False, tf_api=())


def _select_infer(types, attrs):
    rules.allowed("SelectV2", types[0].dtype, B)
    dt = rules.same_dtype("SelectV2", types[1:])
    return rules.tensor(rules.broadcast_shapes("SelectV2", *(t.shape for t in types)), dt)


define("select", ["cond", "x", "y"], _select_infer, lambda a, _: np.where(*a), tf_name="SelectV2",
       summary="cond ? x : y, broadcasting all three", tf_api="where")


def _cast_infer(types, attrs):
    if types[0].dtype.is_string or attrs["dtype"].is_string:
        raise InvalidArgumentError("Cast between string and numeric tensors is not supported [Op:Cast]")
    return rules.tensor(types[0].shape, attrs["dtype"])


def _cast_kernel(arrays, attrs):
    with np.errstate(all="ignore"):
        x, to = arrays[0], attrs["dtype"]
        if x.dtype.kind == "f" and to.is_integer:
            x = np.trunc(x)
        return x.astype(to.np)


define("cast", ["x"], _cast_infer, _cast_kernel, {"dtype": "dtype"}, summary="convert to another dtype", tf_api="cast")
