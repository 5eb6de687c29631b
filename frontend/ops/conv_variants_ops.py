"""tf.nn.conv1d and conv1d_transpose (on conv2d with a height of 1), conv2d_transpose (conv2d's gradient with respect
to its input, the same rule as conv2d's gradient: tfn.ops.nn_grad), and the 1-D and N-D pooling names
(max_pool1d, avg_pool1d, max_pool, avg_pool: 1-D on the 2-D ones with a height of 1, 2-D as they are)."""
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.ops import array_ops, fill_ops, nn_ops
from tfn.ops.composite import user_error, with_gradient


def _one(value, what):
    """TF's 1-D int (or list of 1 or 3 with N, C entries 1) as the int."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 3:
        if values[0] != 1 or values[2] != 1:
            raise user_error(ValueError(f"{what} in the batch and depth dimensions must be 1, got {values}"))
        values = values[1:2]
    if len(values) != 1:
        raise user_error(ValueError(f"{what} must be an int or a list of 1 or 3 ints, got {value!r}"))
    return values[0]


def _nwc(data_format):
    if data_format not in ("NWC", None):
        raise user_error(ValueError(f"tfn supports data_format='NWC' only for 1-D convolutions, got {data_format!r}"))


@export("nn.conv1d")
def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv1d: NWC input, [width, in, out] filters."""
    _nwc(data_format)
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    d = 1 if dilations is None else _one(dilations, "dilations")
    out = nn_ops.conv2d(array_ops.expand_dims(x, 1), array_ops.expand_dims(w, 0), [1, _one(stride, "stride")],
                        padding, dilations=[1, d])
    return array_ops.squeeze(out, [1])


def _conv_view(x, w, strides, padding, dilations):
    """The OpView of tfn.conv2d(x, w) that conv2d's gradient rule reads (its inputs' shapes and attributes)."""
    from tfn.gradients.registry import OpView  # start-up cost: gradients load on first use
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise user_error(ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}"))
    attrs = {"strides": nn_ops._pair(strides, "strides"), "dilations": nn_ops._pair(dilations or 1, "dilations"),
             "same": padding.upper() == "SAME"}
    return OpView(ops.conv2d, [x, w], attrs, None), attrs


@export("nn.conv2d_transpose")
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    """TF's tf.nn.conv2d_transpose: the gradient of conv2d(x, filters) with respect to an NHWC x of
    `output_shape` ([batch, height, width, in]), for the output gradient `input`; filters [h, w, in, out]."""
    from tfn.ops import nn_grad  # start-up cost: conv2d's gradient rule
    if data_format != "NHWC":
        raise user_error(ValueError(f"conv2d_transpose supports data_format='NHWC' only, got {data_format!r}"))
    y, w = convert_to_tensor(input), convert_to_tensor(filters)
    shape = [int(d) for d in (output_shape.numpy() if hasattr(output_shape, "numpy") else output_shape)]
    if len(shape) != 4:
        raise user_error(ValueError(f"output_shape must have 4 entries (NHWC), got {shape}"))
    x = fill_ops.zeros(shape, y.dtype)
    view, attrs = _conv_view(x, w, strides, padding, dilations)
    expected = nn_ops.conv2d(x, w, attrs["strides"], padding, dilations=attrs["dilations"])
    if tuple(expected._shape) != tuple(y._shape) and None not in y._shape:
        raise user_error(ValueError(f"conv2d_transpose: input shape {y.shape} is not conv2d's output shape "
                                    f"{expected.shape} for output_shape {shape}"))

    def forward(y, w):
        view.needs = [True, False]
        return nn_grad._conv2d_grad(view, y)[0]

    def backward(_, g):  # <g, conv2d_transpose(y, w)> = <conv2d(g, w), y>
        gy = nn_ops.conv2d(g, w, attrs["strides"], padding, dilations=attrs["dilations"])
        of_g, _ = _conv_view(g, w, strides, padding, dilations)
        of_g.needs = [False, True]
        return [gy, nn_grad._conv2d_grad(of_g, y)[1]]
    return with_gradient(forward, backward, y, w)


@export("nn.conv1d_transpose")
def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """TF's tf.nn.conv1d_transpose: conv2d_transpose with a height of 1 (filters [w, in, out])."""
    _nwc(data_format)
    shape = [int(d) for d in (output_shape.numpy() if hasattr(output_shape, "numpy") else output_shape)]
    out = conv2d_transpose(array_ops.expand_dims(convert_to_tensor(input), 1),
                           array_ops.expand_dims(convert_to_tensor(filters), 0), [shape[0], 1] + shape[1:],
                           [1, _one(strides, "strides")], padding,
                           dilations=None if dilations is None else [1, _one(dilations, "dilations")])
    return array_ops.squeeze(out, [1])


def _pool1d(pool, input, ksize, strides, padding, data_format):  # noqa: A002
    _nwc(data_format)
    x = array_ops.expand_dims(convert_to_tensor(input), 1)
    out = pool(x, [1, _one(ksize, "ksize")], [1, _one(strides, "strides")], padding)
    return array_ops.squeeze(out, [1])


@export("nn.max_pool1d")
def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The maximum of each window of an NWC input."""
    return _pool1d(nn_ops.max_pool2d, input, ksize, strides, padding, data_format)


@export("nn.avg_pool1d")
def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean of each window of an NWC input (SAME windows average their in-bounds elements)."""
    return _pool1d(nn_ops.avg_pool2d, input, ksize, strides, padding, data_format)


def _pool_nd(kind, input, ksize, strides, padding, data_format):  # noqa: A002
    x = convert_to_tensor(input)
    if x.ndim == 3:
        return (max_pool1d if kind == "max" else avg_pool1d)(x, ksize, strides, padding,
                                                             "NWC" if data_format is None else data_format)
    if x.ndim == 4:
        return (nn_ops.max_pool2d if kind == "max" else nn_ops.avg_pool2d)(
            x, ksize, strides, padding, "NHWC" if data_format is None else data_format)
    raise user_error(ValueError(f"tfn.nn.{kind}_pool supports 1-D and 2-D pooling (3-D or 4-D input), got shape "
                                f"{x.shape}"))


@export("nn.max_pool")
def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """max_pool1d or max_pool2d by the input's rank (3: NWC, 4: NHWC)."""
    return _pool_nd("max", input, ksize, strides, padding, data_format)


@export("nn.avg_pool")
def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """avg_pool1d or avg_pool2d by the input's rank (3: NWC, 4: NHWC)."""
    return _pool_nd("avg", input, ksize, strides, padding, data_format)


@export("nn.atrous_conv2d")
def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with the filter taps `rate` apart (dilations=rate, stride 1)."""
    return nn_ops.conv2d(value, filters, 1, padding, dilations=rate)


@export("nn.separable_conv2d")
def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """depthwise_conv2d with depthwise_filter, then a 1x1 conv2d with pointwise_filter [1, 1, in * mult, out]."""
    if data_format not in (None, "NHWC"):
        raise user_error(ValueError(f"separable_conv2d supports data_format='NHWC' only, got {data_format!r}"))
    depthwise = nn_ops.depthwise_conv2d(input, depthwise_filter, strides, padding, dilations=dilations)
    return nn_ops.conv2d(depthwise, pointwise_filter, 1, "VALID")


@export("nn.convolution")
def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,  # noqa: A002
                name=None):
    """conv1d or conv2d by the input's rank (3: NWC, 4: NHWC)."""
    x = convert_to_tensor(input)
    if x.ndim == 3:
        return conv1d(x, filters, 1 if strides is None else strides, padding, "NWC" if data_format is None
                      else data_format, dilations)
    if x.ndim == 4:
        return nn_ops.conv2d(x, filters, 1 if strides is None else strides, padding,
                             "NHWC" if data_format is None else data_format, dilations)
    raise user_error(ValueError(f"tfn.nn.convolution supports 1-D and 2-D convolutions (3-D or 4-D input), got "
                                f"shape {x.shape}"))


@export("nn.conv_transpose")
def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """conv1d_transpose or conv2d_transpose by the input's rank (3: NWC, 4: NHWC)."""
    x = convert_to_tensor(input)
    if x.ndim == 3:
        return conv1d_transpose(x, filters, output_shape, strides, padding, "NWC" if data_format is None
                                else data_format, dilations)
    if x.ndim == 4:
        return conv2d_transpose(x, filters, output_shape, strides, padding, "NHWC" if data_format is None
                                else data_format, dilations)
    raise user_error(ValueError(f"tfn.nn.conv_transpose supports 1-D and 2-D (3-D or 4-D input), got shape "
                                f"{x.shape}"))
