"""Keras's per-example normalisation layers: LayerNormalization, GroupNormalization, UnitNormalization and
RMSNormalization (statistics of each example alone, so training and inference compute the same thing)."""
from tfn.keras._ops import tf
from tfn.keras.layers import Layer


def canonical_axes(axis, rank, what="axis"):
    """`axis` (an int or a list of ints, negatives counted from the end) as a sorted list of distinct axes in
    [0, rank); Keras's errors for an axis out of range or given twice."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -rank <= a < rank:
            raise ValueError(f"Invalid value for `{what}` argument: {axis}. Expected axes in [{-rank}, {rank}) for "
                             f"an input of rank {rank}.")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axes are not allowed. Received: {what}={axis}")
    return sorted(out)


def _check_axis_arg(axis):
    if isinstance(axis, (list, tuple)) and all(isinstance(a, int) for a in axis):
        return list(axis)
    if isinstance(axis, int):
        return axis
    raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis', but received: {axis!r}")


def runtime_dims(x):
    """x's dimensions as a reshape target: the static sizes, and the size read at run time where one is None."""
    static = list(x.shape)
    if None not in static:
        return static
    dynamic = tf.shape(x)
    return tf.stack([dynamic[i] if d is None else tf.constant(d, "int32") for i, d in enumerate(static)])


class LayerNormalization(Layer):
    """Normalises each example over `axis` (mean 0, variance 1, then gamma * x + beta), as Keras:
    (x - mean) * rsqrt(variance + epsilon); gamma and beta have the shape of the normalised axes."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        self.axis = _check_axis_arg(axis)
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = canonical_axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._axes)
        if None in shape:
            raise ValueError(f"The normalised axes {self.axis} of a LayerNormalization input must have defined "
                             f"sizes; received input shape {tuple(input_shape)}")
        self._bshape = [input_shape[a] if a in self._axes else 1 for a in range(rank)]
        self._reshape = self._axes != [rank - 1]
        self.gamma = self.add_weight(shape, self.gamma_initializer, name="gamma") if self.scale else None
        self.beta = self.add_weight(shape, self.beta_initializer, name="beta") if self.center else None
        self.built = True

    def _broadcast(self, v):
        return tf.reshape(v, self._bshape) if self._reshape else v

    def call(self, inputs):
        mean = tf.reduce_mean(inputs, axis=self._axes, keepdims=True)
        variance = tf.reduce_mean(tf.square(inputs - mean), axis=self._axes, keepdims=True)
        inv = tf.math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self._broadcast(self.gamma)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + self._broadcast(self.beta)
        return inputs * inv + shift

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer}


class GroupNormalization(Layer):
    """Splits the channels of `axis` into `groups` groups and normalises each example's group over its channels and
    every other non-batch axis; then per-channel gamma and beta. groups=-1: one group per channel (instance
    normalisation); groups=1: layer normalisation over all non-batch axes."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", **kwargs):
        if not isinstance(groups, int) or isinstance(groups, bool) or (groups <= 0 and groups != -1):
            raise ValueError(f"Received an invalid value for argument `groups`, expected a positive integer (or `-1` "
                             f"for instance normalization). Received: groups={groups}")
        super().__init__(**kwargs)
        if not isinstance(axis, int):
            raise TypeError(f"Expected an int for the argument 'axis', but received: {axis!r}")
        self.groups, self.axis, self.epsilon, self.center, self.scale = groups, axis, float(epsilon), center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer

    def build(self, input_shape):
        rank = len(input_shape)
        self._axis = canonical_axes(self.axis, rank)[0]
        if self._axis == 0:
            raise ValueError("GroupNormalization cannot normalise over the batch axis (axis=0)")
        dim = input_shape[self._axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.gamma = self.add_weight((dim,), self.gamma_initializer, name="gamma") if self.scale else None
        self.beta = self.add_weight((dim,), self.beta_initializer, name="beta") if self.center else None
        a = self._axis
        self._bshape = [1] * (rank + 1)
        self._bshape[a], self._bshape[a + 1] = self.groups, dim // self.groups
        self._reduce = [i for i in range(1, rank + 1) if i != a]
        self.built = True

    def call(self, inputs):
        a = self._axis
        static = list(inputs.shape)
        dims = [-1] + [d if d is not None else tf.shape(inputs)[i] for i, d in enumerate(static) if i > 0]
        dims[a:a + 1] = [self.groups, static[a] // self.groups]
        if any(not isinstance(d, int) for d in dims):
            dims = tf.stack([tf.constant(d, "int32") if isinstance(d, int) else d for d in dims])
        grouped = tf.reshape(inputs, dims)
        mean = tf.reduce_mean(grouped, axis=self._reduce, keepdims=True)
        variance = tf.reduce_mean(tf.square(grouped - mean), axis=self._reduce, keepdims=True)
        inv = tf.math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * tf.reshape(self.gamma, self._bshape)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + tf.reshape(self.beta, self._bshape)
        return tf.reshape(grouped * inv + shift, runtime_dims(inputs))

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer}


class UnitNormalization(Layer):
    """Scales each example to unit L2 norm over `axis`: x * rsqrt(max(sum(x^2), 1e-24)) (Keras's epsilon 1e-12,
    squared, so a zero vector stays zero with a finite gradient)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if not (isinstance(axis, int) or (isinstance(axis, (list, tuple)) and all(isinstance(a, int) for a in axis))):
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. Received: "
                            f"axis={axis}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis

    def build(self, input_shape):
        self._axes = canonical_axes(self.axis, len(input_shape))
        self.built = True

    def call(self, inputs):
        square_sum = tf.reduce_sum(tf.square(inputs), axis=self._axes, keepdims=True)
        return inputs * tf.math.rsqrt(tf.maximum(square_sum, 1e-24))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class RMSNormalization(Layer):
    """x * rsqrt(mean(x^2 over `axis`) + epsilon) * scale (Keras 3's RMSNormalization; `scale` has the shape of
    the normalised axes)."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = _check_axis_arg(axis), float(epsilon)

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = canonical_axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._axes)
        if None in shape:
            raise ValueError(f"The normalised axes {self.axis} of an RMSNormalization input must have defined "
                             f"sizes; received input shape {tuple(input_shape)}")
        self._bshape = [input_shape[a] if a in self._axes else 1 for a in range(rank)]
        self.scale = self.add_weight(shape, "ones", name="scale")
        self.built = True

    def call(self, inputs):
        inv = tf.math.rsqrt(tf.reduce_mean(tf.square(inputs), axis=self._axes, keepdims=True) + self.epsilon)
        return inputs * inv * tf.reshape(self.scale, self._bshape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
