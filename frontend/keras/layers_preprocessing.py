"""Keras's numeric preprocessing layers: Rescaling (inputs * scale + offset) and Normalization (standardises each
feature by a mean and variance given, or learnt from data by `adapt`)."""
import numpy as np

from tfn.data.dataset import Dataset
from tfn.keras._ops import tf
from tfn.keras.layers import Layer

_EPSILON = 1e-7  # Keras's backend.epsilon(): the smallest standard deviation Normalization divides by


class Rescaling(Layer):
    """inputs * scale + offset (e.g. Rescaling(1 / 255) for 8-bit images); integer inputs are cast to float32."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        x = inputs if inputs.dtype.is_floating else tf.cast(inputs, "float32")
        scale = tf.cast(tf.convert_to_tensor(self.scale), "float32")
        offset = tf.cast(tf.convert_to_tensor(self.offset), "float32")
        return x * scale + offset

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


def _batches(data):
    """The NumPy batches `adapt` reads: one array, or a dataset's / an iterable's elements (x of (x, y) pairs)."""
    if isinstance(data, np.ndarray) or hasattr(data, "numpy"):
        yield np.asarray(data)
        return
    if isinstance(data, Dataset):
        for element in data:
            element = element[0] if isinstance(element, tuple) else element
            yield np.asarray(element)
        return
    if not hasattr(data, "__iter__"):
        raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, tensors, "
                        f"`tfn.data.Dataset`, and iterables of batches (e.g. list, generator).")
    any_batch = False
    for element in data:
        any_batch = True
        element = element[0] if isinstance(element, tuple) else element
        yield np.asarray(element)
    if not any_batch:
        raise ValueError("adapt() received an empty iterable (no batches). Expected at least one batch.")


class Normalization(Layer):
    """(inputs - mean) / max(sqrt(variance), 1e-7) per position of the kept `axis` (default: the last; None: one
    mean and variance for everything); `invert=True` maps normalised values back. The statistics are `mean` and
    `variance` given here, or the non-trainable weights mean / variance / count that `adapt(data)` sets."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. Received: "
                             f"mean={mean} and variance={variance}")
        self.axis, self.input_mean, self.input_variance, self.invert = axis, mean, variance, invert

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with ndim={ndim}, "
                             f"while axis={self.axis}")
        self._keep = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received axis={self.axis}, "
                                 f"inputs.shape={tuple(input_shape)}, with unknown axis at index {d}")
        self._reduce = tuple(d for d in range(ndim) if d not in self._keep)
        self._bshape = [input_shape[d] if d in self._keep else 1 for d in range(ndim)]
        self._build_shape = tuple(input_shape)
        shape = tuple(input_shape[d] for d in self._keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(shape, "zeros", trainable=False, name="mean")
            self.adapt_variance = self.add_weight(shape, "ones", trainable=False, name="variance")
            self.count = self.add_weight((), "zeros", dtype="int64", trainable=False, name="count")
        else:
            self._mean = self._broadcast(self.input_mean)
            self._variance = self._broadcast(self.input_variance)
        self.built = True

    def _broadcast(self, value):
        value = np.asarray(value, np.float32)
        if value.ndim:
            expanded = [1] * len(self._bshape)
            for i in range(1, value.ndim + 1):
                expanded[self._keep[-i]] = value.shape[-i]
            value = value.reshape(expanded)
        return np.broadcast_to(value, self._bshape).astype(np.float32)

    def adapt(self, data):
        """Set mean and variance (and count) from the data: an array or tensor, a tfn.data.Dataset of batches, or an
        iterable of batches (the statistics of all their rows together)."""
        if self.input_mean is not None:
            raise ValueError("adapt() cannot be used on a Normalization layer given `mean` and `variance`")
        count, total, squares = 0, None, None
        for batch in _batches(data):
            batch = batch.astype(np.float64)
            if not self.built:
                self.build(batch.shape)
                self.built = True
            elif any(batch.shape[d] != self._build_shape[d] for d in self._keep):
                raise ValueError(f"The layer was built with input_shape={self._build_shape}, but adapt() is being "
                                 f"called with data with an incompatible shape, data.shape={batch.shape}")
            n = int(np.prod([batch.shape[d] for d in self._reduce])) if self._reduce else 1
            s, q = batch.sum(axis=self._reduce), (batch ** 2).sum(axis=self._reduce)
            count, total, squares = count + n, (s if total is None else total + s), (q if squares is None
                                                                                       else squares + q)
        mean = total / count
        self.adapt_mean.assign(mean.astype(np.float32))
        self.adapt_variance.assign(np.maximum(squares / count - mean ** 2, 0).astype(np.float32))
        self.count.assign(np.int64(count))

    def call(self, inputs):
        x = inputs if inputs.dtype.is_floating else tf.cast(inputs, "float32")
        if self.input_mean is None:
            mean = tf.reshape(self.adapt_mean, self._bshape)
            variance = tf.reshape(self.adapt_variance, self._bshape)
        else:
            mean, variance = tf.constant(self._mean), tf.constant(self._variance)
        std = tf.maximum(tf.sqrt(variance), _EPSILON)
        return mean + x * std if self.invert else (x - mean) / std

    def get_config(self):
        mean = self.input_mean
        variance = self.input_variance
        return {**super().get_config(), "axis": self.axis,
                "mean": mean.tolist() if isinstance(mean, np.ndarray) else mean,
                "variance": variance.tolist() if isinstance(variance, np.ndarray) else variance,
                "invert": self.invert}
