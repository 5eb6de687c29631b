"""Gradients of the neural-network ops (conv2d, depthwise_conv2d), written with tfn ops: each gradient is a
convolution of the same kind itself."""
from tfn.dialects import ops
from tfn.dialects.ops_conv import out_size, same_pads
from tfn.gradients.registry import gradient
from tfn.nn import conv2d, depthwise_conv2d
from tfn.ops import array_ops, fill_ops, reduction_ops


def _pad(x, axis, before, after):
    """x with `before`/`after` zero slices along `axis` (dynamic dims elsewhere allowed)."""
    head = (slice(None),) * axis
    zero = fill_ops.zeros_like(x[head + (slice(0, 1),)])
    parts = [zero] * before + [x] + [zero] * after
    return array_ops.concat(parts, axis) if len(parts) > 1 else x


def _dilate(g, axis, stride):
    """g with stride-1 zeros between its elements along `axis`: g[o] lands at o * stride."""
    size = g._shape[axis]
    if stride == 1 or size is None or size <= 1:
        return g
    spread = array_ops.stack([g] + [fill_ops.zeros_like(g)] * (stride - 1), axis + 1)
    shape = [-1 if d is None else d for d in g._shape]
    shape[axis] = size * stride
    merged = array_ops.reshape(spread, shape)
    return merged[(slice(None),) * axis + (slice(0, (size - 1) * stride + 1),)]


def _spatial(x, w, attrs, i, what="conv2d"):
    """(pad before, pad after, output size, effective filter size) of spatial dim i (0: height, 1: width)."""
    size, k = x._shape[1 + i], w._shape[i]
    if size is None:
        raise NotImplementedError(f"the gradient of tfn.nn.{what} needs static spatial input dims, got shape "
                                  f"{x.shape}")
    s, d = attrs["strides"][i], attrs["dilations"][i]
    if attrs["same"]:
        before, after, out = same_pads(size, k, s, d)
    else:
        before, after = attrs.get("pads", (0, 0, 0, 0))[2 * i:2 * i + 2]
        out = out_size(size + before + after, k, s, d, False)
    return before, after, out, (k - 1) * d + 1


@gradient(ops.conv2d)
def _conv2d_grad(op, g):
    x, w = op.inputs
    attrs = op.attrs
    kh, kw = w._shape[0], w._shape[1]
    (pt, pb, oh, eh), (pl, pr, ow, ew) = _spatial(x, w, attrs, 0), _spatial(x, w, attrs, 1)
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    h, wd = x._shape[1], x._shape[2]
    hp, wp = h + pt + pb, wd + pl + pr
    # d filters: correlate the padded input with g (batch and channels swapped; strides become dilations)
    xp = _pad(_pad(x, 1, pt, pb), 2, pl, pr)
    df = conv2d(array_ops.transpose(xp, [3, 1, 2, 0]), array_ops.transpose(g, [1, 2, 0, 3]), strides=[dh, dw],
                padding="VALID", dilations=[sh, sw])
    df = array_ops.transpose(df[:, :kh, :kw, :], [1, 2, 0, 3])
    # d input: the full correlation of the stride-dilated g with the flipped filters
    gd = _dilate(_dilate(g, 1, sh), 2, sw)
    rh, rw = hp - ((oh - 1) * sh + eh), wp - ((ow - 1) * sw + ew)
    gp = _pad(_pad(gd, 1, eh - 1, eh - 1 + rh), 2, ew - 1, ew - 1 + rw)
    flipped = array_ops.transpose(w[::-1, ::-1], [0, 1, 3, 2])
    dxp = conv2d(gp, flipped, strides=[1, 1], padding="VALID", dilations=[dh, dw])
    return dxp[:, pt:pt + h, pl:pl + wd, :], df


@gradient(ops.depthwise_conv2d)
def _depthwise_conv2d_grad(op, g):
    x, w = op.inputs
    attrs = op.attrs
    kh, kw, c, m = w._shape
    if c is None:
        raise NotImplementedError(f"the gradient of tfn.nn.depthwise_conv2d needs a static channel count, got filter "
                                  f"shape {w.shape}")
    (pt, pb, oh, eh), (pl, pr, ow, ew) = (_spatial(x, w, attrs, i, "depthwise_conv2d") for i in (0, 1))
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    h, wd = x._shape[1], x._shape[2]
    hp, wp = h + pt + pb, wd + pl + pr
    dx = df = None
    if op.needs[1]:
        # d filter: the padded input with (batch, channel) pairs as channels, correlated with g (the same pairs
        # as channels, multiplier M) with strides and dilations swapped, then summed over the batch
        xp = _pad(_pad(x, 1, pt, pb), 2, pl, pr)
        xs = array_ops.reshape(array_ops.transpose(xp, [1, 2, 0, 3]), [1, hp, wp, -1])
        gs = array_ops.reshape(array_ops.transpose(array_ops.reshape(g, [-1, oh, ow, c, m]), [1, 2, 0, 3, 4]),
                               [oh, ow, -1, m])
        df = depthwise_conv2d(xs, gs, strides=[1, dh, dw, 1], padding="VALID", dilations=[sh, sw])
        df = reduction_ops.reduce_sum(array_ops.reshape(df[0, :kh, :kw, :], [kh, kw, -1, c, m]), axis=2)
    if op.needs[0]:
        # d input: the full correlation of the stride-dilated g with the flipped filter, one output channel per
        # (c, m), summed over m
        gd = _dilate(_dilate(g, 1, sh), 2, sw)
        rh, rw = hp - ((oh - 1) * sh + eh), wp - ((ow - 1) * sw + ew)
        gp = _pad(_pad(gd, 1, eh - 1, eh - 1 + rh), 2, ew - 1, ew - 1 + rw)
        flipped = array_ops.reshape(w[::-1, ::-1], [kh, kw, c * m, 1])
        dxp = depthwise_conv2d(gp, flipped, strides=[1, 1, 1, 1], padding="VALID", dilations=[dh, dw])
        dxp = reduction_ops.reduce_sum(array_ops.reshape(dxp, [-1, hp, wp, c, m]), axis=4)
        dx = dxp[:, pt:pt + h, pl:pl + wd, :]
    return dx, df
