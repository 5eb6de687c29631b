"""`tfn.nn` losses of logits as compositions of tfn ops, in the forms that cannot overflow exp."""
import numpy as np

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import fill_ops, math_ops, reduction_ops


def _same_shape(z, x):
    """ValueError where labels and logits have different known shapes (TF's message)."""
    if z.shape.rank is None or x.shape.rank is None:
        return
    if z.shape.rank != x.shape.rank or any(a is not None and b is not None and a != b
                                           for a, b in zip(z.shape.as_list(), x.shape.as_list())):
        raise ValueError(f"logits and labels must have the same shape, received ({x.shape} vs {z.shape}).")


def _logits_and_labels(labels, logits):
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    x = convert_to_tensor(logits)
    if not x.dtype.is_floating:
        raise TypeError(f"logits must be a floating-point tensor, got {x.dtype.name}")
    z = convert_to_tensor(labels, dtype=x.dtype)
    _same_shape(z, x)
    return z, x


@export("nn.sigmoid_cross_entropy_with_logits")
def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)) for labels z and logits x, as
    max(x, 0) - x z + log(1 + exp(-|x|)): no exp of a large positive number."""
    z, x = _logits_and_labels(labels, logits)
    return math_ops.maximum(x, 0.0) - x * z + math_ops.log1p(math_ops.exp(-math_ops.abs(x)))


@export("nn.weighted_cross_entropy_with_logits")
def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """sigmoid_cross_entropy_with_logits with the positive term weighted by `pos_weight`:
    (1 - z) x + (1 + (pos_weight - 1) z) (log(1 + exp(-|x|)) + max(-x, 0))."""
    z, x = _logits_and_labels(labels, logits)
    log_weight = (convert_to_tensor(pos_weight, dtype=x.dtype) - 1.0) * z + 1.0
    softplus_minus_x = math_ops.log1p(math_ops.exp(-math_ops.abs(x))) + math_ops.maximum(-x, 0.0)
    return (1.0 - z) * x + log_weight * softplus_minus_x


@export("nn.l2_loss")
def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar."""
    x = convert_to_tensor(t)
    if not x.dtype.is_floating:
        raise TypeError(f"l2_loss needs a floating-point tensor, got {x.dtype.name}")
    return reduction_ops.reduce_sum(x * x) * 0.5


@export("nn.log_poisson_loss")
def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(c) - z c for log-rates c and targets z; with `compute_full_loss` Stirling's approximation of log(z!)
    is added where z > 1."""
    c = convert_to_tensor(log_input)
    z = convert_to_tensor(targets, dtype=c.dtype)
    _same_shape(z, c)
    loss = math_ops.exp(c) - z * c
    if not compute_full_loss:
        return loss
    above = z > 1.0
    safe = math_ops.where(above, z, fill_ops.ones_like(z))  # (log of the other entries unused, kept finite)
    stirling = safe * math_ops.log(safe) - safe + 0.5 * math_ops.log(safe * (2 * np.pi))
    return loss + math_ops.where(above, stirling, fill_ops.zeros_like(z))
