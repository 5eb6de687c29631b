"""Gradients of the inverse and hyperbolic trigonometric functions, tan, erfc and atan2 (as TF's math_grad.py)."""
from tfn.dialects import ops
from tfn.gradients.registry import gradient
from tfn.ops.math_grad import _TWO_OVER_SQRT_PI, _binary_grads
from tfn.ops.math_ops import cosh, exp, negative, rsqrt, sinh


@gradient(ops.atan)
def _atan_grad(op, g):
    x = op.inputs[0]
    return g / (1 + x * x)


@gradient(ops.asin)
def _asin_grad(op, g):
    x = op.inputs[0]
    return g * rsqrt(1 - x * x)


@gradient(ops.acos)
def _acos_grad(op, g):
    x = op.inputs[0]
    return negative(g * rsqrt(1 - x * x))


@gradient(ops.tan)
def _tan_grad(op, g):
    y = op.outputs[0]
    return g * (1 + y * y)


@gradient(ops.sinh)
def _sinh_grad(op, g):
    return g * cosh(op.inputs[0])


@gradient(ops.cosh)
def _cosh_grad(op, g):
    return g * sinh(op.inputs[0])


@gradient(ops.asinh)
def _asinh_grad(op, g):
    return g / cosh(op.outputs[0])


@gradient(ops.acosh)
def _acosh_grad(op, g):
    return g / sinh(op.outputs[0])


@gradient(ops.atanh)
def _atanh_grad(op, g):
    x = op.inputs[0]
    return g / (1 - x * x)


@gradient(ops.erfc)
def _erfc_grad(op, g):
    x = op.inputs[0]
    return g * (-_TWO_OVER_SQRT_PI * exp(negative(x * x)))


@gradient(ops.atan2)
def _atan2_grad(op, g):
    """d atan2(y, x) = (x dy - y dx) / (x**2 + y**2): the op's first operand is y."""
    y, x = op.inputs
    scale = g / (x * x + y * y)
    return _binary_grads(op, lambda: x * scale, lambda: negative(y * scale))
