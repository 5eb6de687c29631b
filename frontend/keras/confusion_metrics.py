"""Confusion-matrix metrics: TruePositives/FalsePositives/TrueNegatives/FalseNegatives, Precision, Recall and
AUC (ROC or PR). Each holds per-threshold counts in variables; an update counts, over every value of the batch,
the predictions above each threshold (`y_pred > t`) against the labels (nonzero: positive), weighted."""
import numpy as np

from tfn.keras._ops import tf
from tfn.keras.metric import Metric, _weights_like, divide_no_nan

NEG_INF = -1e10
EPSILON = 1e-7


def parse_thresholds(thresholds, default):
    values = [default] if thresholds is None else (
        list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds])
    for t in values:
        if t != NEG_INF and not 0.0 <= float(t) <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {values}")
    return [float(t) for t in values]


def _keep_top_k(y_pred, k):
    """y_pred with everything but each row's k highest values set to -1e10 (never above a threshold)."""
    depth = tuple(y_pred.shape)[-1]
    _, indices = tf.math.top_k(y_pred, k=k)
    in_top = tf.reduce_sum(tf.one_hot(indices, depth, dtype="float32"), axis=-2)
    return tf.where(in_top > 0, y_pred, NEG_INF + tf.zeros_like(y_pred))


def confusion_counts(y_true, y_pred, thresholds, sample_weight=None, top_k=None, class_id=None, multi_label=False):
    """{'tp', 'fp', 'tn', 'fn'}: per threshold (multi_label: per threshold and label) the weighted counts."""
    y_pred = tf.cast(tf.convert_to_tensor(y_pred), "float32")
    y_true = tf.cast(tf.convert_to_tensor(y_true), "float32")
    if len(y_true.shape) == len(y_pred.shape) - 1:
        y_true = tf.expand_dims(y_true, -1)
    weights = tf.ones_like(y_pred) if sample_weight is None else _weights_like(y_pred, sample_weight)
    y_true = y_true + tf.zeros_like(y_pred)
    if top_k is not None:
        y_pred = _keep_top_k(y_pred, top_k)
    if class_id is not None:
        y_true, y_pred, weights = y_true[..., class_id], y_pred[..., class_id], weights[..., class_id]
    if multi_label:  # [T, N, L] summed over the examples
        shape, axis = [1, -1, tuple(y_pred.shape)[-1]], 1
        thr = tf.reshape(tf.constant(np.asarray(thresholds, np.float32)), [-1, 1, 1])
    else:  # [T, every value] summed over the values
        shape, axis = [1, -1], 1
        thr = tf.reshape(tf.constant(np.asarray(thresholds, np.float32)), [-1, 1])
    pred = tf.reshape(y_pred, shape)
    pos_label = tf.cast(tf.not_equal(tf.reshape(y_true, shape), 0.0), "float32")
    w = tf.reshape(weights, shape)
    pos_pred = tf.cast(pred > thr, "float32")
    neg_pred = 1.0 - pos_pred
    return {"tp": tf.reduce_sum(pos_pred * pos_label * w, axis=axis),
            "fp": tf.reduce_sum(pos_pred * (1.0 - pos_label) * w, axis=axis),
            "tn": tf.reduce_sum(neg_pred * (1.0 - pos_label) * w, axis=axis),
            "fn": tf.reduce_sum(neg_pred * pos_label * w, axis=axis)}


class _Counts(Metric):
    """Per-threshold count variables named in `_kinds` ('tp', 'fp', 'tn', 'fn')."""

    _kinds = ()
    _names = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}

    def _make(self, shape):
        for kind in self._kinds:
            setattr(self, self._names[kind], self.add_variable(self._names[kind], shape=shape))

    def _accumulate(self, y_true, y_pred, sample_weight, **options):
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight, **options)
        for kind in self._kinds:
            getattr(self, self._names[kind]).assign_add(counts[kind])

    def _one_or_all(self, value):
        return value[0] if len(self.thresholds) == 1 else value


class _ConfusionCount(_Counts):
    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name, dtype)
        self.init_thresholds = thresholds
        self.thresholds = parse_thresholds(thresholds, 0.5)
        self._make((len(self.thresholds),))
        self.accumulator = getattr(self, self._names[self._kinds[0]])

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._accumulate(y_true, y_pred, sample_weight)

    def result(self):
        return self._one_or_all(tf.identity(self.accumulator))


class TruePositives(_ConfusionCount):
    """The weighted count of positive labels predicted above the threshold (0.5 by default)."""

    _kinds = ("tp",)


class FalsePositives(_ConfusionCount):
    """The weighted count of negative labels predicted above the threshold."""

    _kinds = ("fp",)


class TrueNegatives(_ConfusionCount):
    """The weighted count of negative labels predicted at or below the threshold."""

    _kinds = ("tn",)


class FalseNegatives(_ConfusionCount):
    """The weighted count of positive labels predicted at or below the threshold."""

    _kinds = ("fn",)


class _PrecisionRecall(_Counts):
    _direction = "up"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name, dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = parse_thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        self._make((len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._accumulate(y_true, y_pred, sample_weight, top_k=self.top_k, class_id=self.class_id)


class Precision(_PrecisionRecall):
    """tp / (tp + fp): of the predictions above the threshold, the share with a positive label (top_k: only each
    row's k highest predictions count; class_id: only that class's column)."""

    _kinds = ("tp", "fp")

    def result(self):
        return self._one_or_all(divide_no_nan(self.true_positives, self.true_positives + self.false_positives))


class Recall(_PrecisionRecall):
    """tp / (tp + fn): of the positive labels, the share predicted above the threshold."""

    _kinds = ("tp", "fn")

    def result(self):
        return self._one_or_all(divide_no_nan(self.true_positives, self.true_positives + self.false_negatives))


class AUC(_Counts):
    """The area under the ROC curve (curve='ROC') or the precision-recall curve ('PR'), by a Riemann sum over
    `num_thresholds` thresholds spread over [0, 1] ('interpolation' (PR: Davis & Goadrich's), 'minoring',
    'majoring'). multi_label: one curve per label (the last axis), averaged (weighted by label_weights); without
    num_labels the variables are made by the first update."""

    _direction = "up"
    _kinds = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        super().__init__(name, dtype)
        curve = str(curve).upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["PR", "ROC"]')
        summation_method = str(summation_method).lower()
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        if thresholds is not None:
            inner = sorted(parse_thresholds(thresholds, 0.5))
            self.num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = [0.0 - EPSILON] + inner + [1.0 + EPSILON]
        self.curve, self.summation_method = curve, summation_method
        self.multi_label, self.num_labels, self._from_logits = multi_label, num_labels, from_logits
        self.label_weights = None if label_weights is None else np.asarray(label_weights, np.float32)
        self._built = False
        if multi_label:
            if num_labels:
                self._build((None, num_labels))
        else:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {len(shape)}. "
                                 f"Full shape received for `y_pred`: {shape}")
            self._make((self.num_thresholds, int(shape[1])))
        else:
            self._make((self.num_thresholds,))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.convert_to_tensor(y_pred)
        if not self._built:
            self._build(tuple(y_pred.shape))
        if self._from_logits:
            y_pred = tf.sigmoid(y_pred)
        self._accumulate(y_true, y_pred, sample_weight, multi_label=self.multi_label)

    def _by_label(self, terms):
        if not self.multi_label:
            return tf.reduce_sum(terms)
        per_label = tf.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return tf.reduce_mean(per_label)
        w = tf.constant(self.label_weights)
        return divide_no_nan(tf.reduce_sum(per_label * w), tf.reduce_sum(w))

    def _interpolate_pr_auc(self):
        n = self.num_thresholds
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = divide_no_nan(dtp, tf.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = tf.logical_and(p[:n - 1] > 0, p[1:] > 0)
        ratio = tf.where(both, divide_no_nan(p[:n - 1], tf.maximum(p[1:], 0.0)), tf.ones_like(p[1:]))
        terms = divide_no_nan(slope * (dtp + intercept * tf.math.log(ratio)), tf.maximum(tp[1:] + fn[1:], 0.0))
        return self._by_label(terms)

    def result(self):
        if not self._built:
            return tf.constant(0.0)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        n = self.num_thresholds
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        recall = divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = tf.minimum(y[:n - 1], y[1:])
        else:
            heights = tf.maximum(y[:n - 1], y[1:])
        return self._by_label((x[:n - 1] - x[1:]) * heights)
