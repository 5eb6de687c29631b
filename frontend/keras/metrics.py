"""Keras metrics: running values held in non-trainable variables, updated eagerly or inside compiled steps."""
import re

import numpy as np

from tfn.keras import losses
from tfn.keras._ops import tf
from tfn.state.variables import Variable, init_scope


class Metric:
    """Base: `update_state(...)` accumulates, `result()` reads, `reset_state()` clears."""

    def __init__(self, name=None, dtype="float32"):
        self.name = name or _snake(type(self).__name__)
        self._variables = []

    def add_variable(self, name, initial=0.0):
        with init_scope():  # metric state lives outside any function, as Keras makes it on construction
            v = Variable(np.float32(initial), trainable=False, name=f"{self.name}/{name}")
        self._variables.append(v)
        return v

    @property
    def variables(self):
        return list(self._variables)

    def reset_state(self):
        for v in self._variables:
            v.assign(np.float32(0.0))

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class Mean(Metric):
    """The (weighted) mean of the values given so far."""

    def __init__(self, name="mean", dtype="float32"):
        super().__init__(name, dtype)
        self.total = self.add_variable("total")
        self.count = self.add_variable("count")

    def update_state(self, values, sample_weight=None):
        values = tf.cast(values, "float32")
        if sample_weight is None:
            self.total.assign_add(tf.reduce_sum(values))
            self.count.assign_add(tf.cast(tf.size(values), "float32"))
            return
        w = tf.cast(sample_weight, "float32") + tf.zeros_like(values)
        self.total.assign_add(tf.reduce_sum(values * w))
        self.count.assign_add(tf.reduce_sum(w))

    def result(self):
        return tf.where(self.count > 0, self.total / tf.maximum(self.count, 1e-12), tf.zeros_like(self.total))


class MeanMetricWrapper(Mean):
    """The mean of fn(y_true, y_pred) over the examples seen."""

    def __init__(self, fn, name, dtype="float32"):
        super().__init__(name, dtype)
        self._fn = fn

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)), sample_weight)


def _flat_labels(y_true, y_pred):
    if len(y_true.shape) == len(y_pred.shape) and tuple(y_true.shape)[-1] == 1:
        y_true = tf.squeeze(y_true, axis=-1)
    return y_true


def accuracy(y_true, y_pred):
    return tf.cast(tf.equal(y_true, tf.cast(y_pred, y_true.dtype)), "float32")


def sparse_categorical_accuracy(y_true, y_pred):
    labels = tf.cast(_flat_labels(y_true, y_pred), "int64")
    return tf.cast(tf.equal(tf.cast(tf.math.argmax(y_pred, axis=-1), "int64"), labels), "float32")


def categorical_accuracy(y_true, y_pred):
    return tf.cast(tf.equal(tf.math.argmax(y_true, axis=-1), tf.math.argmax(y_pred, axis=-1)), "float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = tf.cast(y_pred > threshold, "float32")
    return tf.reduce_mean(tf.cast(tf.equal(losses._like(y_true, y_pred), y_pred), "float32"), axis=-1)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly."""

    def __init__(self, name="accuracy", dtype="float32"):
        super().__init__(accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals the integer label."""

    def __init__(self, name="sparse_categorical_accuracy", dtype="float32"):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype="float32"):
        super().__init__(categorical_accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype="float32", threshold=0.5):
        super().__init__(lambda t, p: binary_accuracy(t, p, threshold), name, dtype)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype="float32"):
        super().__init__(losses.mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name="mean_absolute_error", dtype="float32"):
        super().__init__(losses.mean_absolute_error, name, dtype)


def get(identifier, loss=None):
    """A Metric from a name ('accuracy' picks the accuracy that fits `loss`, as Keras does) or a Metric."""
    if isinstance(identifier, Metric):
        return identifier
    if identifier in ("accuracy", "acc"):
        kind = {losses.SparseCategoricalCrossentropy: SparseCategoricalAccuracy,
                losses.CategoricalCrossentropy: CategoricalAccuracy,
                losses.BinaryCrossentropy: BinaryAccuracy}.get(type(loss), Accuracy)
        return kind(name=identifier)
    by_name = {"mse": MeanSquaredError, "mae": MeanAbsoluteError,
               "sparse_categorical_accuracy": SparseCategoricalAccuracy,
               "categorical_accuracy": CategoricalAccuracy, "binary_accuracy": BinaryAccuracy}
    if identifier in by_name:
        return by_name[identifier](name=identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier}")
