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


_BY_NAME = {"linear": linear, "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
            "log_softmax": log_softmax}


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
