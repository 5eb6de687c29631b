"""Keras's shape layers: Reshape, Permute, RepeatVector, Cropping1D/2D, ZeroPadding1D/2D, UpSampling1D/2D
(nearest) and Lambda (any Python function of the inputs, traced like the rest of the model)."""
import inspect

import numpy as np

from tfn.keras._ops import tf
from tfn.keras.layers import Layer


def int_tuple(value, n, name, allow_zero=False):
    """`value` (an int, or n ints) as a tuple of n ints, each positive (or >= 0 with allow_zero): Keras's check."""
    values = (value,) * n if isinstance(value, int) and not isinstance(value, bool) else value
    low = 0 if allow_zero else 1
    try:
        values = tuple(values)
    except TypeError:
        values = None
    if values is None or len(values) != n or any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) or
                                                 v < low for v in values):
        need = "non-negative" if allow_zero else "positive"
        raise ValueError(f"The `{name}` argument must be a tuple of {n} {need} integers. Received: {name}={value}")
    return tuple(int(v) for v in values)


def check_ndim(layer, input_shape, ndim):
    """Keras's InputSpec error for an input of the wrong rank."""
    if len(input_shape) != ndim:
        raise ValueError(f'Input 0 of layer "{layer.name}" is incompatible with the layer: expected ndim={ndim}, '
                         f"found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}")


def _channels_last(data_format, what):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{what} supports data_format='channels_last' only, got {data_format!r}")


class Reshape(Layer):
    """(batch, ...) -> (batch, *target_shape); one entry of target_shape may be -1 (inferred)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(target_shape, (list, tuple)):
            raise TypeError(f"The `target_shape` argument must be a tuple of integers. Received: "
                            f"target_shape={target_shape!r}")
        target = tuple(target_shape)
        if any(not isinstance(d, (int, np.integer)) or (d < 1 and d != -1) for d in target) or \
                sum(d == -1 for d in target) > 1:
            raise ValueError(f"The `target_shape` argument must be a tuple of positive integers with at most one -1. "
                             f"Received: target_shape={target_shape}")
        self.target_shape = tuple(int(d) for d in target)

    def build(self, input_shape):
        rest = input_shape[1:]
        target = list(self.target_shape)
        known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
        if None not in rest:
            size = int(np.prod(rest, dtype=np.int64))
            if -1 in target:
                if known == 0 or size % known:
                    raise ValueError(f"The total size of the tensor must be unchanged. Received: input_shape="
                                     f"{tuple(input_shape)}, target_shape={self.target_shape}")
                target[target.index(-1)] = size // known
            elif size != known:
                raise ValueError(f"The total size of the tensor must be unchanged. Received: input_shape="
                                 f"{tuple(input_shape)}, target_shape={self.target_shape}")
        self._target = target
        self.built = True

    def call(self, inputs):
        if -1 not in self._target:
            return tf.reshape(inputs, [-1, *self._target])
        batch = tf.shape(inputs)[0]  # -1 is taken by the inferred axis: the batch size is read at run time
        return tf.reshape(inputs, tf.stack([batch] + [tf.constant(d, "int32") for d in self._target]))

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Permute(Layer):
    """The non-batch axes reordered: `dims` is a permutation of 1..rank-1 (the batch axis stays first)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(dims, (list, tuple)):
            raise TypeError(f"The `dims` argument of Permute must be a tuple of integers. Received: dims={dims!r}")
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={dims}")

    def build(self, input_shape):
        check_ndim(self, input_shape, len(self.dims) + 1)
        self.built = True

    def call(self, inputs):
        return tf.transpose(inputs, [0, *self.dims])

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features): the input repeated n times."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = n

    def build(self, input_shape):
        check_ndim(self, input_shape, 2)
        self.built = True

    def call(self, inputs):
        return tf.tile(tf.expand_dims(inputs, 1), [1, self.n, 1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


def _pairs(value, name):
    """An int, (symmetric_h, symmetric_w) or ((top, bottom), (left, right)) as the last form."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((value, value), (value, value))
    if hasattr(value, "__len__"):
        if len(value) != 2:
            raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
        return (int_tuple(value[0], 2, f"1st entry of {name}", True), int_tuple(value[1], 2, f"2nd entry of {name}",
                                                                               True))
    raise ValueError(f"`{name}` should be either an int, a tuple of 2 ints, or a tuple of 2 tuples of 2 ints. "
                     f"Received: {name}={value}.")


def _crop(inputs, axis_crops):
    """inputs with (axis, begin, end) crops; sizes unknown until run time cropped by slicing all the same."""
    index = [slice(None)] * len(inputs.shape)
    for axis, begin, end in axis_crops:
        index[axis] = slice(begin, -end if end else None)
    return inputs[tuple(index)]


class Cropping1D(Layer):
    """(batch, steps, features): `cropping` = (start, end) steps removed."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = int_tuple(cropping, 2, "cropping", allow_zero=True)

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        if input_shape[1] is not None and input_shape[1] - sum(self.cropping) <= 0:
            raise ValueError(f"`cropping` parameter of `Cropping1D` layer must be smaller than the input length. "
                             f"Received: input_shape={tuple(input_shape)}, cropping={self.cropping}")
        self.built = True

    def call(self, inputs):
        return _crop(inputs, [(1, *self.cropping)])

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class Cropping2D(Layer):
    """(batch, rows, cols, channels): ((top, bottom), (left, right)) removed."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Cropping2D")
        self.cropping = _pairs(cropping, "cropping")

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        for axis, crop in zip((1, 2), self.cropping):
            if input_shape[axis] is not None and input_shape[axis] - sum(crop) <= 0:
                raise ValueError(f"Values in `cropping` argument should be smaller than the corresponding spatial "
                                 f"dimension of the input. Received: input_shape={tuple(input_shape)}, "
                                 f"cropping={self.cropping}")
        self.built = True

    def call(self, inputs):
        return _crop(inputs, [(1, *self.cropping[0]), (2, *self.cropping[1])])

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": "channels_last"}


class ZeroPadding1D(Layer):
    """(batch, steps, features): `padding` = (start, end) zero steps added."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "ZeroPadding1D")
        self.padding = int_tuple(padding, 2, "padding", allow_zero=True)

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        self.built = True

    def call(self, inputs):
        return tf.pad(inputs, [[0, 0], list(self.padding), [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": "channels_last"}


class ZeroPadding2D(Layer):
    """(batch, rows, cols, channels): ((top, bottom), (left, right)) zero rows and columns added."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "ZeroPadding2D")
        self.padding = _pairs(padding, "padding")

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        self.built = True

    def call(self, inputs):
        return tf.pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]), [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": "channels_last"}


def _repeat_axis(x, axis, times):
    """Each slice of x along `axis` repeated `times` times in place (nearest-neighbour upsampling)."""
    if times == 1:
        return x
    shape = list(x.shape)
    tiled = tf.tile(tf.expand_dims(x, axis + 1), [1] * (axis + 1) + [times] + [1] * (len(shape) - axis - 1))
    if None in shape:
        dynamic = tf.shape(x)
        dims = [dynamic[i] if d is None else tf.constant(d, "int32") for i, d in enumerate(shape)]
        dims[axis] = dims[axis] * times
        return tf.reshape(tiled, tf.stack(dims))
    shape[axis] *= times
    return tf.reshape(tiled, shape)


def _linear_axis(x, axis, times):
    """x resized `times`-fold along `axis` by linear interpolation with half-pixel centres (image resizing's
    'bilinear', one axis at a time): output i samples the input at (i + 0.5) / times - 0.5, clamped to the edges."""
    n = x.shape[axis]
    if n is None:
        raise ValueError(f"Bilinear upsampling needs a static size along axis {axis}; received shape "
                         f"{tuple(x.shape)}")
    if times == 1:
        return x
    src = np.clip((np.arange(n * times) + 0.5) / times - 0.5, 0, n - 1)
    low = np.floor(src).astype(np.int32)
    high = np.minimum(low + 1, n - 1)
    frac = (src - low).astype(np.float32).reshape([-1 if i == axis else 1 for i in range(len(x.shape))])
    return tf.gather(x, low, axis=axis) * (1.0 - frac) + tf.gather(x, high, axis=axis) * frac


class UpSampling1D(Layer):
    """(batch, steps, features) -> (batch, steps * size, features): each step repeated `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: size={size}")
        self.size = size

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        self.built = True

    def call(self, inputs):
        return _repeat_axis(inputs, 1, self.size)

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """(batch, rows, cols, channels) -> (batch, rows * size[0], cols * size[1], channels): each pixel repeated
    (interpolation='nearest') or linearly interpolated with half-pixel centres ('bilinear', as image resizing)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "UpSampling2D")
        self.size = int_tuple(size, 2, "size")
        self.interpolation = interpolation.lower()
        if self.interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"UpSampling2D in tfn supports interpolation='nearest' and 'bilinear'; received "
                             f"interpolation={interpolation!r}")

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        self.built = True

    def call(self, inputs):
        if self.interpolation == "bilinear":
            return _linear_axis(_linear_axis(inputs, 1, self.size[0]), 2, self.size[1])
        return _repeat_axis(_repeat_axis(inputs, 1, self.size[0]), 2, self.size[1])

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": "channels_last",
                "interpolation": self.interpolation}


class Lambda(Layer):
    """`function(inputs, **arguments)`: any Python function of the inputs written with tfn ops (traced into the
    compiled step like the other layers; it owns no weights)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda's `function` must be callable. Received: function={function!r}")
        self.function, self.output_shape_arg, self.mask = function, output_shape, mask
        self.arguments = dict(arguments or {})

    def call(self, inputs, training=None):
        kwargs = dict(self.arguments)
        if training is not None and _takes(self.function, "training"):
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def get_config(self):
        return {**super().get_config(), "function": self.function, "output_shape": self.output_shape_arg,
                "mask": self.mask, "arguments": self.arguments}


def _takes(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
