"""Keras activations, written with tfn ops (softmax and log_softmax subtract the row maximum: stable)."""
from tfn.keras._ops import tf


def linear(x):
    return x


def relu(x):
    return tf.maximum(x, tf.zeros_like(x))


def sigmoid(x):
    return tf.sigmoid(x)


def tanh(x):
    return tf.tanh(x)


def log_softmax(x, axis=-1):
    """x - logsumexp(x): the maximum is subtracted (without gradient: the result does not depend on it)."""
    x = tf.convert_to_tensor(x)
    shifted = x - tf.stop_gradient(tf.reduce_max(x, axis=axis, keepdims=True))
    return shifted - tf.math.log(tf.reduce_sum(tf.exp(shifted), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    x = tf.convert_to_tensor(x)
    e = tf.exp(x - tf.stop_gradient(tf.reduce_max(x, axis=axis, keepdims=True)))
    return e / tf.reduce_sum(e, axis=axis, keepdims=True)


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
