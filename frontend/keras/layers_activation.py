"""Keras's activation layers that tfn.keras.layers did not have: LeakyReLU, PReLU (a trainable slope), ELU and
Identity (ReLU, Softmax and Activation live in layers.py)."""
from tfn.keras._ops import tf
from tfn.keras.layers import Layer


class LeakyReLU(Layer):
    """x where x >= 0, negative_slope * x elsewhere."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:  # Keras 2's name for the slope
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                             f"Expected a float. Received: negative_slope={negative_slope}")
        self.negative_slope = float(negative_slope)

    def call(self, inputs):
        return tf.where(inputs >= 0, inputs, inputs * self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class PReLU(Layer):
    """relu(x) - alpha * relu(-x) with a trainable `alpha` of the input's shape less the batch axis (size 1 along
    `shared_axes`, which share one slope)."""

    def __init__(self, alpha_initializer="zeros", shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        if shared_axes is None or isinstance(shared_axes, (list, tuple)):
            self.shared_axes = None if shared_axes is None else list(shared_axes)
        else:
            self.shared_axes = [shared_axes]

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for i in self.shared_axes or []:
            if not isinstance(i, int) or not 1 <= i < len(input_shape):
                raise ValueError(f"Invalid value in `shared_axes`: {i}. Expected axes in [1, {len(input_shape)}) for "
                                 f"an input of shape {tuple(input_shape)}")
            shape[i - 1] = 1
        if None in shape:
            raise ValueError(f"PReLU needs the non-shared non-batch dimensions defined; received input shape "
                             f"{tuple(input_shape)} with shared_axes={self.shared_axes}")
        self.alpha = self.add_weight(tuple(shape), self.alpha_initializer, name="alpha")
        self.built = True

    def call(self, inputs):
        return tf.nn.relu(inputs) - self.alpha * tf.nn.relu(-inputs)

    def get_config(self):
        return {**super().get_config(), "alpha_initializer": self.alpha_initializer, "shared_axes": self.shared_axes}


class ELU(Layer):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return tf.where(inputs > 0, inputs, self.alpha * tf.math.expm1(tf.minimum(inputs, 0.0)))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Identity(Layer):
    """Its input, unchanged (a placeholder layer)."""

    def call(self, inputs):
        return inputs
