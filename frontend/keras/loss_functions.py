"""Keras's per-example loss functions: each maps (y_true, y_pred) to one value per example (reduced over the last
axis), the value `keras.losses.<name>` and `keras.metrics.<name>` give."""
from tfn.keras import activations
from tfn.keras._ops import tf
from tfn.ops.nn_ops import checked_labels

EPSILON = 1e-7  # Keras's backend.epsilon()


def _like(y_true, y_pred):
    """y_true in y_pred's dtype, given a last axis of 1 when it lacks the one y_pred has."""
    y_true = tf.cast(y_true, y_pred.dtype)
    if len(y_true.shape) == len(y_pred.shape) - 1:
        y_true = tf.expand_dims(y_true, -1)
    return y_true


def _pair(y_true, y_pred):
    y_pred = tf.convert_to_tensor(y_pred)
    return _like(tf.convert_to_tensor(y_true), y_pred), y_pred


def _clip(x, low, high):
    return tf.minimum(tf.maximum(x, low), high)


def mean_squared_error(y_true, y_pred):
    """Per example: the mean over the last axis of (y_true - y_pred)**2."""
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))."""
    y_true, y_pred = _pair(y_true, y_pred)
    return 100.0 * tf.reduce_mean(tf.abs((y_true - y_pred) / tf.maximum(tf.abs(y_true), EPSILON)), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))**2)."""
    y_true, y_pred = _pair(y_true, y_pred)
    diff = tf.math.log(tf.maximum(y_pred, EPSILON) + 1.0) - tf.math.log(tf.maximum(y_true, EPSILON) + 1.0)
    return tf.reduce_mean(tf.square(diff), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """Minus the cosine of the angle between y_true and y_pred along `axis` (so that minimising aligns them)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return -tf.reduce_sum(tf.math.l2_normalize(y_true, axis=axis) * tf.math.l2_normalize(y_pred, axis=axis),
                          axis=axis)


def huber(y_true, y_pred, delta=1.0):
    """mean(0.5 e**2 where |e| <= delta, else delta |e| - 0.5 delta**2), e = y_pred - y_true."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = tf.abs(error)
    delta = tf.cast(delta, y_pred.dtype)
    return tf.reduce_mean(tf.where(abs_error <= delta, 0.5 * tf.square(error),
                                   delta * abs_error - 0.5 * tf.square(delta)), axis=-1)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true))), as x + softplus(-2x) - log 2 (finite for large x)."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return tf.reduce_mean(x + tf.math.softplus(-2.0 * x) - 0.6931471805599453, axis=-1)


def _hinge_labels(y_true):
    """Labels all 0 or 1 become -1 or 1 (Keras's convert_binary_labels_to_hinge); others are kept."""
    binary = tf.reduce_all(tf.logical_or(tf.equal(y_true, 0.0), tf.equal(y_true, 1.0)))
    return y_true + tf.cast(binary, y_true.dtype) * (y_true - 1.0)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.square(tf.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) y_pred) - sum(y_true y_pred) + 1, 0) for one-hot y_true."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    pos = tf.reduce_sum(y_true * y_pred, axis=-1)
    neg = tf.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return tf.maximum(neg - pos + 1.0, 0.0)


def kl_divergence(y_true, y_pred):
    """sum(y_true log(y_true / y_pred)), both clipped to [1e-7, 1]."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = _clip(tf.cast(y_true, y_pred.dtype), EPSILON, 1.0)
    y_pred = _clip(y_pred, EPSILON, 1.0)
    return tf.reduce_sum(y_true * tf.math.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true log(y_pred + 1e-7))."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    return tf.reduce_mean(y_pred - y_true * tf.math.log(y_pred + EPSILON), axis=-1)


def _log_probs(y_pred, from_logits, axis=-1):
    if from_logits:
        return activations.log_softmax(y_pred, axis)
    # probabilities: renormalised and clipped away from 0 and 1, as Keras does
    p = y_pred / tf.reduce_sum(y_pred, axis=axis, keepdims=True)
    return tf.math.log(_clip(p, EPSILON, 1.0 - EPSILON))


def _smooth_categorical(y_true, y_pred, label_smoothing, axis):
    if not label_smoothing:
        return y_true
    classes = float(tuple(y_pred.shape)[axis])
    return y_true * (1.0 - label_smoothing) + label_smoothing / classes


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = _smooth_categorical(tf.cast(y_true, y_pred.dtype), y_pred, label_smoothing, axis)
    return -tf.reduce_sum(y_true * _log_probs(y_pred, from_logits, axis), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.convert_to_tensor(y_true)
    if len(y_true.shape) == len(y_pred.shape):
        y_true = tf.squeeze(y_true, axis=-1)
    depth = tuple(y_pred.shape)[-1]
    onehot = tf.one_hot(checked_labels(tf.cast(y_true, "int32"), depth), depth, dtype=y_pred.dtype)
    return -tf.reduce_sum(onehot * _log_probs(y_pred, from_logits), axis=-1)


def _binary_terms(z, y_pred, from_logits):
    """The elementwise binary crossentropy; logits use max(x, 0) - x z + log(1 + exp(-|x|)) (stable)."""
    if from_logits:
        x = y_pred
        return tf.maximum(x, 0.0) - x * z + tf.math.log(1.0 + tf.exp(-tf.abs(x)))
    p = _clip(y_pred, EPSILON, 1.0 - EPSILON)
    return -(z * tf.math.log(p) + (1.0 - z) * tf.math.log(1.0 - p))


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per example: the mean over `axis` of the elementwise crossentropy."""
    z, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        z = z * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return tf.reduce_mean(_binary_terms(z, y_pred, from_logits), axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """The crossentropy scaled by (1 - p_t)**gamma (and alpha or 1 - alpha with class balancing)."""
    z, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        z = z * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = tf.sigmoid(y_pred)
    bce = _binary_terms(z, y_pred, False)
    p_t = z * y_pred + (1.0 - z) * (1.0 - y_pred)
    focal = tf.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (z * alpha + (1.0 - z) * (1.0 - alpha)) * focal
    return tf.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """sum(-alpha (1 - p)**gamma y_true log p) over the classes, p the (clipped) probabilities."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = _smooth_categorical(tf.cast(y_true, y_pred.dtype), y_pred, label_smoothing, axis)
    if from_logits:
        y_pred = activations.softmax(y_pred, axis)
    p = _clip(y_pred / tf.reduce_sum(y_pred, axis=axis, keepdims=True), EPSILON, 1.0 - EPSILON)
    return tf.reduce_sum(alpha * tf.pow(1.0 - p, gamma) * (-y_true * tf.math.log(p)), axis=axis)
