"""`tfn.image`: TF's image functions on [height, width, channels] images or [batch, height, width, channels] batches,
written with tfn ops, so they run eagerly and compile inside tfn.function alike (with gradients where they are
differentiable). Sizes, offsets and crop boxes are Python ints, known when a function is traced.

Resizing follows TF 2's `tf.image.resize`: half-pixel centres (source coordinate (i + 0.5) * in / out - 0.5),
bilinear interpolation from the nearest source pixels clamped at the borders, bicubic (Keys, a = -0.5) with the
taps outside the image dropped and the others renormalised, nearest neighbour as floor((i + 0.5) * in / out), area
as the mean of the source pixels each output pixel covers (partial pixels weighted). The gathers and weights are
computed once, when the function is traced.
"""
import math as _math

import numpy as np

from tfn import dtypes
from tfn.core.tensor import convert_to_tensor
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops, split_ops
from tfn.ops.debugging_ops import ensure_shape
from tfn.ops.einsum_ops import einsum
from tfn.ops.slicing_ops import gather

__all__ = ["ResizeMethod", "adjust_brightness", "adjust_contrast", "adjust_gamma", "central_crop",
           "convert_image_dtype", "crop_to_bounding_box", "flip_left_right", "flip_up_down", "grayscale_to_rgb",
           "image_gradients", "pad_to_bounding_box", "per_image_standardization", "psnr", "random_brightness",
           "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down", "resize",
           "resize_with_crop_or_pad", "resize_with_pad", "rgb_to_grayscale", "rot90", "stateless_random_brightness",
           "stateless_random_contrast", "stateless_random_flip_left_right", "stateless_random_flip_up_down",
           "total_variation", "transpose"]


class ResizeMethod:
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"


def _image(image, what):
    """(image as a tensor of rank 3 or 4, whether it is one image (rank 3))."""
    image = convert_to_tensor(image)
    if image.ndim not in (3, 4):
        raise ValueError(f"{what}: 'image' (shape {list(image.shape)}) must have either 3 or 4 dimensions.")
    return image, image.ndim == 3


def _static_hw(image, what):
    h, w = image.shape[-3], image.shape[-2]
    if h is None or w is None:
        raise ValueError(f"{what}: the image's height and width must be known when the function is traced, got "
                         f"shape {list(image.shape)}")
    return h, w


def _float(image):
    return image if image.dtype.is_floating else math_ops.cast(image, dtypes.float32)


# --- flips, rotations, crops ---------------------------------------------------------------------------------

def flip_left_right(image):
    image, _ = _image(image, "flip_left_right")
    return split_ops.reverse(image, [image.ndim - 2])


def flip_up_down(image):
    image, _ = _image(image, "flip_up_down")
    return split_ops.reverse(image, [image.ndim - 3])


def transpose(image, name=None):
    image, single = _image(image, "transpose")
    return array_ops.transpose(image, [1, 0, 2] if single else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """The image rotated counter-clockwise by k quarter turns."""
    image, _ = _image(image, "rot90")
    k = int(k) % 4
    if k == 1:
        return flip_up_down(transpose(image))
    if k == 2:
        return flip_up_down(flip_left_right(image))
    if k == 3:
        return transpose(flip_up_down(image))
    return image


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    image, _ = _image(image, "crop_to_bounding_box")
    h, w = _static_hw(image, "crop_to_bounding_box")
    if offset_height < 0 or offset_width < 0:
        raise ValueError("crop_to_bounding_box: offset_height and offset_width must be >= 0")
    if target_height <= 0 or target_width <= 0:
        raise ValueError("crop_to_bounding_box: target_height and target_width must be > 0")
    if offset_height + target_height > h or offset_width + target_width > w:
        raise ValueError(f"crop_to_bounding_box: the box {offset_height}+{target_height} x {offset_width}+"
                         f"{target_width} does not fit in the {h} x {w} image")
    return image[..., offset_height:offset_height + target_height, offset_width:offset_width + target_width, :]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    image, single = _image(image, "pad_to_bounding_box")
    h, w = _static_hw(image, "pad_to_bounding_box")
    after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
    if offset_height < 0 or offset_width < 0:
        raise ValueError("pad_to_bounding_box: offset_height and offset_width must be >= 0")
    if after_h < 0 or after_w < 0:
        raise ValueError(f"pad_to_bounding_box: the {h} x {w} image at offset {offset_height}, {offset_width} does "
                         f"not fit in {target_height} x {target_width}")
    pads = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
    return fill_ops.pad(image, pads if single else [[0, 0]] + pads)


def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of the image's height and width (TF's rounding)."""
    image, _ = _image(image, "central_crop")
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return image
    h, w = _static_hw(image, "central_crop")
    top = int((h - h * central_fraction) / 2)
    left = int((w - w * central_fraction) / 2)
    return crop_to_bounding_box(image, top, left, h - 2 * top, w - 2 * left)


def resize_with_crop_or_pad(image, target_height, target_width):
    """The image cropped (centred) or zero-padded (centred) to target_height x target_width."""
    image, _ = _image(image, "resize_with_crop_or_pad")
    h, w = _static_hw(image, "resize_with_crop_or_pad")
    if target_height <= 0 or target_width <= 0:
        raise ValueError("resize_with_crop_or_pad: target_height and target_width must be > 0")
    crop_top, crop_left = max((h - target_height) // 2, 0), max((w - target_width) // 2, 0)
    pad_top, pad_left = max((target_height - h) // 2, 0), max((target_width - w) // 2, 0)
    cropped = crop_to_bounding_box(image, crop_top, crop_left, min(h, target_height), min(w, target_width))
    return pad_to_bounding_box(cropped, pad_top, pad_left, target_height, target_width)


# --- resizing ------------------------------------------------------------------------------------------------

def _linear_taps(in_size, out_size):
    """(lower index, upper index, weight of the upper) per output position: half-pixel centres, clamped."""
    x = (np.arange(out_size) + 0.5) * (in_size / out_size) - 0.5
    floor = np.floor(x)
    lower = np.clip(floor, 0, in_size - 1).astype(np.int32)
    upper = np.clip(np.ceil(x), 0, in_size - 1).astype(np.int32)
    return lower, upper, (x - floor).astype(np.float32)


def _cubic_taps(in_size, out_size):
    """(4 indices, 4 weights) per output position: Keys' cubic (a = -0.5) on the 4 nearest source pixels; a tap
    outside the image weighs 0 and the others are renormalised (TF's half-pixel bicubic)."""
    a = -0.5
    x = (np.arange(out_size) + 0.5) * (in_size / out_size) - 0.5
    base = np.floor(x)
    t = np.rint((x - base) * 1024) / 1024  # TF reads the weights from a table of 1024 steps

    def keys(d):
        d = np.abs(d)
        return np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                        np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    taps = [base + o for o in (-1, 0, 1, 2)]
    weights = [np.where((p >= 0) & (p <= in_size - 1), keys(t - o), 0.0) for p, o in zip(taps, (-1, 0, 1, 2))]
    total = sum(weights)
    return ([np.clip(p, 0, in_size - 1).astype(np.int32) for p in taps],
            [(w / total).astype(np.float32) for w in weights])


def _along(image, axis, indices, weights):
    """sum_k weights[k] * image gathered at indices[k] along `axis` (weights broadcast along that axis)."""
    shape = [1] * image.ndim
    shape[axis] = -1
    out = None
    for i, wgt in zip(indices, weights):
        term = gather(image, i, axis=axis) * convert_to_tensor(wgt.reshape(shape))
        out = term if out is None else out + term
    return out


def _area_matrix(in_size, out_size):
    """[out, in] weights: each output pixel the mean of the source interval it covers (partial pixels weighted)."""
    scale = in_size / out_size
    m = np.zeros((out_size, in_size), np.float64)
    for o in range(out_size):
        start, end = o * scale, (o + 1) * scale
        for i in range(int(np.floor(start)), min(int(np.ceil(end)), in_size)):
            m[o, i] = min(end, i + 1) - max(start, i)
        m[o] /= scale
    return m.astype(np.float32)


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """`tf.image.resize` (see the module's docstring): float32 results, but for nearest neighbour, which keeps the
    image's dtype."""
    images, single = _image(images, "resize")
    h, w = _static_hw(images, "resize")
    size = size.numpy().tolist() if hasattr(size, "numpy") else list(size)
    if len(size) != 2 or not all(isinstance(s, (int, np.integer)) and s > 0 for s in size):
        raise ValueError(f"resize: size must be two positive ints (new height, width), got {size!r}")
    out_h, out_w = (int(s) for s in size)
    if preserve_aspect_ratio:
        scale = min(out_h / h, out_w / w)
        out_h, out_w = max(int(round(h * scale)), 1), max(int(round(w * scale)), 1)
    if antialias and (out_h < h or out_w < w) and method != ResizeMethod.AREA:
        raise ValueError("resize: antialias=True when shrinking is not supported; use method='area'")
    hax, wax = images.ndim - 3, images.ndim - 2
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        rows = np.minimum(np.floor((np.arange(out_h) + 0.5) * (h / out_h)), h - 1).astype(np.int32)
        cols = np.minimum(np.floor((np.arange(out_w) + 0.5) * (w / out_w)), w - 1).astype(np.int32)
        return gather(gather(images, rows, axis=hax), cols, axis=wax)
    x = _float(images)
    if method == ResizeMethod.BILINEAR:
        lo, hi, t = _linear_taps(h, out_h)
        x = _along(x, hax, [lo, hi], [1.0 - t, t])
        lo, hi, t = _linear_taps(w, out_w)
        out = _along(x, wax, [lo, hi], [1.0 - t, t])
    elif method == ResizeMethod.BICUBIC:
        out = _along(_along(x, hax, *_cubic_taps(h, out_h)), wax, *_cubic_taps(w, out_w))
    elif method == ResizeMethod.AREA:
        rows, cols = convert_to_tensor(_area_matrix(h, out_h)), convert_to_tensor(_area_matrix(w, out_w))
        # out[.., o, p, c] = sum_ij rows[o, i] x[.., i, j, c] cols[p, j]
        spec = "oi,ijc,pj->opc" if single else "oi,nijc,pj->nopc"
        out = einsum(spec, rows, math_ops.cast(x, dtypes.float32), cols)
    else:
        raise ValueError(f"resize: unknown method {method!r}; expected one of bilinear, nearest, bicubic, area")
    return math_ops.cast(out, dtypes.float32)


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """The image resized to fit in target_height x target_width, keeping its aspect ratio, then zero-padded
    (centred) to that size."""
    image, _ = _image(image, "resize_with_pad")
    h, w = _static_hw(image, "resize_with_pad")
    scale = min(target_height / h, target_width / w)
    new_h, new_w = max(int(h * scale), 1), max(int(w * scale), 1)
    resized = resize(image, [new_h, new_w], method, antialias=antialias)
    return pad_to_bounding_box(resized, (target_height - new_h) // 2, (target_width - new_w) // 2, target_height,
                               target_width)


# --- colour and dtype --------------------------------------------------------------------------------------------

def rgb_to_grayscale(images, name=None):
    """The luma of RGB images (ITU-R BT.601 weights 0.2989, 0.5870, 0.1140), one channel, in the images' dtype."""
    images = convert_to_tensor(images)
    if images.shape[-1] not in (3, None):
        raise ValueError(f"rgb_to_grayscale: the last dimension must be 3 (RGB), got shape {list(images.shape)}")
    flt = convert_image_dtype(images, dtypes.float32)
    gray = reduction_ops.reduce_sum(flt * convert_to_tensor(np.array([0.2989, 0.5870, 0.1140], np.float32)),
                                    axis=-1, keepdims=True)
    return convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images, name=None):
    images = convert_to_tensor(images)
    if images.shape[-1] not in (1, None):
        raise ValueError(f"grayscale_to_rgb: the last dimension must be 1, got shape {list(images.shape)}")
    return array_ops.concat([images, images, images], axis=-1)


def _dtype_max(dtype):
    return float(np.iinfo(dtype.np).max)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """An image in another dtype, its values rescaled: integers span [0, MAX], floats [0, 1)."""
    image = convert_to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer) or not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: {image.dtype.name} -> {dtype.name} is not an image conversion")
    if dtype == image.dtype:
        return image
    if image.dtype.is_integer and dtype.is_integer:
        scale = (_dtype_max(image.dtype) + 1) / (_dtype_max(dtype) + 1)
        if scale > 1:
            return math_ops.cast(math_ops.floordiv(image, np.asarray(int(scale), image.dtype.np)), dtype)
        return math_ops.cast(image, dtype) * np.asarray(int(1 / scale), dtype.np)
    if image.dtype.is_floating and dtype.is_floating:
        return math_ops.cast(image, dtype)
    if image.dtype.is_integer:  # int -> float
        return math_ops.cast(image, dtype) * np.asarray(1.0 / _dtype_max(image.dtype), dtype.np)
    scaled = image * np.asarray(_dtype_max(dtype) + 0.5, image.dtype.np)  # float -> int
    if saturate:
        info = np.iinfo(dtype.np)
        scaled = math_ops.minimum(math_ops.maximum(scaled, float(info.min)), float(info.max))
    return math_ops.cast(scaled, dtype)


def _in_float(image, fn):
    """fn applied to the image as floats, converted back to its dtype (integers saturated)."""
    image = convert_to_tensor(image)
    flt = convert_image_dtype(image, dtypes.float32)
    return convert_image_dtype(fn(flt), image.dtype, saturate=True)


def adjust_brightness(image, delta):
    return _in_float(image, lambda x: x + delta)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean of each channel of each image."""
    def contrast(x):
        mean = reduction_ops.reduce_mean(x, axis=[-3, -2], keepdims=True)
        return (x - mean) * contrast_factor + mean
    return _in_float(images, contrast)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma (values of integer images taken in [0, 1])."""
    if gamma < 0:
        raise ValueError("adjust_gamma: gamma must be >= 0")
    return _in_float(image, lambda x: gain * math_ops.pow(x, float(gamma)))


def per_image_standardization(image):
    """Each image scaled to mean 0 and variance 1: (x - mean) / max(stddev, 1 / sqrt(pixels x channels))."""
    image, _ = _image(image, "per_image_standardization")
    x = _float(image)
    axes = [-3, -2, -1]
    n = int(np.prod([d for d in image.shape[-3:]])) if None not in image.shape[-3:] else None
    if n is None:
        n = math_ops.cast(reduction_ops.reduce_prod(shape_ops.shape(image)[-3:]), dtypes.float32)
    mean = reduction_ops.reduce_mean(x, axis=axes, keepdims=True)
    std = math_ops.sqrt(reduction_ops.reduce_mean(math_ops.square(x - mean), axis=axes, keepdims=True))
    floor = math_ops.rsqrt(math_ops.cast(n, dtypes.float32)) if not isinstance(n, int) else 1.0 / _math.sqrt(n)
    return (x - mean) / math_ops.maximum(std, floor)


# --- random augmentations ----------------------------------------------------------------------------------------

def _random():
    from tfn import random  # start-up cost: tfn.random loads on first use (frontend/__init__.py _LAZY)

    return random


def _flip_where(image, flip, axis_from_end):
    """image flipped along its height (3) or width (2) axis where `flip` (a bool per image, or one) is True."""
    axis = image.ndim - axis_from_end
    flipped = split_ops.reverse(image, [axis])
    if image.ndim == 4:
        flip = array_ops.reshape(flip, [-1, 1, 1, 1])
    return math_ops.where(flip, flipped, image)


def _coins(image, draw):
    """One fair coin per image of a batch (one for a single image): uniform draws below 0.5."""
    n = [] if image.ndim == 3 else [image.shape[0] if image.shape[0] is not None else shape_ops.shape(image)[0]]
    return draw(n) < 0.5


def random_flip_left_right(image, seed=None):
    image, _ = _image(image, "random_flip_left_right")
    return _flip_where(image, _coins(image, lambda s: _random().uniform(s, seed=seed)), 2)


def random_flip_up_down(image, seed=None):
    image, _ = _image(image, "random_flip_up_down")
    return _flip_where(image, _coins(image, lambda s: _random().uniform(s, seed=seed)), 3)


def stateless_random_flip_left_right(image, seed):
    image, _ = _image(image, "stateless_random_flip_left_right")
    return _flip_where(image, _coins(image, lambda s: _random().stateless_uniform(s, seed=seed)), 2)


def stateless_random_flip_up_down(image, seed):
    image, _ = _image(image, "stateless_random_flip_up_down")
    return _flip_where(image, _coins(image, lambda s: _random().stateless_uniform(s, seed=seed)), 3)


def random_brightness(image, max_delta, seed=None):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _random().uniform([], -max_delta, max_delta, seed=seed))


def stateless_random_brightness(image, max_delta, seed):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _random().stateless_uniform([], seed, -max_delta, max_delta))


def random_contrast(image, lower, upper, seed=None):
    _contrast_range(lower, upper)
    return adjust_contrast(image, _random().uniform([], lower, upper, seed=seed))


def stateless_random_contrast(image, lower, upper, seed):
    _contrast_range(lower, upper)
    return adjust_contrast(image, _random().stateless_uniform([], seed, lower, upper))


def _contrast_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_crop(value, size, seed=None, name=None):
    """A random `size` slice of `value` (each dim's offset uniform in [0, dim - size])."""
    value = convert_to_tensor(value)
    size = list(size)
    if len(size) != value.ndim or None in value.shape:
        raise ValueError(f"random_crop: size {size} must give every dim of a fully known shape {list(value.shape)}")
    for d, s in zip(value.shape, size):
        if s > d:
            raise InvalidArgumentError(f"Need value.shape >= size, got {list(value.shape)} vs {size}")
    limits = np.array([d - s + 1 for d, s in zip(value.shape, size)], np.int64)
    offsets = math_ops.floormod(_random().uniform([len(size)], 0, 2**31 - 1, dtype=dtypes.int64, seed=seed), limits)
    index = tuple(slice(offsets[i], offsets[i] + s) for i, s in enumerate(size))
    return ensure_shape(value[index], size)


# --- measures ------------------------------------------------------------------------------------------------

def image_gradients(image):
    """(dy, dx): the differences to the next row / column, zero in the last row / column (4-D images)."""
    image = convert_to_tensor(image)
    if image.ndim != 4:
        raise ValueError(f"image_gradients expects a 4-D tensor [batch, height, width, channels], got shape "
                         f"{list(image.shape)}")
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = fill_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = fill_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


def total_variation(images, name=None):
    """The sum of the absolute differences of neighbouring pixels (per image of a batch)."""
    images, single = _image(images, "total_variation")
    x = _float(images)
    dy = math_ops.abs(x[..., 1:, :, :] - x[..., :-1, :, :])
    dx = math_ops.abs(x[..., :, 1:, :] - x[..., :, :-1, :])
    axes = [-3, -2, -1]
    return reduction_ops.reduce_sum(dy, axis=axes) + reduction_ops.reduce_sum(dx, axis=axes)


def psnr(a, b, max_val, name=None):
    """The peak signal-to-noise ratio in dB per image: 10 log10(max_val^2 / mean squared error)."""
    a, b = _float(convert_to_tensor(a)), _float(convert_to_tensor(b))
    mse = reduction_ops.reduce_mean(math_ops.square(a - b), axis=[-3, -2, -1])
    return 10.0 * math_ops.log(float(max_val) ** 2 / mse) / _math.log(10.0)


def __dir__():
    return list(__all__)
