"""`tfn.keras.metrics`: the accuracy, regression and probabilistic metrics (the mean of a per-example value over
the examples seen), the confusion-matrix ones (confusion_metrics.py) and `get`, which compile uses."""
from tfn.keras import loss_functions as lf
from tfn.keras import losses
from tfn.keras._ops import tf
from tfn.keras.confusion_metrics import (  # noqa: F401  (part of this namespace)
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    Recall,
    TrueNegatives,
    TruePositives,
)
from tfn.keras.f_score_metrics import F1Score, FBetaScore
from tfn.keras.metric import Mean, MeanMetricWrapper, Metric, Sum, _snake, divide_no_nan  # noqa: F401


def _flat_labels(y_true, y_pred):
    if len(y_true.shape) == len(y_pred.shape) and tuple(y_true.shape)[-1] == 1:
        y_true = tf.squeeze(y_true, axis=-1)
    return y_true


def accuracy(y_true, y_pred):
    return tf.cast(tf.equal(y_true, tf.cast(y_pred, y_true.dtype)), "float32")


def sparse_categorical_accuracy(y_true, y_pred):
    labels = tf.cast(_flat_labels(y_true, y_pred), "int64")
    return tf.cast(tf.equal(tf.cast(tf.math.argmax(y_pred, axis=-1), "int64"), labels), "float32")


def categorical_accuracy(y_true, y_pred):
    return tf.cast(tf.equal(tf.math.argmax(y_true, axis=-1), tf.math.argmax(y_pred, axis=-1)), "float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = tf.cast(y_pred > threshold, "float32")
    return tf.reduce_mean(tf.cast(tf.equal(losses._like(y_true, y_pred), y_pred), "float32"), axis=-1)


def _in_top_k(scores, labels, k):
    """Whether each row's label scores among its k highest (ties at the boundary count in, as tf.math.in_top_k)."""
    depth = tuple(scores.shape)[-1]
    target = tf.reduce_sum(scores * tf.one_hot(tf.cast(labels, "int32"), depth, dtype=scores.dtype), axis=-1)
    above = tf.reduce_sum(tf.cast(scores > tf.expand_dims(target, -1), "float32"), axis=-1)
    return tf.cast(above < float(k), "float32")


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = tf.cast(y_pred, "float32")
    return _in_top_k(y_pred, _flat_labels(y_true, y_pred), k)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = tf.cast(y_pred, "float32")
    return _in_top_k(y_pred, tf.math.argmax(y_true, axis=-1), k)


def _cosine(y_true, y_pred, axis=-1):
    return -lf.cosine_similarity(y_true, y_pred, axis)


def _wrapper(name, fn, direction, doc, **defaults):
    """A MeanMetricWrapper class over `fn`, its options (`defaults`) taken by keyword."""

    def __init__(self, name=name, dtype="float32", **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{cls.__name__} got unexpected arguments: {sorted(unknown)}")
        MeanMetricWrapper.__init__(self, fn, name, dtype, **{**defaults, **kwargs})

    cls = type(_camel(name), (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc, "_direction": direction})
    return cls


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly."""

    _direction = "up"

    def __init__(self, name="accuracy", dtype="float32"):
        super().__init__(accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) equals the integer label."""

    _direction = "up"

    def __init__(self, name="sparse_categorical_accuracy", dtype="float32"):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class CategoricalAccuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="categorical_accuracy", dtype="float32"):
        super().__init__(categorical_accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="binary_accuracy", dtype="float32", threshold=0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the k highest predictions."""

    _direction = "up"

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype="float32"):
        super().__init__(top_k_categorical_accuracy, name, dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the k highest predictions."""

    _direction = "up"

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype="float32"):
        super().__init__(sparse_top_k_categorical_accuracy, name, dtype, k=k)


class MeanSquaredError(MeanMetricWrapper):
    _direction = "down"

    def __init__(self, name="mean_squared_error", dtype="float32"):
        super().__init__(losses.mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    _direction = "down"

    def __init__(self, name="mean_absolute_error", dtype="float32"):
        super().__init__(losses.mean_absolute_error, name, dtype)


class RootMeanSquaredError(Mean):
    """sqrt of the mean squared error over every value seen."""

    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype="float32"):
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.cast(y_pred, "float32")
        y_true = lf._like(tf.convert_to_tensor(y_true), y_pred)
        super().update_state(tf.square(y_true - y_pred), sample_weight)

    def result(self):
        return tf.sqrt(divide_no_nan(self.total, self.count))


MeanAbsolutePercentageError = _wrapper("mean_absolute_percentage_error", lf.mean_absolute_percentage_error, "down",
                                       "The mean of 100 |y_true - y_pred| / |y_true|.")
MeanSquaredLogarithmicError = _wrapper("mean_squared_logarithmic_error", lf.mean_squared_logarithmic_error, "down",
                                       "The mean of (log(y_pred + 1) - log(y_true + 1))**2.")
LogCoshError = _wrapper("logcosh", lf.log_cosh, "down", "The mean of log(cosh(y_pred - y_true)).")
CosineSimilarity = _wrapper("cosine_similarity", _cosine, "up",
                            "The mean cosine similarity of y_true and y_pred along `axis`.", axis=-1)
Hinge = _wrapper("hinge", lf.hinge, "down", "The mean hinge loss.")
SquaredHinge = _wrapper("squared_hinge", lf.squared_hinge, "down", "The mean squared hinge loss.")
CategoricalHinge = _wrapper("categorical_hinge", lf.categorical_hinge, "down", "The mean categorical hinge loss.")
KLDivergence = _wrapper("kl_divergence", lf.kl_divergence, "down", "The mean KL divergence of y_pred from y_true.")
Poisson = _wrapper("poisson", lf.poisson, "down", "The mean Poisson loss.")
BinaryCrossentropy = _wrapper("binary_crossentropy", lf.binary_crossentropy, "down",
                              "The mean binary crossentropy.", from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("categorical_crossentropy", lf.categorical_crossentropy, "down",
                                   "The mean categorical crossentropy.", from_logits=False, label_smoothing=0.0,
                                   axis=-1)
SparseCategoricalCrossentropy = _wrapper("sparse_categorical_crossentropy", lf.sparse_categorical_crossentropy, "down",
                                         "The mean sparse categorical crossentropy.", from_logits=False)
LogCoshError.__name__ = LogCoshError.__qualname__ = "LogCoshError"
KLDivergence.__name__ = KLDivergence.__qualname__ = "KLDivergence"

# the metric functions keras.metrics exports (per-example values)
mean_squared_error = mse = MSE = lf.mean_squared_error
mean_absolute_error = mae = MAE = lf.mean_absolute_error
mean_absolute_percentage_error = mape = MAPE = lf.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = MSLE = lf.mean_squared_logarithmic_error
hinge, squared_hinge, categorical_hinge = lf.hinge, lf.squared_hinge, lf.categorical_hinge
kl_divergence, poisson, log_cosh = lf.kl_divergence, lf.poisson, lf.log_cosh
binary_crossentropy, categorical_crossentropy = lf.binary_crossentropy, lf.categorical_crossentropy
sparse_categorical_crossentropy = lf.sparse_categorical_crossentropy

_FUNCTION_METRICS = {  # names compile accepts for the mean of a per-example function
    "mse": MeanSquaredError, "MSE": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy, "categorical_accuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy, "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "KLD": KLDivergence, "poisson": Poisson,
    "log_cosh": LogCoshError, "logcosh": LogCoshError, "cosine_similarity": CosineSimilarity,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
}
_CLASSES = (Accuracy, SparseCategoricalAccuracy, CategoricalAccuracy, BinaryAccuracy, TopKCategoricalAccuracy,
            SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, RootMeanSquaredError,
            MeanAbsolutePercentageError, MeanSquaredLogarithmicError, LogCoshError, CosineSimilarity, Hinge,
            SquaredHinge, CategoricalHinge, KLDivergence, Poisson, BinaryCrossentropy, CategoricalCrossentropy,
            SparseCategoricalCrossentropy, AUC, Precision, Recall, TruePositives, FalsePositives, TrueNegatives,
            FalseNegatives, F1Score, FBetaScore, Mean, Sum)
_BY_NAME = {**{c.__name__: c for c in _CLASSES}, **{_snake(c.__name__): c for c in _CLASSES}, **_FUNCTION_METRICS}
_BY_NAME["auc"] = AUC


def get(identifier, loss=None):
    """A Metric from a name ('accuracy' picks the accuracy that fits `loss`, as Keras does; 'mse', 'AUC',
    'precision', ...: named as given), a Metric, or a function fn(y_true, y_pred) (its mean)."""
    if isinstance(identifier, Metric):
        return identifier
    if identifier in ("accuracy", "acc"):
        kind = {losses.SparseCategoricalCrossentropy: SparseCategoricalAccuracy,
                losses.CategoricalCrossentropy: CategoricalAccuracy,
                losses.CategoricalFocalCrossentropy: CategoricalAccuracy,
                losses.BinaryCrossentropy: BinaryAccuracy,
                losses.BinaryFocalCrossentropy: BinaryAccuracy}.get(type(loss), Accuracy)
        return kind(name=identifier)
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier](name=identifier)
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier) and not isinstance(identifier, str):
        return MeanMetricWrapper(identifier, getattr(identifier, "__name__", None))
    raise ValueError(f"Could not interpret metric identifier: {identifier}")
