"""Keras losses: each the mean over the batch of a per-example loss (Keras's 'sum_over_batch_size')."""
from tfn.keras import activations
from tfn.keras._ops import tf
from tfn.ops.nn_ops import checked_labels

_EPSILON = 1e-7


class Loss:
    """loss(y_true, y_pred, sample_weight=None) -> scalar: the weighted per-example losses' mean."""

    name = "loss"

    def __init__(self, name=None):
        if name is not None:
            self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.convert_to_tensor(y_pred)
        per_example = self.call(tf.convert_to_tensor(y_true), y_pred)
        if sample_weight is not None:
            per_example = per_example * tf.cast(sample_weight, per_example.dtype)
        return tf.reduce_mean(per_example)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} does not define call(y_true, y_pred)")


def _like(y_true, y_pred):
    y_true = tf.cast(y_true, y_pred.dtype)
    if len(y_true.shape) == len(y_pred.shape) - 1:
        y_true = tf.expand_dims(y_true, -1)
    return y_true


def mean_squared_error(y_true, y_pred):
    """Per example: the mean over the last axis of (y_true - y_pred)**2."""
    y_pred = tf.convert_to_tensor(y_pred)
    return tf.reduce_mean(tf.square(_like(y_true, y_pred) - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_pred = tf.convert_to_tensor(y_pred)
    return tf.reduce_mean(tf.abs(_like(y_true, y_pred) - y_pred), axis=-1)


def _log_probs(y_pred, from_logits, axis=-1):
    if from_logits:
        return activations.log_softmax(y_pred, axis)
    # probabilities: renormalised and clipped away from 0 and 1, as Keras does
    p = y_pred / tf.reduce_sum(y_pred, axis=axis, keepdims=True)
    return tf.math.log(tf.minimum(tf.maximum(p, _EPSILON), 1.0 - _EPSILON))


def categorical_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = tf.convert_to_tensor(y_pred)
    return -tf.reduce_sum(tf.cast(y_true, y_pred.dtype) * _log_probs(y_pred, from_logits), axis=-1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.convert_to_tensor(y_true)
    if len(y_true.shape) == len(y_pred.shape):
        y_true = tf.squeeze(y_true, axis=-1)
    depth = tuple(y_pred.shape)[-1]
    onehot = tf.one_hot(checked_labels(tf.cast(y_true, "int32"), depth), depth, dtype=y_pred.dtype)
    return -tf.reduce_sum(onehot * _log_probs(y_pred, from_logits), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False):
    """Per example: the mean over the last axis; logits use max(x, 0) - x z + log(1 + exp(-|x|)) (stable)."""
    y_pred = tf.convert_to_tensor(y_pred)
    z = _like(y_true, y_pred)
    if from_logits:
        x = y_pred
        loss = tf.maximum(x, 0.0) - x * z + tf.math.log(1.0 + tf.exp(-tf.abs(x)))
    else:
        p = tf.minimum(tf.maximum(y_pred, _EPSILON), 1.0 - _EPSILON)
        loss = -(z * tf.math.log(p) + (1.0 - z) * tf.math.log(1.0 - p))
    return tf.reduce_mean(loss, axis=-1)


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class MeanAbsoluteError(Loss):
    name = "mean_absolute_error"

    def call(self, y_true, y_pred):
        return mean_absolute_error(y_true, y_pred)


class _Crossentropy(Loss):
    def __init__(self, from_logits=False, name=None):
        super().__init__(name)
        self.from_logits = from_logits


class CategoricalCrossentropy(_Crossentropy):
    name = "categorical_crossentropy"

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits)


class SparseCategoricalCrossentropy(_Crossentropy):
    name = "sparse_categorical_crossentropy"

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits)


class BinaryCrossentropy(_Crossentropy):
    name = "binary_crossentropy"

    def call(self, y_true, y_pred):
        return binary_crossentropy(y_true, y_pred, self.from_logits)


_BY_NAME = {"mse": MeanSquaredError, "mean_squared_error": MeanSquaredError, "mae": MeanAbsoluteError,
            "mean_absolute_error": MeanAbsoluteError, "categorical_crossentropy": CategoricalCrossentropy,
            "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
            "binary_crossentropy": BinaryCrossentropy}


def get(identifier):
    """A Loss from a name ('mse', 'sparse_categorical_crossentropy', ...), a Loss, or a callable."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")
