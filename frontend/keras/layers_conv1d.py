"""Keras's 1-D convolution family on (batch, steps, channels) inputs: Conv1D (valid / same / causal padding,
strides, dilation, groups), Conv1DTranspose, DepthwiseConv1D, SeparableConv1D, MaxPooling1D, AveragePooling1D, and
the global poolings GlobalAveragePooling1D, GlobalMaxPooling1D and GlobalMaxPooling2D. Each is the 2-D op
(tfn.nn.conv2d, depthwise_conv2d, max_pool2d, avg_pool2d) over a height-1 image, as TensorFlow itself computes
them."""
from tfn.keras import activations
from tfn.keras._ops import tf
from tfn.keras.layers import GlobalAveragePooling2D, Layer
from tfn.keras.layers_conv2d import conv2d_transpose
from tfn.keras.layers_reshape import check_ndim, int_tuple


def _one(value, name):
    return int_tuple(value, 1, name)[0]


def _channels_last(data_format, what):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{what} supports data_format='channels_last' only, got {data_format!r}")


def _padding(value, allowed):
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(map(repr, allowed))}. Received: "
                         f"padding={value}")
    return value.lower()


class Conv1D(Layer):
    """1-D convolution: kernel (kernel_size, channels // groups, filters), plus bias, then the activation.
    padding='causal' pads dilation * (kernel_size - 1) zero steps at the start only (output t sees inputs <= t)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv1D")
        if not isinstance(filters, int) or filters < 1:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"The number of groups must be a positive integer. Received: groups={groups}.")
        if filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. Received: "
                             f"groups={groups}, filters={filters}.")
        self.filters, self.groups = filters, groups
        self.kernel_size = _one(kernel_size, "kernel_size")
        self.strides = _one(strides, "strides")
        self.dilation_rate = _one(dilation_rate, "dilation_rate")
        self.padding = _padding(padding, ("valid", "same", "causal"))
        if self.strides > 1 and self.dilation_rate > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={strides} and dilation_rate={dilation_rate}")
        self.activation = activations.get(activation)
        self.activation_arg = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        channels = input_shape[-1]
        if channels is None or channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {channels} channels (full input "
                             f"shape is {tuple(input_shape)}).")
        self.kernel = self.add_weight((self.kernel_size, channels // self.groups, self.filters),
                                      self.kernel_initializer, name="kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        x = inputs
        if self.padding == "causal":
            x = tf.pad(x, [[0, 0], [self.dilation_rate * (self.kernel_size - 1), 0], [0, 0]])
        x = tf.expand_dims(x, 1)  # (batch, 1, steps, channels)
        kernel = tf.expand_dims(self.kernel, 0)  # (1, k, channels // groups, filters)
        pad = "SAME" if self.padding == "same" else "VALID"

        def conv(xs, ks):
            return tf.nn.conv2d(xs, ks, strides=[1, self.strides], padding=pad, dilations=[1, self.dilation_rate])

        if self.groups == 1:
            y = conv(x, kernel)
        else:
            xs = tf.split(x, self.groups, axis=-1)
            ks = tf.split(kernel, self.groups, axis=-1)
            y = tf.concat([conv(a, b) for a, b in zip(xs, ks)], axis=-1)
        y = tf.squeeze(y, [1])
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": (self.kernel_size,),
                "strides": (self.strides,), "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": (self.dilation_rate,), "groups": self.groups, "activation": self.activation_arg,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}


class _Conv1DBase(Layer):
    """The arguments the other 1-D convolutions share with Conv1D (valid / same padding)."""

    def __init__(self, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1, activation=None,
                 use_bias=True, bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, type(self).__name__)
        self.kernel_size = _one(kernel_size, "kernel_size")
        self.strides = _one(strides, "strides")
        self.dilation_rate = _one(dilation_rate, "dilation_rate")
        self.padding = _padding(padding, ("valid", "same"))
        if self.strides > 1 and self.dilation_rate > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={strides} and dilation_rate={dilation_rate}")
        self.activation, self.activation_arg = activations.get(activation), activation
        self.use_bias, self.bias_initializer = use_bias, bias_initializer

    def _finish(self, y):
        y = tf.squeeze(y, [1])
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "kernel_size": (self.kernel_size,), "strides": (self.strides,),
                "padding": self.padding, "data_format": "channels_last", "dilation_rate": (self.dilation_rate,),
                "activation": self.activation_arg, "use_bias": self.use_bias,
                "bias_initializer": self.bias_initializer}


def _filters(filters):
    if not isinstance(filters, int) or filters < 1:
        raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                         f"filters={filters}.")
    return filters


def _multiplier(depth_multiplier):
    if not isinstance(depth_multiplier, int) or depth_multiplier < 1:
        raise ValueError(f"Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                         f"Received depth_multiplier={depth_multiplier}.")
    return depth_multiplier


class Conv1DTranspose(_Conv1DBase):
    """The transposed 1-D convolution: kernel (kernel_size, filters, channels); output length
    (steps - 1) * strides + max(kernel, strides) for 'valid', steps * strides for 'same' (output_padding as Keras)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, **kwargs)
        self.filters = _filters(filters)
        self.output_padding = None if output_padding is None else int_tuple(output_padding, 1, "output_padding",
                                                                            allow_zero=True)[0]
        if self.output_padding is not None and self.output_padding >= self.strides:
            raise ValueError(f"`output_padding` must be strictly less than `strides` for all dimensions. At dimension "
                             f"0, `output_padding` is {self.output_padding} but `strides` is {self.strides}.")
        self.kernel_initializer = kernel_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        if None in tuple(input_shape[1:]):
            raise ValueError(f"Conv1DTranspose needs the input's steps and channels defined; received input shape "
                             f"{tuple(input_shape)}")
        self.kernel = self.add_weight((self.kernel_size, self.filters, input_shape[-1]), self.kernel_initializer,
                                      name="kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        op = None if self.output_padding is None else (0, self.output_padding)
        y = conv2d_transpose(tf.expand_dims(inputs, 1), tf.expand_dims(self.kernel, 0), (1, self.strides),
                             self.padding, op, (1, self.dilation_rate))
        return self._finish(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "output_padding": None if self.output_padding is None else (self.output_padding,),
                "kernel_initializer": self.kernel_initializer}


class DepthwiseConv1D(_Conv1DBase):
    """Each input channel convolved with its own depth_multiplier filters: kernel (kernel_size, channels,
    depth_multiplier), output channels channels * depth_multiplier (channel c's filters together)."""

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None, dilation_rate=1,
                 activation=None, use_bias=True, depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, **kwargs)
        self.depth_multiplier = _multiplier(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        channels = input_shape[-1]
        self.kernel = self.add_weight((self.kernel_size, channels, self.depth_multiplier), self.depthwise_initializer,
                                      name="kernel")
        self.bias = self.add_weight((channels * self.depth_multiplier,), self.bias_initializer, name="bias") \
            if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = tf.nn.depthwise_conv2d(tf.expand_dims(inputs, 1), tf.expand_dims(self.kernel, 0),
                                   strides=[1, 1, self.strides, 1], padding=self.padding.upper(),
                                   dilations=[1, self.dilation_rate])
        return self._finish(y)

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": self.depthwise_initializer}


class SeparableConv1D(_Conv1DBase):
    """DepthwiseConv1D (depthwise_kernel (kernel_size, channels, depth_multiplier)) then a pointwise convolution
    (pointwise_kernel (1, channels * depth_multiplier, filters)), plus bias, then the activation."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, **kwargs)
        self.filters, self.depth_multiplier = _filters(filters), _multiplier(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        channels = input_shape[-1]
        self.depthwise_kernel = self.add_weight((self.kernel_size, channels, self.depth_multiplier),
                                                self.depthwise_initializer, name="depthwise_kernel")
        self.pointwise_kernel = self.add_weight((1, channels * self.depth_multiplier, self.filters),
                                                self.pointwise_initializer, name="pointwise_kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = tf.nn.depthwise_conv2d(tf.expand_dims(inputs, 1), tf.expand_dims(self.depthwise_kernel, 0),
                                   strides=[1, 1, self.strides, 1], padding=self.padding.upper(),
                                   dilations=[1, self.dilation_rate])
        y = tf.nn.conv2d(y, tf.expand_dims(self.pointwise_kernel, 0), strides=[1, 1], padding="VALID")
        return self._finish(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": self.depthwise_initializer,
                "pointwise_initializer": self.pointwise_initializer}


class _Pooling1D(Layer):
    kind = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, type(self).__name__)
        self.pool_size = _one(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _one(strides, "strides")
        self.padding = _padding(padding, ("valid", "same"))

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        self.built = True

    def call(self, inputs):
        pool = tf.nn.max_pool2d if self.kind == "max" else tf.nn.avg_pool2d
        y = pool(tf.expand_dims(inputs, 1), (1, self.pool_size), (1, self.strides), self.padding.upper())
        return tf.squeeze(y, [1])

    def get_config(self):
        return {**super().get_config(), "pool_size": (self.pool_size,), "strides": (self.strides,),
                "padding": self.padding, "data_format": "channels_last"}


class MaxPooling1D(_Pooling1D):
    """The maximum over each window of pool_size steps."""
    kind = "max"


class AveragePooling1D(_Pooling1D):
    """The mean over each window of pool_size steps (SAME windows average their in-bounds steps)."""
    kind = "avg"


class _GlobalPooling(Layer):
    rank, kind = None, None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, type(self).__name__)
        self.keepdims = keepdims

    def build(self, input_shape):
        check_ndim(self, input_shape, self.rank + 2)
        self.built = True

    def call(self, inputs):
        reduce = tf.reduce_max if self.kind == "max" else tf.reduce_mean
        return reduce(inputs, axis=list(range(1, self.rank + 1)), keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps: (batch, steps, channels) -> (batch, channels)."""
    rank, kind = 1, "avg"


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps: (batch, steps, channels) -> (batch, channels)."""
    rank, kind = 1, "max"


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over height and width: (batch, h, w, channels) -> (batch, channels)."""
    rank, kind = 2, "max"


Convolution1D, Convolution1DTranspose, SeparableConvolution1D = Conv1D, Conv1DTranspose, SeparableConv1D
MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
GlobalMaxPool2D, GlobalAvgPool2D = GlobalMaxPooling2D, GlobalAveragePooling2D
