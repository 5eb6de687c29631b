"""`FBetaScore` and `F1Score`: per class (or pooled, 'micro') precision and recall combined as
(1 + beta**2) p r / (beta**2 p + r). The variables, one value per class, are made by the first update (inside the
first compiled step too: made outside the trace, as the optimizer's slots are)."""
from tfn.keras._ops import tf
from tfn.keras.metric import Metric

EPSILON = 1e-7


class FBetaScore(Metric):
    """average None: one score per class; 'micro': from the pooled counts; 'macro': the mean of the class scores;
    'weighted': their mean weighted by each class's label count. threshold None: each row's highest prediction
    is its positive class; else predictions above it are positive."""

    _direction = "up"

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name, dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta} "
                             f"of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(f"Invalid `threshold` argument value. It should be a Python float. Received: "
                                 f"threshold={threshold} of type '{type(threshold)}'")
            if not 0.0 < threshold <= 1.0:
                raise ValueError(f"Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                                 f"Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={pred_shape} and y_true.shape={true_shape}.")
        if pred_shape[-1] is None:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, output_dim), with output_dim "
                             f"fully defined (not None). Received input shapes: y_pred.shape={pred_shape} and "
                             f"y_true.shape={true_shape}.")
        shape = () if self.average == "micro" else (int(pred_shape[-1]),)
        for name in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            setattr(self, name, self.add_variable(name, shape=shape))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(tf.convert_to_tensor(y_true), "float32")
        y_pred = tf.cast(tf.convert_to_tensor(y_pred), "float32")
        if not self._built:
            self._build(tuple(y_true.shape), tuple(y_pred.shape))
        if self.threshold is None:
            top = tf.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = tf.logical_and(y_pred >= top, tf.abs(y_pred) > 1e-9)
        else:
            y_pred = y_pred > self.threshold
        y_pred = tf.cast(y_pred, "float32")
        w = None
        if sample_weight is not None:
            w = tf.cast(tf.convert_to_tensor(sample_weight), "float32")
            while len(w.shape) < len(y_true.shape):
                w = tf.expand_dims(w, -1)

        def total(values):
            return tf.reduce_sum(values if w is None else values * w, axis=self.axis)

        self.true_positives.assign_add(total(y_pred * y_true))
        self.false_positives.assign_add(total(y_pred * (1.0 - y_true)))
        self.false_negatives.assign_add(total((1.0 - y_pred) * y_true))
        self.intermediate_weights.assign_add(total(y_true))

    def result(self):
        if not self._built:
            return tf.constant(0.0)
        tp = self.true_positives
        precision = tp / (tp + self.false_positives + EPSILON)
        recall = tp / (tp + self.false_negatives + EPSILON)
        b2 = self.beta ** 2
        score = (1.0 + b2) * precision * recall / (b2 * precision + recall + EPSILON)
        if self.average == "weighted":
            weights = self.intermediate_weights / (tf.reduce_sum(self.intermediate_weights) + EPSILON)
            return tf.reduce_sum(score * weights)
        if self.average is not None:
            return tf.reduce_mean(score)
        return score


class F1Score(FBetaScore):
    """FBetaScore with beta = 1: the harmonic mean of precision and recall."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)
