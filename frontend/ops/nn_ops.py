"""Public neural-network functions (`tfn.nn.conv2d`, `tfn.nn.depthwise_conv2d`; pooling, softmax, relu as
compositions of tfn ops)."""
import numpy as np

from tfn.core.api import export, op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.dialects.ops_conv import check_padded, window_taps
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, slicing_ops


def _pair(value, what):
    """TF's 1, 2 or 4-element int list for NHWC (N and C entries must be 1) as an (h, w) pair."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * 2
    elif len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise ValueError(f"{what} in the batch and depth dimensions must be 1, got {values}")
        values = values[1:3]
    if len(values) != 2 or any(not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{what} must be a positive int or a list of 1, 2 or 4 positive ints, got {value!r}")
    return tuple(values)


@op_api(ops.conv2d, exports=("nn.conv2d",))
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv2d: NHWC input, [height, width, in, out] filters, 'SAME' or 'VALID' padding."""
    if data_format != "NHWC":
        raise ValueError(f"conv2d supports data_format='NHWC' only, got {data_format!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    x, w = tensors(input, filters)
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(1 if dilations is None else dilations, "dilations")
    if (sh > 1 or sw > 1) and (dh > 1 or dw > 1):
        raise ValueError("strides > 1 not supported in conjunction with dilations > 1")
    attrs = {"strides": (sh, sw), "dilations": (dh, dw), "same": padding.upper() == "SAME"}
    return apply(ops.conv2d, [x, w], attrs)


def _explicit_pads(padding):
    """TF's explicit padding [[0, 0], [top, bottom], [left, right], [0, 0]] (NHWC) as (top, bottom, left, right)."""
    try:
        pairs = [tuple(int(v) for v in pair) for pair in padding]
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or len(pairs) != 4 or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(f"padding must be 'SAME', 'VALID' or a list of 4 [before, after] pairs of non-negative ints "
                         f"(NHWC), got {padding!r}")
    if pairs[0] != (0, 0) or pairs[3] != (0, 0):
        raise ValueError(f"padding in the batch and depth dimensions must be 0, got {padding!r}")
    return pairs[1] + pairs[2]


@op_api(ops.depthwise_conv2d, exports=("nn.depthwise_conv2d",))
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.depthwise_conv2d: NHWC input [batch, height, width, in], filter [height, width, in, multiplier];
    output channel c * multiplier + m is input channel c correlated with filter[:, :, c, m]. Padding 'SAME',
    'VALID' or explicit [[0, 0], [top, bottom], [left, right], [0, 0]]; strides [1, sh, sw, 1]; dilations
    [dh, dw] (strides and dilations both above 1 is an error, as in TF)."""
    if data_format not in (None, "NHWC"):
        raise ValueError(f"depthwise_conv2d supports data_format='NHWC' only, got {data_format!r}")
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of explicit paddings, got {padding!r}")
        same, pads = padding.upper() == "SAME", (0, 0, 0, 0)
    else:
        same, pads = False, _explicit_pads(padding)
    x, w = tensors(input, filter)
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(1 if dilations is None else dilations, "dilations")
    if (sh > 1 or sw > 1) and (dh > 1 or dw > 1):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    attrs = {"strides": (sh, sw), "dilations": (dh, dw), "same": same, "pads": pads}
    return apply(ops.depthwise_conv2d, [x, w], attrs)


@export("nn.relu")
def relu(features, name=None):
    """max(features, 0)."""
    x = convert_to_tensor(features)
    return math_ops.maximum(x, fill_ops.zeros_like(x))


@export("nn.log_softmax")
def log_softmax(logits, axis=None, name=None):
    """logits - log(sum(exp(logits))) along `axis` (default last), the row maximum subtracted first: stable."""
    x = convert_to_tensor(logits)
    axis = -1 if axis is None else axis
    # exp of (x - max) cannot overflow; the max's own gradient cancels exactly in the formula
    shifted = x - reduction_ops.reduce_max(x, axis=axis, keepdims=True)
    return shifted - math_ops.log(reduction_ops.reduce_sum(math_ops.exp(shifted), axis=axis, keepdims=True))


@export("nn.softmax")
def softmax(logits, axis=None, name=None):
    """exp(logits) / sum(exp(logits)) along `axis` (default last), computed from the shifted logits."""
    x = convert_to_tensor(logits)
    axis = -1 if axis is None else axis
    e = math_ops.exp(x - reduction_ops.reduce_max(x, axis=axis, keepdims=True))
    return e / reduction_ops.reduce_sum(e, axis=axis, keepdims=True)


@export("nn.softmax_cross_entropy_with_logits")
def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) along `axis`: one loss per example, `labels` a probability distribution of
    the logits' shape (its gradient does not flow into the labels' producer in TF's v1 op; here it does, as TF 2's
    v2 op does)."""
    x = convert_to_tensor(logits)
    z = convert_to_tensor(labels, dtype=x.dtype)
    if z.shape.rank is not None and x.shape.rank is not None and (z.shape.rank != x.shape.rank or any(
            a is not None and b is not None and a != b for a, b in zip(z.shape.as_list(), x.shape.as_list()))):
        raise ValueError(f"labels and logits must have the same shape, got {z.shape} and {x.shape}")
    return -reduction_ops.reduce_sum(z * log_softmax(x, axis=axis), axis=axis)


@export("nn.sparse_softmax_cross_entropy_with_logits")
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log_softmax(logits)[..., labels]: one loss per example, `labels` class indices of the logits' leading shape;
    a label outside [0, classes) raises InvalidArgumentError (the gather's index check), as TF does on CPU."""
    x = convert_to_tensor(logits)
    y = convert_to_tensor(labels)
    if y.dtype.name not in ("int32", "int64"):
        raise TypeError(f"labels must be int32 or int64, got {y.dtype.name}")
    rank = y.shape.rank
    if rank is not None and x.shape.rank is not None and rank != x.shape.rank - 1:
        raise ValueError(f"Rank mismatch: Rank of labels (received {rank}) should equal rank of logits minus 1 "
                         f"(received {x.shape.rank}).")
    classes = x.shape.as_list()[-1] if x.shape.rank is not None else None
    if classes is not None:  # TF's message naming the label (the gather's would name GatherV2's indices)
        y = checked_labels(y, classes)
    return -slicing_ops.gather(log_softmax(x), y, axis=rank, batch_dims=rank)


def checked_labels(labels, classes):
    """Class labels, checked to lie in [0, classes) when the op runs (TF's SparseSoftmaxXentWithLogits error on
    CPU; Keras's sparse categorical crossentropy checks its labels with it too)."""
    labels = convert_to_tensor(labels)
    valid = math_ops.logical_and(math_ops.greater_equal(labels, 0), math_ops.less(labels, classes))
    outside = math_ops.where(valid, fill_ops.zeros_like(labels) + np.iinfo(labels.dtype.np).min, labels)
    bad = math_ops.cast(reduction_ops.reduce_max(outside), "int64")
    return apply(ops.check, [labels, reduction_ops.reduce_all(valid), bad, convert_to_tensor(classes, "int64")],
                 {"message": "Received a label value of {0} which is outside the valid range of [0, {1})."})


def _pad_axis(x, axis, before, after, value):
    """x with `before`/`after` slices of `value` along `axis` (other dims may be dynamic)."""
    if before == 0 and after == 0:
        return x
    edge = fill_ops.zeros_like(x[(slice(None),) * axis + (slice(0, 1),)]) + value

    def run(n):  # n slices of the edge: one tile, not a list of n tensors to concatenate
        return array_ops.tile(edge, [n if a == axis else 1 for a in range(x.ndim)])
    return array_ops.concat(([run(before)] if before else []) + [x] + ([run(after)] if after else []), axis)


def _pool_geometry(size, k, s, same):
    """(pad before, pad after, output size) of one spatial dim, TF's SAME split."""
    if same:
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        return total // 2, total - total // 2, out
    return 0, 0, (size - k) // s + 1


def _pool2d(input, ksize, strides, padding, data_format, kind):  # noqa: A002
    """Max pooling (tfn.max_pool2d) or average pooling (a sum of the window's strided taps) of NHWC input."""
    if data_format != "NHWC":
        raise ValueError(f"pooling supports data_format='NHWC' only, got {data_format!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    x = convert_to_tensor(input)
    (kh, kw), (sh, sw), same = _pair(ksize, "ksize"), _pair(strides, "strides"), padding.upper() == "SAME"
    if len(x.shape) != 4 or None in tuple(x.shape)[1:3]:
        raise ValueError(f"pooling needs a 4-D NHWC input with static height and width, got shape {x.shape}")
    h, w = tuple(x.shape)[1:3]
    (pt, pb, oh), (pl, pr, ow) = _pool_geometry(h, kh, sh, same), _pool_geometry(w, kw, sw, same)
    if oh < 1 or ow < 1:
        raise ValueError(f"Computed output size would be negative: input {x.shape}, window {(kh, kw)}, VALID padding")
    if kind == "max":
        return apply(ops.max_pool2d, [x], {"ksize": (kh, kw), "strides": (sh, sw), "same": same})
    check_padded("AvgPool", tuple(x.shape), (pt, pb, pl, pr), x.dtype)
    xp = _pad_axis(_pad_axis(x, 1, pt, pb, 0.0), 2, pl, pr, 0.0)
    out = None
    for i, j in window_taps((None, h, w, None), {"ksize": (kh, kw), "strides": (sh, sw), "same": same}):
        tap = xp[:, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw, :]  # (taps of padding only add 0)
        out = tap if out is None else out + tap
    # each window's mean over its elements inside the input (TF's SAME average leaves the padding out)
    rows = np.array([min(r * sh - pt + kh, h) - max(r * sh - pt, 0) for r in range(oh)])
    cols = np.array([min(c * sw - pl + kw, w) - max(c * sw - pl, 0) for c in range(ow)])
    return out * convert_to_tensor((1.0 / np.outer(rows, cols))[None, :, :, None].astype(x.dtype.np))


@op_api(ops.max_pool2d, exports=("nn.max_pool2d",))
def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """TF's tf.nn.max_pool2d: the maximum of each ksize window, NHWC, 'SAME' or 'VALID' padding (one op, whose
    gradient goes to each window's first maximum)."""
    return _pool2d(input, ksize, strides, padding, data_format, "max")


@export("nn.avg_pool2d")
def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """TF's tf.nn.avg_pool2d: the mean of each ksize window (SAME windows average their in-bounds elements)."""
    return _pool2d(input, ksize, strides, padding, data_format, "avg")
