"""Keras regularizers (`tfn.keras.regularizers`): penalties of a weight that a layer adds to the model's loss (L1, L2,
both, orthogonality), and the weight constraints (`tfn.keras.constraints`) an optimizer step is followed by."""
from tfn.keras import config
from tfn.keras._ops import tf


class Regularizer:
    """regularizer(weight) -> a scalar penalty."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        config.record_init(cls)

    def __call__(self, x):
        return tf.constant(0.0)

    def get_config(self):
        return config.object_config(self)

    @classmethod
    def from_config(cls, conf):
        return cls(**conf)


def _factor(value, what):
    value = float(value)
    if value < 0 or value != value:
        raise ValueError(f"Value for argument `{what}` must be a non-negative float, got {what}={value}")
    return value


class L1(Regularizer):
    """l1 * sum(|x|)."""

    def __init__(self, l1=0.01):
        self.l1 = _factor(l1, "l1")

    def __call__(self, x):
        return self.l1 * tf.reduce_sum(tf.abs(x))


class L2(Regularizer):
    """l2 * sum(x^2)."""

    def __init__(self, l2=0.01):
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        return self.l2 * tf.reduce_sum(tf.square(x))


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x^2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = _factor(l1, "l1"), _factor(l2, "l2")

    def __call__(self, x):
        penalty = tf.constant(0.0)
        if self.l1:
            penalty += self.l1 * tf.reduce_sum(tf.abs(x))
        if self.l2:
            penalty += self.l2 * tf.reduce_sum(tf.square(x))
        return penalty


class OrthogonalRegularizer(Regularizer):
    """factor * the mean |dot product| of the L2-normalised rows (or columns) over their pairs (Keras 3's)."""

    def __init__(self, factor=0.01, mode="rows"):
        if mode not in ("rows", "columns"):
            raise ValueError(f"Invalid value for argument `mode`. Expected one of {{'rows', 'columns'}}. "
                             f"Received: mode={mode}")
        self.factor, self.mode = _factor(factor, "factor"), mode

    def __call__(self, x):
        if len(x.shape) != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        m = x if self.mode == "rows" else tf.transpose(x)
        m = m / tf.maximum(tf.sqrt(tf.reduce_sum(tf.square(m), axis=1, keepdims=True)), 1e-12)
        product = tf.matmul(m, m, transpose_b=True)
        n = m.shape[0]
        if n < 2:
            return tf.constant(0.0)
        off = product * (1.0 - tf.eye(n))
        return self.factor * 0.5 * tf.reduce_sum(tf.abs(off)) / (n * (n - 1) / 2.0)


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}


def get(identifier):
    """A regularizer from None, a name ('l2'), a config dict, a Regularizer or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
        return _BY_NAME[identifier]()
    if isinstance(identifier, dict) and "class_name" in identifier:
        cls = {c.__name__: c for c in (L1, L2, L1L2, OrthogonalRegularizer)}.get(identifier["class_name"])
        if cls is None:
            raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
        return cls(**identifier.get("config", {}))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")


# --- constraints: applied to a weight after each optimizer step -----------------------------------------------

class Constraint:
    """constraint(weight) -> the weight's new value."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        config.record_init(cls)

    def __call__(self, w):
        return w

    def get_config(self):
        return config.object_config(self)


class MaxNorm(Constraint):
    """Scale each slice along `axis` whose norm passes max_value down to it."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = tf.sqrt(tf.reduce_sum(tf.square(w), axis=self.axis, keepdims=True))
        desired = tf.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (1e-7 + norms))


class NonNeg(Constraint):
    def __call__(self, w):
        return w * tf.cast(w >= 0.0, w.dtype)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (1e-7 + tf.sqrt(tf.reduce_sum(tf.square(w), axis=self.axis, keepdims=True)))


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = tf.sqrt(tf.reduce_sum(tf.square(w), axis=self.axis, keepdims=True))
        desired = self.rate * tf.clip_by_value(norms, float(self.min_value), float(self.max_value)) + \
            (1 - self.rate) * norms
        return w * (desired / (1e-7 + norms))


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_CONSTRAINTS = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


def get_constraint(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        if identifier not in _CONSTRAINTS:
            raise ValueError(f"Could not interpret constraint identifier: {identifier}")
        return _CONSTRAINTS[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
