"""Convolution: tfn.conv2d, TF's Conv2D on NHWC input and HWIO (height, width, in, out) filters."""
import numpy as np

from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.ops_linalg import pretty
from tfn.dialects.optable import define


def same_pads(size, k, stride, dilation):
    """TF's SAME padding of one spatial dim: (before, after, output size)."""
    out = -(-size // stride)
    eff = (k - 1) * dilation + 1
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2, out


def out_size(size, k, stride, dilation, same):
    """The output length of one spatial dim (None when the input length is unknown)."""
    if size is None:
        return None
    if same:
        return same_pads(size, k, stride, dilation)[2]
    eff = (k - 1) * dilation + 1
    return max((size - eff) // stride + 1, 0)


def _conv_infer(types, attrs):
    x, w = types
    dt = rules.same_dtype("Conv2D", types)
    rules.allowed("Conv2D", dt, rules.FLOATS)
    if x.rank != 4 or w.rank != 4:
        raise InvalidArgumentError(f"input must be 4-dimensional {pretty(x.shape)} and filter 4-dimensional "
                                   f"{pretty(w.shape)} [Op:Conv2D]")
    if x.shape[3] is not None and w.shape[2] is not None and x.shape[3] != w.shape[2]:
        raise InvalidArgumentError(f"input depth must be evenly divisible by filter depth: {x.shape[3]} vs "
                                   f"{w.shape[2]} [Op:Conv2D]")
    if None in w.shape[:2]:
        raise InvalidArgumentError(f"the filter's spatial size must be static, got {pretty(w.shape)} [Op:Conv2D]")
    (sh, sw), (dh, dw), same = attrs["strides"], attrs["dilations"], attrs["same"]
    for i, (k, d) in enumerate(((w.shape[0], dh), (w.shape[1], dw))):
        size = x.shape[1 + i]
        if not same and size is not None and size < (k - 1) * d + 1:
            raise InvalidArgumentError(f"Computed output size would be negative: input {pretty(x.shape)}, filter "
                                       f"{pretty(w.shape)}, VALID padding [Op:Conv2D]")
    oh = out_size(x.shape[1], w.shape[0], sh, dh, same)
    ow = out_size(x.shape[2], w.shape[1], sw, dw, same)
    return rules.tensor((x.shape[0], oh, ow, w.shape[3]), dt)


def _conv_kernel(arrays, attrs):
    x, w = arrays
    (sh, sw), (dh, dw), same = attrs["strides"], attrs["dilations"], attrs["same"]
    kh, kw, _, f = w.shape
    if same:
        ph, pw = same_pads(x.shape[1], kh, sh, dh), same_pads(x.shape[2], kw, sw, dw)
        x = np.pad(x, ((0, 0), ph[:2], pw[:2], (0, 0)))
    n, h, wd, _ = x.shape
    oh, ow = out_size(h, kh, sh, dh, False), out_size(wd, kw, sw, dw, False)
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    out = np.zeros((n, oh, ow, f), acc)
    for i in range(kh):
        for j in range(kw):
            tap = x[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            out += np.tensordot(tap.astype(acc), w[i, j].astype(acc), axes=([3], [0]))
    return out.astype(x.dtype)


define("conv2d", ["input", "filters"], _conv_infer, _conv_kernel,
       {"strides": "i64s", "dilations": "i64s", "same": "bool"}, tf_name="Conv2D",
       summary="2-D convolution of NHWC input with HWIO filters; SAME (TF's split) or VALID padding",
       tf_api="nn.conv2d")


def _depthwise_pads(x_shape, w_shape, attrs):
    """((top, bottom), (left, right)) of a depthwise convolution whose input height/width are known."""
    if not attrs["same"]:
        t, b, left, r = attrs["pads"]
        return (t, b), (left, r)
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    return same_pads(x_shape[1], w_shape[0], sh, dh)[:2], same_pads(x_shape[2], w_shape[1], sw, dw)[:2]


def _depthwise_infer(types, attrs):
    x, w = types
    op = "DepthwiseConv2dNative"
    dt = rules.same_dtype(op, types)
    rules.allowed(op, dt, rules.FLOATS)
    if x.rank != 4:
        raise InvalidArgumentError(f"input must be 4-dimensional{pretty(x.shape)} [Op:{op}]")
    if w.rank != 4:
        raise InvalidArgumentError(f"filter must be 4-dimensional: {pretty(w.shape)} [Op:{op}]")
    if x.shape[3] is not None and w.shape[2] is not None and x.shape[3] != w.shape[2]:
        raise InvalidArgumentError(f"input and filter must have the same depth: {x.shape[3]} vs {w.shape[2]} "
                                   f"[Op:{op}]")
    if None in (w.shape[0], w.shape[1], w.shape[3]):
        raise InvalidArgumentError(f"the filter's spatial size and channel multiplier must be static, got "
                                   f"{pretty(w.shape)} [Op:{op}]")
    (sh, sw), (dh, dw), same = attrs["strides"], attrs["dilations"], attrs["same"]
    t, b, left, r = attrs["pads"]
    out = []
    for i, (k, s, d, extra) in enumerate(((w.shape[0], sh, dh, t + b), (w.shape[1], sw, dw, left + r))):
        size = x.shape[1 + i]
        if same:
            out.append(out_size(size, k, s, d, True))
            continue
        if size is not None and size + extra < (k - 1) * d + 1:
            raise InvalidArgumentError(f"Computed output size would be negative: input {pretty(x.shape)}, filter "
                                       f"{pretty(w.shape)}, padding {attrs['pads']} [Op:{op}]")
        out.append(out_size(None if size is None else size + extra, k, s, d, False))
    depth = x.shape[3] if x.shape[3] is not None else w.shape[2]
    return rules.tensor((x.shape[0], out[0], out[1], None if depth is None else depth * w.shape[3]), dt)


def _depthwise_kernel(arrays, attrs):
    x, w = arrays
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    kh, kw, c, m = w.shape
    (t, b), (left, r) = _depthwise_pads(x.shape, w.shape, attrs)
    x = np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)))
    n, h, wd, _ = x.shape
    oh, ow = out_size(h, kh, sh, dh, False), out_size(wd, kw, sw, dw, False)
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    out = np.zeros((n, oh, ow, c, m), acc)
    for i in range(kh):
        for j in range(kw):
            tap = x[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            out += tap.astype(acc)[..., None] * w[i, j].astype(acc)
    return out.reshape(n, oh, ow, c * m).astype(x.dtype)


define("depthwise_conv2d", ["input", "filter"], _depthwise_infer, _depthwise_kernel,
       {"strides": "i64s", "dilations": "i64s", "same": "bool", "pads": "i64s"}, tf_name="DepthwiseConv2dNative",
       summary="depthwise 2-D convolution of NHWC input with [H, W, in, multiplier] filters: output channel "
               "c * multiplier + m is input channel c correlated with filter[:, :, c, m]; SAME (TF's split) or "
               "explicit padding (pads: top, bottom, left, right; VALID is all zeros)",
       tf_api="nn.depthwise_conv2d")
