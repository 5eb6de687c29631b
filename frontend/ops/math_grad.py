"""Gradients of the elementwise, reduction and matmul ops, written with tfn ops (they run eagerly and traced)."""
from tfn.dialects import ops
from tfn.gradients.registry import gradient
from tfn.ops import array_ops, fill_ops, reduction_ops, shape_ops
from tfn.ops.linalg_ops import matmul
from tfn.ops.math_ops import (
    cast,
    cos,
    equal,
    exp,
    floordiv,
    greater,
    greater_equal,
    less_equal,
    log,
    negative,
    sigmoid,
    sign,
    sin,
    where,
)


def unbroadcast(grad, x):
    """`grad` (of a broadcast result's shape) summed back to the shape of the input `x`."""
    gs, xs = grad._shape, x._shape
    lead = len(gs) - len(xs)
    if lead:
        grad = reduction_ops.reduce_sum(grad, list(range(lead)))
    ones = [i for i, (d, e) in enumerate(zip(xs, grad._shape)) if d == 1 and e != 1]
    if ones:  # (a dynamic result dim against a static 1 may be any size: summed too)
        grad = reduction_ops.reduce_sum(grad, ones, keepdims=True)
    return grad


def _binary_grads(op, gx, gy):
    """Each operand's gradient reduced to its shape; `gx`/`gy` are callables, called only when needed."""
    x, y = op.inputs
    return (unbroadcast(gx(), x) if op.needs[0] else None), (unbroadcast(gy(), y) if op.needs[1] else None)


# unary -------------------------------------------------------------------------------------------------

@gradient(ops.identity)
def _identity_grad(op, g):
    return g


@gradient(ops.negative)
def _negative_grad(op, g):
    return negative(g)


@gradient(ops.abs)
def _abs_grad(op, g):
    return g * sign(op.inputs[0])


@gradient(ops.sign)
def _sign_grad(op, g):
    return fill_ops.zeros_like(op.inputs[0])


@gradient(ops.square)
def _square_grad(op, g):
    return g * (2 * op.inputs[0])


@gradient(ops.sqrt)
def _sqrt_grad(op, g):
    return g * 0.5 / op.outputs[0]


@gradient(ops.rsqrt)
def _rsqrt_grad(op, g):
    z = op.outputs[0]
    return g * -0.5 * (z * z * z)


@gradient(ops.exp)
def _exp_grad(op, g):
    return g * op.outputs[0]


@gradient(ops.log)
def _log_grad(op, g):
    return g / op.inputs[0]


@gradient(ops.log1p)
def _log1p_grad(op, g):
    return g / (1 + op.inputs[0])


@gradient(ops.expm1)
def _expm1_grad(op, g):
    return g * (op.outputs[0] + 1)


@gradient(ops.erf)
def _erf_grad(op, g):
    x = op.inputs[0]
    return g * (_TWO_OVER_SQRT_PI * exp(negative(x * x)))


@gradient(ops.softplus)
def _softplus_grad(op, g):
    return g * sigmoid(op.inputs[0])


_TWO_OVER_SQRT_PI = 1.1283791670955126  # d/dx erf(x) = 2/sqrt(pi) exp(-x^2)


@gradient(ops.tanh)
def _tanh_grad(op, g):
    z = op.outputs[0]
    return g * (1 - z * z)


@gradient(ops.sigmoid)
def _sigmoid_grad(op, g):
    z = op.outputs[0]
    return g * (z * (1 - z))


@gradient(ops.sin)
def _sin_grad(op, g):
    return g * cos(op.inputs[0])


@gradient(ops.cos)
def _cos_grad(op, g):
    return negative(g * sin(op.inputs[0]))


@gradient(ops.cast)
def _cast_grad(op, g):
    x = op.inputs[0]
    return cast(g, x.dtype) if x.dtype.is_floating and g.dtype.is_floating else None


# binary ------------------------------------------------------------------------------------------------

@gradient(ops.add)
def _add_grad(op, g):
    return _binary_grads(op, lambda: g, lambda: g)


@gradient(ops.subtract)
def _subtract_grad(op, g):
    return _binary_grads(op, lambda: g, lambda: negative(g))


@gradient(ops.multiply)
def _multiply_grad(op, g):
    x, y = op.inputs
    return _binary_grads(op, lambda: g * y, lambda: g * x)


@gradient(ops.divide)
def _divide_grad(op, g):
    x, y = op.inputs
    return _binary_grads(op, lambda: g / y, lambda: negative(g) * x / (y * y))


@gradient(ops.floordiv)
def _floordiv_grad(op, g):
    return None, None  # as TF's FloorDiv: piecewise constant, no gradient


@gradient(ops.floormod)
def _floormod_grad(op, g):
    x, y = op.inputs
    return _binary_grads(op, lambda: g, lambda: negative(g) * floordiv(x, y))


@gradient(ops.pow)
def _pow_grad(op, g):
    x, y = op.inputs
    z = op.outputs[0]

    def gy():
        safe = greater(x, 0)  # as TF: the y-gradient is 0 where log(x) is undefined
        return g * z * where(safe, log(where(safe, x, fill_ops.ones_like(x))), fill_ops.zeros_like(x))
    return _binary_grads(op, lambda: g * y * (x ** (y - 1)), gy)


def _select_grads(op, g, mask):
    zeros = fill_ops.zeros_like(g)
    return _binary_grads(op, lambda: where(mask, g, zeros), lambda: where(mask, zeros, g))


@gradient(ops.maximum)
def _maximum_grad(op, g):
    x, y = op.inputs
    return _select_grads(op, g, greater_equal(x, y))


@gradient(ops.minimum)
def _minimum_grad(op, g):
    x, y = op.inputs
    return _select_grads(op, g, less_equal(x, y))


@gradient(ops.select)
def _select_grad(op, g):
    c, x, y = op.inputs
    zeros = fill_ops.zeros_like(g)
    return None, unbroadcast(where(c, g, zeros), x), unbroadcast(where(c, zeros, g), y)


# reductions --------------------------------------------------------------------------------------------

def _keepdims(op, t):
    """An output-shaped tensor `t` with the reduced axes back as 1s."""
    if op.attrs["keepdims"]:
        return t
    for a in op.attrs["axis"]:
        t = array_ops.expand_dims(t, a)
    return t


def _spread(t, x):
    """A keepdims-shaped tensor broadcast to the shape of x (dynamic dims included)."""
    if None not in x._shape:
        return array_ops.broadcast_to(t, x._shape)
    return t * fill_ops.ones_like(x)


@gradient(ops.reduce_sum)
def _reduce_sum_grad(op, g):
    return _spread(_keepdims(op, g), op.inputs[0])


@gradient(ops.reduce_mean)
def _reduce_mean_grad(op, g):
    x, z = op.inputs[0], op.outputs[0]
    count = cast(shape_ops.size(x), g.dtype) / cast(shape_ops.size(z), g.dtype)
    return _spread(_keepdims(op, g), x) / count


@gradient(ops.reduce_prod)
def _reduce_prod_grad(op, g):
    # Zero-safe: the product of the others is prod/x_i without zeros, prod of the non-zeros at the only zero,
    # and 0 where the group has another zero.
    x = op.inputs[0]
    axes = list(op.attrs["axis"])
    is_zero = equal(x, fill_ops.zeros_like(x))
    one = fill_ops.ones_like(x)
    zeros_in_group = reduction_ops.reduce_sum(cast(is_zero, x.dtype), axes, keepdims=True)
    prod_nonzero = reduction_ops.reduce_prod(where(is_zero, one, x), axes, keepdims=True)
    safe_x = where(is_zero, one, x)
    no_zero = equal(zeros_in_group, 0)
    one_zero = equal(zeros_in_group, 1)
    others = where(is_zero, where(one_zero, prod_nonzero * one, 0 * one),
                   where(no_zero, prod_nonzero / safe_x, 0 * one))
    return _keepdims(op, g) * others


def _extreme_grad(op, g):
    x = op.inputs[0]
    z = _keepdims(op, op.outputs[0])
    hit = cast(equal(x, z), g.dtype)
    count = reduction_ops.reduce_sum(hit, list(op.attrs["axis"]), keepdims=True)
    return hit / count * _keepdims(op, g)


gradient(ops.reduce_max)(_extreme_grad)
gradient(ops.reduce_min)(_extreme_grad)


# matmul ------------------------------------------------------------------------------------------------

@gradient(ops.matmul)
def _matmul_grad(op, g):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        ga, gb = (lambda: matmul(g, b, transpose_b=True)), (lambda: matmul(a, g, transpose_a=True))
    elif ta and not tb:
        ga, gb = (lambda: matmul(b, g, transpose_b=True)), (lambda: matmul(a, g))
    elif not ta and tb:
        ga, gb = (lambda: matmul(g, b)), (lambda: matmul(g, a, transpose_a=True))
    else:
        ga = lambda: matmul(b, g, transpose_a=True, transpose_b=True)  # noqa: E731
        gb = lambda: matmul(g, a, transpose_a=True, transpose_b=True)  # noqa: E731
    return _binary_grads(op, ga, gb)
