"""Gradients of the neural-network ops, written with tfn ops: conv2d's input gradient is a convolution with the
flipped filters, its filters' gradient one matrix product of the input's patches (im2col) with the output
gradient; depthwise_conv2d's are depthwise convolutions themselves; max_pool2d's is one tfn.max_pool2d_grad op."""
from tfn.core.dispatch import apply
from tfn.dialects import ops
from tfn.dialects.ops_conv import out_size, same_pads
from tfn.gradients.registry import gradient
from tfn.nn import conv2d, depthwise_conv2d
from tfn.ops import array_ops, fill_ops, linalg_ops, reduction_ops


def _pad(x, axis, before, after):
    """x with `before`/`after` zero slices along `axis` (dynamic dims elsewhere allowed)."""
    head = (slice(None),) * axis
    zero = fill_ops.zeros_like(x[head + (slice(0, 1),)])
    parts = [zero] * before + [x] + [zero] * after
    return array_ops.concat(parts, axis) if len(parts) > 1 else x


def _pad_spatial(x, top, bottom, left, right):
    """NHWC x zero-padded on H and W: one tfn.pad (one copy) where it pads at all."""
    if top == bottom == left == right == 0:
        return x
    return fill_ops.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]])


def _pad_or_crop(x, axis, before, after):
    """x zero-padded along `axis` by `before`/`after`, or cropped where they are negative."""
    size = x._shape[axis]
    x = x[(slice(None),) * axis + (slice(max(-before, 0), size - max(-after, 0)),)] if min(before, after) < 0 else x
    return _pad(x, axis, max(before, 0), max(after, 0))


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
    (pt, pb, oh, eh), (pl, pr, ow, ew) = _spatial(x, w, attrs, 0), _spatial(x, w, attrs, 1)
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    h, wd = x._shape[1], x._shape[2]
    hp, wp = h + pt + pb, wd + pl + pr
    df = _filter_grad(_pad_spatial(x, pt, pb, pl, pr), g, w, oh, ow, (sh, sw), (dh, dw)) if op.needs[1] else None
    if not op.needs[0]:
        return None, df
    flipped = array_ops.transpose(w[::-1, ::-1], [0, 1, 3, 2])
    if attrs["same"] and (sh, sw) == (1, 1) and (pt, pl) == (pb, pr):
        # stride 1, even SAME padding: g padded as the input was is exactly the full correlation's input below
        return conv2d(g, flipped, strides=[1, 1], padding="SAME", dilations=[dh, dw]), df
    # d input: the full correlation of the stride-dilated g with the flipped filters
    gd = _dilate(_dilate(g, 1, sh), 2, sw)
    rh, rw = hp - ((oh - 1) * sh + eh), wp - ((ow - 1) * sw + ew)
    # (of the padded input; the unpadded input's part directly: g padded less, or cropped, by the input's padding)
    gp = _pad_or_crop(_pad_or_crop(gd, 1, eh - 1 - pt, eh - 1 + rh - pb), 2, ew - 1 - pl, ew - 1 + rw - pr)
    return conv2d(gp, flipped, strides=[1, 1], padding="VALID", dilations=[dh, dw]), df


def _filter_grad(xp, g, w, oh, ow, strides, dilations):
    """d filters[i, j, c, f] = sum over (n, y, x) of xp[n, y s + i d, x s + j d, c] g[n, y, x, f]: g transposed
    [f, (n y x)] times the padded input's patches (im2col [(n y x), (i j c)]), transposed back. One plain matmul, so
    big batches take the packed matmul path (a convolution with g as its filter has oh x ow taps and one image)."""
    kh, kw, c, f = w._shape
    (sh, sw), (dh, dw) = strides, dilations
    if c is None or f is None:  # channels known at run time only: correlate xp with g (batch and channels swapped)
        df = conv2d(array_ops.transpose(xp, [3, 1, 2, 0]), array_ops.transpose(g, [1, 2, 0, 3]), strides=[dh, dw],
                    padding="VALID", dilations=[sh, sw])
        return array_ops.transpose(df[:, :kh, :kw, :], [1, 2, 0, 3])
    taps = [xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            for i in range(kh) for j in range(kw)]
    cols = array_ops.reshape(array_ops.stack(taps, 3) if len(taps) > 1 else taps[0], [-1, kh * kw * c])
    df = linalg_ops.matmul(array_ops.transpose(array_ops.reshape(g, [-1, f])), cols)
    return array_ops.reshape(array_ops.transpose(df), [kh, kw, c, f])


@gradient(ops.max_pool2d)
def _max_pool2d_grad(op, g):
    """Each window's gradient to the window's first maximum (TF's MaxPoolGrad), in one op."""
    return [apply(ops.max_pool2d_grad, [op.inputs[0], g], op.attrs)]


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
