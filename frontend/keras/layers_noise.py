"""Keras's noise and regularisation layers: GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D
(active only when called with training=True, as in fit's train step; the identity in predict and evaluate) and
ActivityRegularization (adds l1 * sum|x| + l2 * sum x^2, over the batch size, to the model's losses). The random
draws come from tfn.random's counter-based generator: new on every call, also inside compiled code."""
import math

from tfn import random as tfn_random
from tfn.keras._ops import tf
from tfn.keras.layers import Dropout, Layer
from tfn.keras.layers_reshape import check_ndim


def _fraction(value, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{name}`. Expected a float value between 0 and 1. "
                         f"Received: {name}={value}")
    return float(value)


class GaussianNoise(Layer):
    """In training, inputs + normal(0, stddev) noise."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = _fraction(stddev, "stddev"), seed

    def call(self, inputs, training=False):
        if training and self.stddev > 0:
            return inputs + tfn_random.normal(tf.shape(inputs), stddev=self.stddev, seed=self.seed)
        return inputs

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(Layer):
    """In training, inputs * normal(1, sqrt(rate / (1 - rate))) noise (mean-preserving multiplicative noise)."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.seed = _fraction(rate, "rate"), seed

    def call(self, inputs, training=False):
        if training and 0 < self.rate < 1:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            return inputs * tfn_random.normal(tf.shape(inputs), mean=1.0, stddev=stddev, seed=self.seed)
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(Layer):
    """In training, dropout that keeps SELU's self-normalisation: dropped elements are set to SELU's negative
    saturation value -alpha * scale, then a * x + b restores the mean and variance (Keras's AlphaDropout)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = _fraction(rate, "rate"), noise_shape, seed

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
        shape = tf.shape(inputs) if self.noise_shape is None else self.noise_shape
        kept = tf.cast(tfn_random.uniform(shape, seed=self.seed) >= self.rate, "float32")
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1.0 - kept)) + b

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class SpatialDropout1D(Dropout):
    """Dropout of whole channels: (batch, steps, channels), one draw per example and channel."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, noise_shape=[None, 1, None], seed=seed, **kwargs)

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        self.built = True

    def get_config(self):
        config = super().get_config()
        config.pop("noise_shape", None)  # fixed by the layer
        return config


class SpatialDropout2D(Dropout):
    """Dropout of whole feature maps: (batch, h, w, channels), one draw per example and channel."""

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, noise_shape=[None, 1, 1, None], seed=seed, **kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"SpatialDropout2D supports data_format='channels_last' only, got {data_format!r}")

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        self.built = True

    def get_config(self):
        config = super().get_config()
        config.pop("noise_shape", None)  # fixed by the layer
        return {**config, "data_format": "channels_last"}


class ActivityRegularization(Layer):
    """The identity, adding (l1 * sum|x| + l2 * sum x^2) / batch size to the losses of each call (Keras's activity
    regularizer): fit minimises it with the model's loss, and the loss evaluate reports includes it, as in Keras."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs):
        penalty = tf.constant(0.0)
        if self.l1:
            penalty = penalty + self.l1 * tf.reduce_sum(tf.abs(inputs))
        if self.l2:
            penalty = penalty + self.l2 * tf.reduce_sum(tf.square(inputs))
        if len(inputs.shape) > 0:
            penalty = penalty / tf.cast(tf.shape(inputs)[0], "float32")
        self.add_loss(penalty)
        return inputs

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
