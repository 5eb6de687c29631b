"""`tfn.nn` activation functions as compositions of tfn ops (their gradients follow from the ops')."""
import math

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import math_ops

export("nn.sigmoid")(math_ops.sigmoid)
export("nn.tanh")(math_ops.tanh)

# SELU's constants (Klambauer et al. 2017), as TF and Keras spell them
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float(features, what):
    x = convert_to_tensor(features)
    if not x.dtype.is_floating:
        raise TypeError(f"{what} needs a floating-point tensor, got {x.dtype.name}")
    return x


@export("nn.relu6")
def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    x = convert_to_tensor(features)
    return math_ops.minimum(math_ops.maximum(x, 0), 6)


@export("nn.leaky_relu")
def leaky_relu(features, alpha=0.2, name=None):
    """features where positive, alpha * features elsewhere."""
    x = _float(features, "leaky_relu")
    return math_ops.where(x > 0, x, x * alpha)


@export("nn.elu")
def elu(features, name=None):
    """features where positive, exp(features) - 1 elsewhere."""
    x = _float(features, "elu")
    return math_ops.where(x > 0, x, math_ops.expm1(x))


@export("nn.selu")
def selu(features, name=None):
    """scale * elu with SELU's alpha: self-normalising for inputs of mean 0 and variance 1."""
    x = _float(features, "selu")
    negative = math_ops.expm1(x) * _SELU_ALPHA
    return math_ops.where(x > 0, x, negative) * _SELU_SCALE


@export("nn.gelu")
def gelu(features, approximate=False, name=None):
    """x * P(X <= x) for a standard normal X: 0.5 x (1 + erf(x / sqrt(2))), or with `approximate` the tanh form
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    x = _float(features, "gelu")
    if approximate:
        inner = (x + 0.044715 * x * x * x) * math.sqrt(2 / math.pi)
        return 0.5 * x * (math_ops.tanh(inner) + 1.0)
    return 0.5 * x * (math_ops.erf(x * (1 / math.sqrt(2))) + 1.0)


@export("nn.silu", "nn.swish")
def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features) (`tf.nn.swish` is the same function)."""
    x = _float(features, "silu")
    return x * math_ops.sigmoid(x * beta)


@export("nn.softsign")
def softsign(features, name=None):
    """features / (1 + |features|)."""
    x = _float(features, "softsign")
    return x / (math_ops.abs(x) + 1)


@export("math.log_sigmoid")
def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), finite for large |x|."""
    x = _float(x, "log_sigmoid")
    return -math_ops.softplus(-x)
