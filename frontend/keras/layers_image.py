"""Keras's image preprocessing layers on (batch, height, width, channels) or unbatched (height, width, channels)
images with static height and width: Resizing (bilinear or nearest, half-pixel centres, optional crop to the target
aspect ratio first), CenterCrop (resizing as Keras when the image is smaller) and RandomFlip (training only)."""
import numpy as np

from tfn import random as tfn_random
from tfn.keras._ops import tf
from tfn.keras.layers import Layer


def _resize_axis(x, axis, size, interpolation):
    """x resampled to `size` along `axis` (image resizing without antialiasing: output i samples the input at
    (i + 0.5) * n / size - 0.5; 'bilinear' interpolates the two nearest pixels, edges clamped, 'nearest' takes
    pixel floor((i + 0.5) * n / size))."""
    n = x.shape[axis]
    if n == size:
        return x
    scale = n / size
    if interpolation == "nearest":
        index = np.minimum(np.floor((np.arange(size) + 0.5) * scale), n - 1).astype(np.int32)
        return tf.gather(x, index, axis=axis)
    src = np.clip((np.arange(size) + 0.5) * scale - 0.5, 0, n - 1)
    low = np.floor(src).astype(np.int32)
    high = np.minimum(low + 1, n - 1)
    frac = (src - low).astype(np.float32).reshape([-1 if i == axis else 1 for i in range(len(x.shape))])
    return tf.gather(x, low, axis=axis) * (1.0 - frac) + tf.gather(x, high, axis=axis) * frac


def _aspect_crop(x, height, width, h_axis):
    """The largest centred window of x with the aspect ratio height:width (Keras's smart_resize crop)."""
    in_h, in_w = x.shape[h_axis], x.shape[h_axis + 1]
    crop_h = max(min(in_h, int(float(in_w * height) / width)), 1)
    crop_w = max(min(in_w, int(float(in_h * width) / height)), 1)
    top, left = int(float(in_h - crop_h) / 2), int(float(in_w - crop_w) / 2)
    index = [slice(None)] * len(x.shape)
    index[h_axis], index[h_axis + 1] = slice(top, top + crop_h), slice(left, left + crop_w)
    return x[tuple(index)]


def _image_axis(layer, inputs):
    """The height axis of an image batch (1) or of one image (0), and checks Keras's ranks and static sizes."""
    rank = len(inputs.shape)
    if rank not in (3, 4):
        raise ValueError(f"{type(layer).__name__} expects images of rank 3 (height, width, channels) or 4 (batch, "
                         f"height, width, channels); received shape {tuple(inputs.shape)}")
    h_axis = rank - 3
    if inputs.shape[h_axis] is None or inputs.shape[h_axis + 1] is None:
        raise ValueError(f"{type(layer).__name__} in tfn.keras needs the images' height and width known when the "
                         f"layer is traced; received shape {tuple(inputs.shape)}")
    return h_axis


def _float(x):
    return x if x.dtype == "float32" else tf.cast(x, "float32")


def _positive(value, name):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value}")
    return value


class Resizing(Layer):
    """Images resized to (height, width): 'bilinear' (default) or 'nearest', without antialiasing; with
    crop_to_aspect_ratio the largest centred window of the target aspect ratio is resized (no distortion)."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"Resizing supports data_format='channels_last' only, got {data_format!r}")
        if interpolation not in ("bilinear", "nearest"):
            raise ValueError(f"Resizing in tfn.keras supports interpolation 'bilinear' and 'nearest'; received "
                             f"interpolation={interpolation!r}")
        self.height, self.width = _positive(height, "height"), _positive(width, "width")
        self.interpolation, self.crop_to_aspect_ratio = interpolation, crop_to_aspect_ratio

    def call(self, inputs):
        h_axis = _image_axis(self, inputs)
        x = _float(inputs)
        if self.crop_to_aspect_ratio:
            x = _aspect_crop(x, self.height, self.width, h_axis)
        x = _resize_axis(x, h_axis, self.height, self.interpolation)
        return _resize_axis(x, h_axis + 1, self.width, self.interpolation)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "data_format": "channels_last"}


class CenterCrop(Layer):
    """The centred (height, width) window of each image; an image smaller than that along an axis is cropped to the
    target aspect ratio and resized bilinearly instead (Keras's smart_resize)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"CenterCrop supports data_format='channels_last' only, got {data_format!r}")
        self.height, self.width = _positive(height, "height"), _positive(width, "width")

    def call(self, inputs):
        h_axis = _image_axis(self, inputs)
        x = _float(inputs)
        in_h, in_w = x.shape[h_axis], x.shape[h_axis + 1]
        if in_h >= self.height and in_w >= self.width:
            top, left = (in_h - self.height) // 2, (in_w - self.width) // 2
            index = [slice(None)] * len(x.shape)
            index[h_axis], index[h_axis + 1] = slice(top, top + self.height), slice(left, left + self.width)
            return x[tuple(index)]
        x = _aspect_crop(x, self.height, self.width, h_axis)
        return _resize_axis(_resize_axis(x, h_axis, self.height, "bilinear"), h_axis + 1, self.width, "bilinear")

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "data_format": "channels_last"}


class RandomFlip(Layer):
    """In training, each image flipped left-right ('horizontal'), up-down ('vertical') or each of the two
    independently ('horizontal_and_vertical', the default) with probability 1/2; the identity in inference."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        if data_format not in (None, "channels_last"):
            raise ValueError(f"RandomFlip supports data_format='channels_last' only, got {data_format!r}")
        self.mode, self.seed = mode, seed

    def call(self, inputs, training=True):
        if not training:
            return inputs
        h_axis = _image_axis(self, inputs)
        x = inputs
        draw_shape = tf.stack([tf.shape(x)[0], 1, 1, 1]) if h_axis == 1 else [1, 1, 1]
        for axis, wanted in ((h_axis + 1, "horizontal"), (h_axis, "vertical")):
            if wanted in self.mode:
                flip = tfn_random.uniform(draw_shape, seed=self.seed) < 0.5
                x = tf.where(tf.broadcast_to(flip, tf.shape(x)), tf.reverse(x, [axis]), x)
        return x

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "seed": self.seed, "data_format": "channels_last"}
