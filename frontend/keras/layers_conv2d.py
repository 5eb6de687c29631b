"""Keras's SeparableConv2D (a depthwise convolution, then a 1x1 pointwise one) and Conv2DTranspose (the
transposed convolution: the input's pixels spread `strides` apart, then a stride-1 convolution with the spatially
flipped kernel), both on NHWC inputs and written with tfn.nn's convolutions, so their gradients come for free."""
from tfn.keras import activations
from tfn.keras._ops import tf
from tfn.keras.layers import Layer
from tfn.keras.layers_reshape import check_ndim, int_tuple


def _channels_last(data_format, what):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{what} supports data_format='channels_last' only, got {data_format!r}")


def _padding(value):
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={value}")
    return value.lower()


def _check_filters(filters):
    if not isinstance(filters, int) or filters < 1:
        raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                         f"filters={filters}.")


class SeparableConv2D(Layer):
    """depthwise_conv2d (kernel (kh, kw, channels, depth_multiplier)) then a 1x1 convolution (pointwise kernel
    (1, 1, channels * depth_multiplier, filters)), plus bias, then the activation."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "SeparableConv2D")
        _check_filters(filters)
        if not isinstance(depth_multiplier, int) or depth_multiplier < 1:
            raise ValueError(f"Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                             f"Received depth_multiplier={depth_multiplier}.")
        self.filters, self.depth_multiplier = filters, depth_multiplier
        self.kernel_size = int_tuple(kernel_size, 2, "kernel_size")
        self.strides = int_tuple(strides, 2, "strides")
        self.dilation_rate = int_tuple(dilation_rate, 2, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={strides} and dilation_rate={dilation_rate}")
        self.padding = _padding(padding)
        self.activation, self.activation_arg = activations.get(activation), activation
        self.use_bias = use_bias
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        channels = input_shape[-1]
        self.depthwise_kernel = self.add_weight((*self.kernel_size, channels, self.depth_multiplier),
                                                self.depthwise_initializer, name="depthwise_kernel")
        self.pointwise_kernel = self.add_weight((1, 1, channels * self.depth_multiplier, self.filters),
                                                self.pointwise_initializer, name="pointwise_kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = tf.nn.depthwise_conv2d(inputs, self.depthwise_kernel, strides=[1, *self.strides, 1],
                                   padding=self.padding.upper(), dilations=list(self.dilation_rate))
        y = tf.nn.conv2d(y, self.pointwise_kernel, strides=[1, 1], padding="VALID")
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "depth_multiplier": self.depth_multiplier,
                "activation": self.activation_arg, "use_bias": self.use_bias,
                "depthwise_initializer": self.depthwise_initializer,
                "pointwise_initializer": self.pointwise_initializer, "bias_initializer": self.bias_initializer}


def transpose_pads(kernel, stride, dilation, padding, output_padding):
    """(before, after) zero padding of the stride-spread input for the flipped-kernel convolution: Keras's output
    sizes, (in - 1) * stride + max(k, stride) + output_padding for 'valid' (k the dilated kernel size) and
    in * stride for 'same' without output_padding."""
    k = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = max(k, stride) - k if output_padding is None else output_padding
        return k - 1, k - 1 + extra
    total = stride + k - 2 if output_padding is None else k + k % 2 - 2 + output_padding
    before = min(total // 2 + total % 2, k - 1)
    return before, total - before


def _spread(x, axis, stride):
    """x with stride - 1 zeros between consecutive slices along `axis` (static size n -> (n - 1) * stride + 1)."""
    if stride == 1:
        return x
    rank = len(x.shape)
    y = tf.pad(tf.expand_dims(x, axis + 1), [[0, 0]] * (axis + 1) + [[0, stride - 1]] + [[0, 0]] * (rank - axis - 1))
    shape = [-1 if i == 0 else d for i, d in enumerate(x.shape)]
    shape[axis] *= stride
    y = tf.reshape(y, shape)
    index = [slice(None)] * rank
    index[axis] = slice(0, (x.shape[axis] - 1) * stride + 1)
    return y[tuple(index)]


def conv2d_transpose(inputs, kernel, strides, padding, output_padding, dilation):
    """The transposed convolution of NHWC `inputs` with a (kh, kw, filters, channels) kernel, Keras's output sizes:
    the input spread `strides` apart, zero-padded by transpose_pads, then a VALID stride-1 convolution with the
    spatially flipped kernel."""
    x = _spread(_spread(inputs, 1, strides[0]), 2, strides[1])
    pads = [transpose_pads(k, s, d, padding, op)
            for k, s, d, op in zip(kernel.shape[:2], strides, dilation, output_padding or (None, None))]
    x = tf.pad(x, [[0, 0], list(pads[0]), list(pads[1]), [0, 0]])
    flipped = tf.transpose(tf.reverse(kernel, [0, 1]), [0, 1, 3, 2])  # (kh, kw, channels, filters)
    return tf.nn.conv2d(x, flipped, strides=[1, 1], padding="VALID", dilations=list(dilation))


class Conv2DTranspose(Layer):
    """The transposed 2-D convolution (the gradient of Conv2D with respect to its input): kernel
    (kh, kw, filters, channels), plus bias, then the activation. Output size per spatial axis:
    (in - 1) * stride + max(kernel, stride) for 'valid', in * stride for 'same' (output_padding as Keras)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv2DTranspose")
        _check_filters(filters)
        self.filters = filters
        self.kernel_size = int_tuple(kernel_size, 2, "kernel_size")
        self.strides = int_tuple(strides, 2, "strides")
        self.dilation_rate = int_tuple(dilation_rate, 2, "dilation_rate")
        self.padding = _padding(padding)
        self.output_padding = None if output_padding is None else int_tuple(output_padding, 2, "output_padding",
                                                                            allow_zero=True)
        if self.output_padding is not None:
            for i, (op, s) in enumerate(zip(self.output_padding, self.strides)):
                if op >= s:
                    raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. At "
                                     f"dimension {i}, `output_padding` is {op} but `strides` is {s}. Received: "
                                     f"output_padding={self.output_padding}, strides={self.strides}")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={strides} and dilation_rate={dilation_rate}")
        self.activation, self.activation_arg = activations.get(activation), activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 4)
        if None in tuple(input_shape[1:]):
            raise ValueError(f"Conv2DTranspose needs the input's height, width and channels defined; received input "
                             f"shape {tuple(input_shape)}")
        self.kernel = self.add_weight((*self.kernel_size, self.filters, input_shape[-1]), self.kernel_initializer,
                                      name="kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = conv2d_transpose(inputs, self.kernel, self.strides, self.padding, self.output_padding, self.dilation_rate)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                "data_format": "channels_last", "dilation_rate": self.dilation_rate,
                "activation": self.activation_arg, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer, "bias_initializer": self.bias_initializer}


SeparableConvolution2D, Convolution2DTranspose = SeparableConv2D, Conv2DTranspose
