"""Keras layers (`tfn.keras.layers`): `Layer`, whose variables are made by `build(input_shape)` on the first call,
and the everyday layers, each written with tfn ops so that it runs eagerly and inside compiled functions alike."""
import inspect
import re

import numpy as np

from tfn.keras import activations, config, initializers, regularizers
from tfn.keras._ops import tf
from tfn.state.module import Module
from tfn.state.variables import Variable

_NAME_COUNTS = {}
_CALL_DEPTH = [0]  # layers being called now: a call at depth 0 (the outermost) clears the losses of the last one


def unique_name(base):
    """Keras's layer names: `dense`, then `dense_1`, `dense_2`, ... (process-wide)."""
    n = _NAME_COUNTS.get(base, 0)
    _NAME_COUNTS[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _snake(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class Layer(Module):
    """Keras's Layer: weights from `add_weight` (in `build`, run once on the first call with the input's shape)."""

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None, activity_regularizer=None, **kwargs):
        # <weight>_regularizer / <weight>_constraint (kernel_, bias_, recurrent_, embeddings_, ...): for the weight
        # add_weight makes under that name
        rules = {k: kwargs.pop(k) for k in [k for k in kwargs if re.fullmatch(r"\w+_(regularizer|constraint)", k)]}
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}")
        object.__setattr__(self, "_tracked", [])
        self._weight_rules = {k: (regularizers.get(v) if k.endswith("_regularizer") else regularizers.get_constraint(v))
                              for k, v in rules.items()}
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._weight_penalties = []  # (variable, regularizer) for `losses`
        super().__init__(name=name if name is not None else unique_name(_snake(type(self).__name__)))
        self.trainable = trainable
        self.built = False
        self._own_weights = []
        self._output_shape = None
        self._input_shape_arg = None if input_shape is None else (None, *input_shape)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        config.record_init(cls)  # get_config returns the arguments a layer was made with

    def __setattr__(self, key, value):
        # sublayers are found in assignment order, as Keras tracks them (tfn.Module sorts by attribute name)
        if isinstance(value, Layer) and not key.startswith("__") and value not in self.__dict__.get("_tracked", []):
            self.__dict__.setdefault("_tracked", []).append(value)
        object.__setattr__(self, key, value)

    def add_weight(self, shape=(), initializer="glorot_uniform", dtype="float32", trainable=True, name=None,
                   regularizer=None, constraint=None):
        """A new tfn.Variable of `shape` owned by this layer (trainable or not). A regularizer's penalty of it joins
        `losses` (the model's loss); a constraint is applied to it after each optimizer step. Both default to the
        layer's `<name>_regularizer` / `<name>_constraint` arguments."""
        value = initializers.get(initializer)(tuple(shape), dtype)
        rules = self.__dict__.get("_weight_rules", {})
        regularizer = regularizers.get(regularizer) or rules.get(f"{name}_regularizer")
        constraint = regularizers.get_constraint(constraint) or rules.get(f"{name}_constraint")
        variable = Variable(np.asarray(value, np.float32 if dtype == "float32" else None), trainable=trainable,
                            name=f"{self.name}/{name or 'weight'}", constraint=constraint)
        self._own_weights.append(variable)
        if regularizer is not None:
            self.__dict__.setdefault("_weight_penalties", []).append((variable, regularizer))
        return variable

    def build(self, input_shape):
        """Create the layer's weights for inputs of `input_shape`; the default layer has none."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def _build_on_first_call(self, input_shape):
        self.build(input_shape)

    def __call__(self, inputs, *args, training=None, **kwargs):
        if not isinstance(inputs, (list, tuple, dict)):
            inputs = tf.convert_to_tensor(inputs)
            if inputs.dtype.is_floating and inputs.dtype != tf.float32:
                inputs = tf.cast(inputs, tf.float32)  # Keras autocasts float inputs to the layer's float32
        self._check_rank(inputs)
        if not self.built:
            shape = _shape_of(inputs)
            self._build_on_first_call(shape)
            self.built = True
            if isinstance(shape, tuple) and shape:  # (what Model.save rebuilds a model with)
                self._build_input_shape = (None, *shape[1:])
        if training is not None and _takes_training(self.call):
            kwargs["training"] = training
        if _CALL_DEPTH[0] == 0:
            self._clear_losses()
        _CALL_DEPTH[0] += 1
        try:
            outputs = self.call(inputs, *args, **kwargs)
        finally:
            _CALL_DEPTH[0] -= 1
        if hasattr(outputs, "shape"):
            self._output_shape = (None, *tuple(outputs.shape)[1:]) if len(outputs.shape) else ()
        if self.__dict__.get("_activity_regularizer") is not None and hasattr(outputs, "shape"):
            self.add_loss(self._activity_regularizer(outputs))
        return outputs

    # Keras's InputSpec rank: the rank the layer's inputs must have (ndim) or at least (min_ndim); None: any
    input_ndim = input_min_ndim = None

    def _check_rank(self, inputs):
        rank = len(inputs.shape) if hasattr(inputs, "shape") and inputs.shape.rank is not None else None
        if rank is None:
            return
        for want, bad, what in ((self.input_ndim, rank != self.input_ndim, "ndim"),
                                (self.input_min_ndim, self.input_min_ndim is not None and rank < self.input_min_ndim,
                                 "min_ndim")):
            if want is not None and bad:
                raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected '
                                 f"{what}={want}, found ndim={rank}. Full shape received: {tuple(inputs.shape)}")

    def add_loss(self, loss):
        """Add a scalar loss (from `call`): `model.losses` holds it until the next outermost call, and fit's and
        evaluate's loss add it to the compiled loss."""
        self.__dict__.setdefault("_losses", []).append(loss)

    @property
    def losses(self):
        """The losses `add_loss` added during the last outermost call, this layer's then its sublayers'."""
        out, seen = [], set()
        for layer in [self] + self._all_sublayers():
            if id(layer) not in seen:
                seen.add(id(layer))
                out += layer.__dict__.get("_losses", [])
                out += [regularizer(v) for v, regularizer in layer.__dict__.get("_weight_penalties", [])]
        return out

    def _all_sublayers(self):
        out = []
        for layer in self._tracked:
            out += [layer] + layer._all_sublayers()
        return out

    def _clear_losses(self):
        for layer in [self] + self._all_sublayers():
            layer.__dict__.pop("_losses", None)

    def get_config(self):
        """Keras's config: the constructor's arguments. Here those a subclass was made with, found by its
        __init__'s signature (frontend/keras/config.py; a layer may spell out its own), with name, trainable and
        dtype."""
        return {**config.object_config(self), "name": self.name, "trainable": self.trainable, "dtype": "float32"}

    @classmethod
    def from_config(cls, config):
        """A new layer of this class made from `get_config()`'s dictionary."""
        return cls(**config)

    @property
    def output_shape(self):
        """The output shape of the last call, batch dimension as None."""
        if self._output_shape is None:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no defined output shape.")
        return self._output_shape

    @property
    def layers(self):
        """The layers assigned as attributes, in assignment order."""
        return list(self._tracked)

    def _collect(self, parent_trainable=True, seen=None):
        """[(variable, effectively trainable)] of this layer then its sublayers, each variable once."""
        seen = set() if seen is None else seen
        on = parent_trainable and self.trainable
        out = []
        for v in self._own_weights:
            if id(v) not in seen:
                seen.add(id(v))
                out.append((v, on and v.trainable))
        for layer in self._tracked:
            out += layer._collect(on, seen)
        return out

    @property
    def trainable_weights(self):
        return [v for v, t in self._collect() if t]

    @property
    def non_trainable_weights(self):
        return [v for v, t in self._collect() if not t]

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def get_weights(self):
        return [v.numpy() for v in self.weights]

    def set_weights(self, values):
        weights = self.weights
        if len(values) != len(weights):
            raise ValueError(f"Layer {self.name} expects {len(weights)} weights, but the weight list received "
                             f"contains {len(values)} weights.")
        for v, value in zip(weights, values):
            v.assign(np.asarray(value))

    def count_params(self):
        return int(sum(int(np.prod(v.shape)) for v in self.weights))


def _shape_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [_shape_of(x) for x in inputs]
    if isinstance(inputs, dict):
        return {k: _shape_of(x) for k, x in inputs.items()}
    return tuple(inputs.shape)


def _takes_training(fn):
    params = inspect.signature(fn).parameters
    return "training" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _pair(value, what):
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or any(not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"The `{what}` argument must be a tuple of 2 positive integers. Received: {what}={value}")
    return values


def _padding(value):
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={value}")
    return value.lower()


def _activation_config(fn):
    """An activation function's name for get_config (the function itself if it is not one of Keras's)."""
    return next((name for name, f in activations._BY_NAME.items() if f is fn), fn)


class InputLayer(Layer):
    """A placeholder for the input shape of a Sequential model (`keras.Input(shape=...)`)."""

    def __init__(self, shape=None, batch_size=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.shape = (batch_size, *tuple(shape))


def Input(shape=None, batch_size=None, name=None):  # noqa: N802  (Keras's spelling)
    """The input of a Sequential model: `Sequential([Input(shape=(8,)), Dense(4)])` builds on construction."""
    return InputLayer(shape=shape, batch_size=batch_size, name=name)


class Dense(Layer):
    """activation(inputs @ kernel + bias) over the last axis."""

    input_min_ndim = 2

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units < 1:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. Received: "
                             f"units={units}")
        self.units, self.use_bias = units, use_bias
        self.activation = activations.get(activation)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        if input_shape[-1] is None:
            raise ValueError(f"The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             f"Full input shape received: {input_shape}")
        self.kernel = self.add_weight((input_shape[-1], self.units), self.kernel_initializer, name="kernel")
        self.bias = self.add_weight((self.units,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        shape = tuple(inputs.shape)
        x = inputs if len(shape) == 2 else tf.reshape(inputs, [-1, shape[-1]])
        y = tf.matmul(x, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        if len(shape) != 2:
            y = tf.reshape(y, [-1 if d is None else d for d in shape[:-1]] + [self.units])
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": _activation_config(self.activation),
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}


class Conv2D(Layer):
    """2-D convolution of NHWC inputs (tfn.nn.conv2d), plus bias, then the activation."""

    input_ndim = 4

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"Conv2D supports data_format='channels_last' only, got {data_format!r}")
        self.filters = filters
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        shape = (*self.kernel_size, input_shape[-1], self.filters)
        self.kernel = self.add_weight(shape, self.kernel_initializer, name="kernel")
        self.bias = self.add_weight((self.filters,), self.bias_initializer, name="bias") if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = tf.nn.conv2d(inputs, self.kernel, strides=list(self.strides), padding=self.padding.upper(),
                         dilations=list(self.dilation_rate))
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "activation": _activation_config(self.activation),
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}


class DepthwiseConv2D(Layer):
    """Depthwise 2-D convolution of NHWC inputs (tfn.nn.depthwise_conv2d): each input channel is convolved with its
    own depth_multiplier filters (kernel [kh, kw, in, depth_multiplier]), plus bias, then the activation."""

    input_ndim = 4

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"DepthwiseConv2D supports data_format='channels_last' only, got {data_format!r}")
        if not isinstance(depth_multiplier, int) or depth_multiplier < 1:
            raise ValueError(f"Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                             f"Received depth_multiplier={depth_multiplier}.")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self.depth_multiplier = depth_multiplier
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer, self.bias_initializer = depthwise_initializer, bias_initializer

    def build(self, input_shape):
        channels = input_shape[-1]
        shape = (*self.kernel_size, channels, self.depth_multiplier)
        self.kernel = self.add_weight(shape, self.depthwise_initializer, name="kernel")
        self.bias = (self.add_weight((channels * self.depth_multiplier,), self.bias_initializer, name="bias")
                     if self.use_bias else None)
        self.built = True

    def call(self, inputs):
        y = tf.nn.depthwise_conv2d(inputs, self.kernel, strides=[1, *self.strides, 1], padding=self.padding.upper(),
                                   dilations=list(self.dilation_rate))
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "depth_multiplier": self.depth_multiplier, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "activation": _activation_config(self.activation),
                "use_bias": self.use_bias, "depthwise_initializer": self.depthwise_initializer,
                "bias_initializer": self.bias_initializer}


class _Pooling2D(Layer):
    input_ndim = 4
    kind = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"pooling supports data_format='channels_last' only, got {data_format!r}")
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def call(self, inputs):
        pool = tf.nn.max_pool2d if self.kind == "max" else tf.nn.avg_pool2d
        return pool(inputs, self.pool_size, self.strides, self.padding.upper())

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


class MaxPooling2D(_Pooling2D):
    """The maximum over each pool_size window (NHWC)."""
    kind = "max"


class AveragePooling2D(_Pooling2D):
    """The mean over each pool_size window (NHWC; SAME windows average their in-bounds elements)."""
    kind = "avg"


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D


class GlobalAveragePooling2D(Layer):
    """The mean over height and width: (N, H, W, C) -> (N, C)."""

    input_ndim = 4

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return tf.reduce_mean(inputs, axis=[1, 2], keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


class Flatten(Layer):
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...)."""

    def call(self, inputs):
        rest = tuple(inputs.shape)[1:]
        if None in rest:
            raise ValueError(f"Flatten needs static non-batch dimensions, got input shape {tuple(inputs.shape)}")
        return tf.reshape(inputs, [-1, int(np.prod(rest, dtype=np.int64))])


class Dropout(Layer):
    """In training, zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate).

    The mask comes from tfn.random's counter-based generator: new on every call, also inside compiled code."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return tf.zeros_like(inputs)
        # (a None in noise_shape, or a None batch dimension of the input: the input's size, read at run time)
        return tf.nn.dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class Activation(Layer):
    """activation(inputs)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": _activation_config(self.activation)}


class ReLU(Layer):
    """max(x, 0) (max_value, negative_slope and threshold as Keras's ReLU)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        x = inputs
        y = tf.where(x >= self.threshold, x, (x - self.threshold) * self.negative_slope)
        if self.max_value is not None:
            y = tf.minimum(y, tf.zeros_like(y) + self.max_value)
        return y

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return activations.softmax(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Embedding(Layer):
    """Rows of an (input_dim, output_dim) table at integer indices."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = "random_uniform" if embeddings_initializer == "uniform" \
            else embeddings_initializer

    def build(self, input_shape):
        self.embeddings = self.add_weight((self.input_dim, self.output_dim), self.embeddings_initializer,
                                          name="embeddings")
        self.built = True

    def call(self, inputs):
        return tf.gather(self.embeddings, tf.cast(inputs, "int32"))

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer}


class BatchNormalization(Layer):
    """Normalises over the batch (training) or by moving statistics (inference), then scales and shifts.

    In training the moving mean and variance (non-trainable variables) move toward the batch's by
    `1 - momentum`, as Keras does."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon, self.center, self.scale = axis, momentum, epsilon, center, scale

    def build(self, input_shape):
        axis = self.axis % len(input_shape)
        if input_shape[axis] is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {input_shape}.")
        self._reduce = [i for i in range(len(input_shape)) if i != axis]
        self._bshape = [1 if i != axis else input_shape[axis] for i in range(len(input_shape))]
        n = (input_shape[axis],)
        self.gamma = self.add_weight(n, "ones", name="gamma") if self.scale else None
        self.beta = self.add_weight(n, "zeros", name="beta") if self.center else None
        self.moving_mean = self.add_weight(n, "zeros", trainable=False, name="moving_mean")
        self.moving_variance = self.add_weight(n, "ones", trainable=False, name="moving_variance")
        self.built = True

    def call(self, inputs, training=False):
        if training and self.trainable:
            mean = tf.reduce_mean(inputs, axis=self._reduce)
            variance = tf.reduce_mean(tf.square(inputs - tf.reshape(mean, self._bshape)), axis=self._reduce)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + tf.stop_gradient(mean) * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + tf.stop_gradient(variance) * (1.0 - m))
        else:
            mean, variance = self.moving_mean, self.moving_variance
        scale = tf.math.rsqrt(tf.reshape(variance, self._bshape) + self.epsilon)
        if self.gamma is not None:
            scale = scale * tf.reshape(self.gamma, self._bshape)
        y = (inputs - tf.reshape(mean, self._bshape)) * scale
        if self.beta is not None:
            y = y + tf.reshape(self.beta, self._bshape)
        return y

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale}
