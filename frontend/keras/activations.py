"""Keras activations, by name or callable (tfn.nn's softmax and log_softmax subtract the row maximum: stable)."""
from tfn.keras._ops import tf


def linear(x):
    return x


def relu(x):
    return tf.nn.relu(x)


def sigmoid(x):
    return tf.sigmoid(x)


def tanh(x):
    return tf.tanh(x)


def log_softmax(x, axis=-1):
    """x - logsumexp(x), stable (tfn.nn.log_softmax)."""
    return tf.nn.log_softmax(x, axis)


def softmax(x, axis=-1):
    return tf.nn.softmax(x, axis)


def elu(x, alpha=1.0):
    """x where positive, alpha * (exp(x) - 1) elsewhere."""
    return tf.nn.elu(x) if alpha == 1.0 else tf.where(x > 0, x, alpha * tf.math.expm1(x))


def selu(x):
    return tf.nn.selu(x)


def gelu(x, approximate=False):
    return tf.nn.gelu(x, approximate=approximate)


def silu(x):
    return tf.nn.silu(x)


def softplus(x):
    return tf.nn.softplus(x)


def softsign(x):
    return tf.nn.softsign(x)


def relu6(x):
    return tf.nn.relu6(x)


def leaky_relu(x, negative_slope=0.2):
    return tf.nn.leaky_relu(x, alpha=negative_slope)


def exponential(x):
    return tf.exp(x)


def hard_sigmoid(x):
    """Keras 3's piecewise-linear sigmoid: relu6(x + 3) / 6."""
    return tf.nn.relu6(x + 3.0) / 6.0


_BY_NAME = {"linear": linear, "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
            "log_softmax": log_softmax, "elu": elu, "selu": selu, "gelu": gelu, "silu": silu, "swish": silu,
            "softplus": softplus, "softsign": softsign, "relu6": relu6, "leaky_relu": leaky_relu,
            "exponential": exponential, "hard_sigmoid": hard_sigmoid}


def get(identifier):
    """The activation function named (None is linear), or the callable given."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")
