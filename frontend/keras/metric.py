"""The Keras metric base: running values held in non-trainable variables (made outside any function), updated
eagerly or inside compiled train/test steps, read by `result()`; and the reducing metrics `Mean`, `Sum` and
`MeanMetricWrapper`."""
import re

import numpy as np

from tfn.keras._ops import tf
from tfn.state.variables import Variable, init_scope


class Metric:
    """Base: `update_state(...)` accumulates, `result()` reads, `reset_state()` clears. `_direction` ('up' or
    'down', when meaningful) tells callbacks in mode 'auto' whether higher is better."""

    _direction = None

    def __init__(self, name=None, dtype="float32"):
        self.name = name or _snake(type(self).__name__)
        self.dtype = dtype or "float32"
        self._variables, self._initial = [], []

    def add_variable(self, name, initial=0.0, shape=()):
        """A float32 variable of `shape` filled with `initial`, reset to it by reset_state."""
        value = np.full(tuple(shape), initial, np.float32)
        with init_scope():  # metric state lives outside any function, as Keras makes it on construction
            v = Variable(value, trainable=False, name=f"{self.name}/{name}")
        self._variables.append(v)
        self._initial.append(value)
        return v

    @property
    def variables(self):
        return list(self._variables)

    def reset_state(self):
        for v, value in zip(self._variables, self._initial):
            v.assign(value)

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def divide_no_nan(a, b):
    """a / b, 0 where b is 0."""
    safe = tf.where(tf.equal(b, 0.0), tf.ones_like(b), b)
    return tf.where(tf.equal(b, 0.0), tf.zeros_like(a / safe), a / safe)


def _weights_like(values, sample_weight):
    """sample_weight broadcast to values' shape (a trailing axis of 1 dropped, missing trailing axes added)."""
    w = tf.cast(sample_weight, "float32")
    rv, rw = len(values.shape), len(w.shape)
    if rw == rv + 1 and tuple(w.shape)[-1] == 1:
        w = tf.squeeze(w, axis=-1)
    while len(w.shape) < rv:
        w = tf.expand_dims(w, -1)
    return w + tf.zeros_like(values)


class Sum(Metric):
    """The (weighted) sum of the values given so far."""

    def __init__(self, name="sum", dtype="float32"):
        super().__init__(name, dtype)
        self.total = self.add_variable("total")

    def update_state(self, values, sample_weight=None):
        values = tf.cast(values, "float32")
        if sample_weight is not None:
            values = values * _weights_like(values, sample_weight)
        self.total.assign_add(tf.reduce_sum(values))

    def result(self):
        return tf.identity(self.total)


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
        w = _weights_like(values, sample_weight)
        self.total.assign_add(tf.reduce_sum(values * w))
        self.count.assign_add(tf.reduce_sum(w))

    def result(self):
        return divide_no_nan(self.total, self.count)


class MeanMetricWrapper(Mean):
    """The mean of fn(y_true, y_pred, **kwargs) over the examples seen."""

    def __init__(self, fn, name=None, dtype="float32", **kwargs):
        super().__init__(name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._fn(tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred), **self._fn_kwargs)
        super().update_state(values, sample_weight)
