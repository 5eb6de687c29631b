"""Convolution: tfn.conv2d, TF's Conv2D on NHWC input and HWIO (height, width, in, out) filters."""
import numpy as np

from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError, OpError
from tfn.dialects.ops_linalg import pretty
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType, check_memory, check_size


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


def check_padded(op, x, pads, dtype):
    """The padded input a window op reads, (top, bottom, left, right) around x's NHWC shape, counted before anything
    makes it: past int64 TF's overflow InvalidArgumentError, past the machine's memory ResourceExhaustedError (a
    SAME window of 2**62 taps made MLIR assert on the padded type's size, and its loops never end)."""
    t, b, left, r = pads
    shape = (x[0], None if x[1] is None else x[1] + t + b, None if x[2] is None else x[2] + left + r, x[3])
    try:
        check_size(shape, dtype)
        check_memory(TensorType(shape, dtype))
    except OpError as e:
        raise type(e)(f"{e} (the padded input of {op}: input {pretty(x)}, padding {list(pads)}) [Op:{op}]") from None


def _same_padding(x, windows, strides, dilations):
    """(top, bottom, left, right) of TF's SAME padding (0 for a dim whose size is known only at run time)."""
    out = []
    for size, k, s, d in zip(x[1:3], windows, strides, dilations):
        out += [0, 0] if size is None else list(same_pads(size, k, s, d)[:2])
    return tuple(out)


def _nonempty_window(w, op):
    """TF's error for a filter of height or width 0: its window would cover no input (an output larger than the
    input, all zeros)."""
    if 0 in w.shape[:2]:
        raise InvalidArgumentError(f"filter must not have zero elements (i.e. all dimensions must be non-zero), got "
                                   f"{pretty(w.shape)} [Op:{op}]")


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
    _nonempty_window(w, "Conv2D")
    (sh, sw), (dh, dw), same = attrs["strides"], attrs["dilations"], attrs["same"]
    if same:
        check_padded("Conv2D", x.shape, _same_padding(x.shape, w.shape[:2], (sh, sw), (dh, dw)), dt)
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


# ---- max pooling: its own op, and its gradient's (one pass over the windows routing each window's gradient to the
# window's first maximum, as TF's MaxPoolGrad) -----------------------------------------------------------------------

def pool_geometry(size, k, stride, same):
    """(pad before, pad after, output size) of one spatial dim of a pooling window, TF's SAME split."""
    if same:
        before, after, out = same_pads(size, k, stride, 1)
        return before, after, out
    return 0, 0, (size - k) // stride + 1


def _pool_check(name, x, attrs):
    if x.rank != 4 or None in x.shape[1:3]:
        raise InvalidArgumentError(f"{name} needs a 4-D NHWC input with static height and width, got "
                                   f"{pretty(x.shape)} [Op:{name}]")
    (kh, kw), (sh, sw), same = attrs["ksize"], attrs["strides"], attrs["same"]
    if min(kh, kw, sh, sw) < 1:
        raise InvalidArgumentError(f"ksize and strides must be positive, got {list(attrs['ksize'])} and "
                                   f"{list(attrs['strides'])} [Op:{name}]")
    if same:
        check_padded(name, x.shape, _same_padding(x.shape, (kh, kw), (sh, sw), (1, 1)), x.dtype)
    oh, ow = pool_geometry(x.shape[1], kh, sh, same)[2], pool_geometry(x.shape[2], kw, sw, same)[2]
    if oh < 1 or ow < 1:
        raise InvalidArgumentError(f"Computed output size would be negative: input {pretty(x.shape)}, window "
                                   f"{(kh, kw)}, VALID padding [Op:{name}]")
    return oh, ow


def _max_pool_infer(types, attrs):
    (x,) = types
    rules.allowed("MaxPool", x.dtype, rules.FLOATS)
    oh, ow = _pool_check("MaxPool", x, attrs)
    return rules.tensor((x.shape[0], oh, ow, x.shape[3]), x.dtype)


def tap_range(size, k, stride, before, out):
    """The taps of a window dim that some window reads an input element with (padded coordinates r s + i in
    [before, before + size)); the others read only padding. Every SAME window covers an input element, so a max
    or a padding-excluding mean needs no other: a window far wider than the input has ~size taps, not k."""
    return range(max(0, before - (out - 1) * stride), min(k - 1, before + size - 1) + 1)


def window_taps(shape, attrs):
    """(i, j) of the taps pooling over an NHWC input of `shape` reads, in row-major order (tap_range's)."""
    (kh, kw), (sh, sw), same = attrs["ksize"], attrs["strides"], attrs["same"]
    (pt, _, oh), (pl, _, ow) = pool_geometry(shape[1], kh, sh, same), pool_geometry(shape[2], kw, sw, same)
    return [(i, j) for i in tap_range(shape[1], kh, sh, pt, oh) for j in tap_range(shape[2], kw, sw, pl, ow)]


def pool_taps(xp, x_shape, attrs, oh, ow):
    """The windows' taps of the padded input xp: ((i, j), xp[:, i + s y, j + s x, :]) in row-major tap order."""
    (sh, sw) = attrs["strides"]
    return [((i, j), xp[:, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw, :])
            for i, j in window_taps(x_shape, attrs)]


def _padded(x, attrs, fill):
    (kh, kw), (sh, sw), same = attrs["ksize"], attrs["strides"], attrs["same"]
    (pt, pb, oh), (pl, pr, ow) = pool_geometry(x.shape[1], kh, sh, same), pool_geometry(x.shape[2], kw, sw, same)
    return np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill), (pt, pl, oh, ow)


def _max_pool_kernel(arrays, attrs):
    (x,) = arrays
    xp, (_, _, oh, ow) = _padded(x, attrs, np.finfo(x.dtype).min)
    out = None
    for _, tap in pool_taps(xp, x.shape, attrs, oh, ow):
        out = tap if out is None else np.maximum(out, tap)
    return out.copy()


def _max_pool_grad_infer(types, attrs):
    x, g = types
    rules.same_dtype("MaxPoolGrad", types)
    rules.allowed("MaxPoolGrad", x.dtype, rules.FLOATS)
    oh, ow = _pool_check("MaxPoolGrad", x, attrs)
    if g.rank != 4 or any(a is not None and b is not None and a != b
                          for a, b in zip(g.shape, (x.shape[0], oh, ow, x.shape[3]))):
        raise InvalidArgumentError(f"the gradient must have the pooled shape {pretty((x.shape[0], oh, ow, x.shape[3]))}"
                                   f", got {pretty(g.shape)} [Op:MaxPoolGrad]")
    return x


def _max_pool_grad_kernel(arrays, attrs):
    x, g = arrays
    xp, (pt, pl, oh, ow) = _padded(x, attrs, np.finfo(x.dtype).min)
    taps = pool_taps(xp, x.shape, attrs, oh, ow)
    best, first = taps[0][1], np.zeros(g.shape, np.int64)
    for t, (_, tap) in enumerate(taps[1:], 1):
        first = np.where(tap > best, t, first)  # strictly greater: ties keep the first maximum
        best = np.maximum(best, tap)
    (sh, sw) = attrs["strides"]
    dxp = np.zeros(xp.shape, g.dtype)
    for t, ((i, j), _) in enumerate(taps):
        dxp[:, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw, :] += np.where(first == t, g, 0)
    return dxp[:, pt:pt + x.shape[1], pl:pl + x.shape[2], :].copy()


POOL_ATTRS = {"ksize": "i64s", "strides": "i64s", "same": "bool"}
define("max_pool2d", ["input"], _max_pool_infer, _max_pool_kernel, POOL_ATTRS, tf_name="MaxPool",
       summary="the maximum of each ksize window of NHWC input (SAME pads with the dtype's lowest value)",
       tf_api=("nn.max_pool2d",))
define("max_pool2d_grad", ["input", "grad"], _max_pool_grad_infer, _max_pool_grad_kernel, POOL_ATTRS,
       tf_name="MaxPoolGrad", differentiable=False,
       summary="max_pool2d's input gradient: each window's gradient goes to the window's first maximum")


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
    _nonempty_window(w, op)
    (sh, sw), (dh, dw), same = attrs["strides"], attrs["dilations"], attrs["same"]
    t, b, left, r = attrs["pads"]
    check_padded(op, x.shape, _same_padding(x.shape, w.shape[:2], (sh, sw), (dh, dw)) if same else (t, b, left, r), dt)
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
