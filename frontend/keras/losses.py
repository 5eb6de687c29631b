"""Keras losses: a Loss maps (y_true, y_pred, sample_weight) to the per-example losses (loss_functions.py)
weighted and reduced as `reduction` says ('sum_over_batch_size', Keras's default: the sum over the number of
values; 'sum'; 'mean_with_sample_weight': the sum over the weights' sum; None or 'none': unreduced)."""
import re

from tfn.keras._ops import tf
from tfn.keras.loss_functions import (
    _like,  # noqa: F401  (metrics.py's too)
    binary_crossentropy,
    binary_focal_crossentropy,
    categorical_crossentropy,
    categorical_focal_crossentropy,
    categorical_hinge,
    cosine_similarity,
    hinge,
    huber,
    kl_divergence,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)

REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")

FUNCTIONS = {f.__name__: f for f in (
    binary_crossentropy, binary_focal_crossentropy, categorical_crossentropy, categorical_focal_crossentropy,
    categorical_hinge, cosine_similarity, hinge, huber, kl_divergence, log_cosh, mean_absolute_error,
    mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, poisson,
    sparse_categorical_crossentropy, squared_hinge)}

# the short names tf.keras has always accepted
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


def standardize_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of {set(REDUCTIONS)}. "
                         f"Received: reduction={reduction}")
    return reduction


def _same_rank(values, weights):
    """Keras's squeeze_or_expand_to_same_rank for per-example values and sample weights."""
    rv, rw = len(values.shape), len(weights.shape)
    if rw == rv + 1 and tuple(weights.shape)[-1] == 1:
        weights = tf.squeeze(weights, axis=-1)
    elif rv == rw + 1 and tuple(values.shape)[-1] == 1:
        values = tf.squeeze(values, axis=-1)
    return values, weights


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    reduction = standardize_reduction(reduction)
    values = tf.convert_to_tensor(values)
    if sample_weight is not None:
        sample_weight = tf.cast(sample_weight, values.dtype)
        values, sample_weight = _same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction in (None, "none") or len(values.shape) == 0:
        return values
    total = tf.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = tf.reduce_sum(sample_weight + tf.zeros_like(values))
    else:
        divisor = tf.cast(tf.size(values), values.dtype)
    return tf.where(divisor > 0, total / tf.where(divisor > 0, divisor, tf.ones_like(divisor)), tf.zeros_like(total))


class Loss:
    """loss(y_true, y_pred, sample_weight=None): call(y_true, y_pred)'s per-example losses, weighted, reduced."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", type(self).__name__).lower()
        self.reduction = standardize_reduction(reduction)
        self.dtype = dtype or "float32"

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.convert_to_tensor(y_pred)
        per_example = self.call(tf.convert_to_tensor(y_true), y_pred)
        return reduce_weighted_values(per_example, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} does not define call(y_true, y_pred)")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


class LossFunctionWrapper(Loss):
    """A Loss from a per-example function fn(y_true, y_pred, **kwargs)."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", None), reduction, dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


class _Plain(LossFunctionWrapper):
    """A loss whose function takes no options: subclasses name `_function` and `_default_name`."""

    def __init__(self, reduction="sum_over_batch_size", name=None, dtype=None):
        super().__init__(type(self)._function, reduction, name or self._default_name, dtype)


class MeanSquaredError(_Plain):
    """mean((y_true - y_pred)**2) per example."""

    _function, _default_name = staticmethod(mean_squared_error), "mean_squared_error"


class MeanAbsoluteError(_Plain):
    """mean(|y_true - y_pred|) per example."""

    _function, _default_name = staticmethod(mean_absolute_error), "mean_absolute_error"


class MeanAbsolutePercentageError(_Plain):
    """100 mean(|y_true - y_pred| / max(|y_true|, eps)) per example."""

    _function, _default_name = staticmethod(mean_absolute_percentage_error), "mean_absolute_percentage_error"


class MeanSquaredLogarithmicError(_Plain):
    """mean((log(y_pred + 1) - log(y_true + 1))**2) per example."""

    _function, _default_name = staticmethod(mean_squared_logarithmic_error), "mean_squared_logarithmic_error"


class LogCosh(_Plain):
    """mean(log(cosh(y_pred - y_true))) per example."""

    _function, _default_name = staticmethod(log_cosh), "log_cosh"


class Hinge(_Plain):
    """mean(max(1 - y_true y_pred, 0)); labels all 0/1 are taken as -1/1."""

    _function, _default_name = staticmethod(hinge), "hinge"


class SquaredHinge(_Plain):
    """mean(max(1 - y_true y_pred, 0)**2); labels all 0/1 are taken as -1/1."""

    _function, _default_name = staticmethod(squared_hinge), "squared_hinge"


class CategoricalHinge(_Plain):
    """max(max((1 - y_true) y_pred) - sum(y_true y_pred) + 1, 0)."""

    _function, _default_name = staticmethod(categorical_hinge), "categorical_hinge"


class KLDivergence(_Plain):
    """sum(y_true log(y_true / y_pred)) per example."""

    _function, _default_name = staticmethod(kl_divergence), "kl_divergence"


class Poisson(_Plain):
    """mean(y_pred - y_true log(y_pred)) per example."""

    _function, _default_name = staticmethod(poisson), "poisson"


class Huber(LossFunctionWrapper):
    """Quadratic for errors up to `delta`, linear beyond."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, reduction, name, dtype, delta=delta)


class CosineSimilarity(LossFunctionWrapper):
    """Minus the cosine similarity along `axis`."""

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None):
        super().__init__(cosine_similarity, reduction, name, dtype, axis=axis)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, reduction, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """The binary crossentropy down-weighting easy examples by (1 - p_t)**gamma."""

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        super().__init__(binary_focal_crossentropy, reduction, name, dtype, apply_class_balancing=apply_class_balancing,
                         alpha=alpha, gamma=gamma, from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, reduction, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        super().__init__(categorical_focal_crossentropy, reduction, name, dtype, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name="sparse_categorical_crossentropy",
                 dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction, name, dtype, from_logits=from_logits)
        self.from_logits = from_logits


_BY_NAME = {
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "MSE": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "MAPE": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "MSLE": MeanSquaredLogarithmicError,
    "huber": Huber, "huber_loss": Huber, "log_cosh": LogCosh, "logcosh": LogCosh,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "KLD": KLDivergence,
    "kullback_leibler_divergence": KLDivergence, "poisson": Poisson, "cosine_similarity": CosineSimilarity,
    "binary_crossentropy": BinaryCrossentropy, "bce": BinaryCrossentropy, "BCE": BinaryCrossentropy,
    "binary_focal_crossentropy": BinaryFocalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
}
for _cls in set(_BY_NAME.values()):  # class names work too: compile(loss="MeanSquaredError")
    _BY_NAME[_cls.__name__] = _cls


def get(identifier):
    """A Loss from a name ('mse', 'huber', 'sparse_categorical_crossentropy', ...), a Loss, or a callable."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")
