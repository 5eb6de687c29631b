"""tf.nn.sufficient_statistics and normalize_moments (moments in two steps, as TF's), weighted_moments, crelu,
tf.nn.local_response_normalization (tf.nn.lrn), compute_average_loss and scale_regularization_loss; composed of
tfn ops."""
import math

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, fill_ops, math_ops, nn_ops, reduction_ops, shape_ops
from tfn.ops.composite import user_error
from tfn.ops.safe_math_ops import divide_no_nan
from tfn.ops.sequence_ops import add_n


def _axes(x, axes):
    return sorted({int(a) % x.ndim for a in ([axes] if isinstance(axes, int) else axes)})


@export("nn.sufficient_statistics")
def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """(count, sum of x - shift, sum of (x - shift) ** 2, shift) over axes; count as x's dtype."""
    x = convert_to_tensor(x)
    axes = _axes(x, axes)
    dims = [x._shape[a] for a in axes]
    if None in dims:
        count = math_ops.cast(reduction_ops.reduce_prod(array_ops.stack([shape_ops.shape(x)[a] for a in axes])),
                              x.dtype)
    else:
        count = convert_to_tensor(float(math.prod(dims)), x.dtype)
    keep = bool(keepdims)
    if shift is None:
        return count, reduction_ops.reduce_sum(x, axes, keepdims=keep), \
            reduction_ops.reduce_sum(math_ops.square(x), axes, keepdims=keep), None
    shift = convert_to_tensor(shift, x.dtype)
    d = x - shift
    return count, reduction_ops.reduce_sum(d, axes, keepdims=keep), \
        reduction_ops.reduce_sum(math_ops.square(d), axes, keepdims=keep), shift


@export("nn.normalize_moments")
def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient_statistics' sums."""
    mean_ss = convert_to_tensor(mean_ss)
    divisor = math_ops.divide(convert_to_tensor(1.0, mean_ss.dtype), convert_to_tensor(counts, mean_ss.dtype))
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + convert_to_tensor(shift, mean_ss.dtype)
    variance = convert_to_tensor(variance_ss, mean_ss.dtype) * divisor - math_ops.square(shifted_mean)
    return mean, variance


@export("nn.crelu")
def crelu(features, axis=-1, name=None):
    """relu(x) and relu(-x), concatenated along axis."""
    x = convert_to_tensor(features)
    return array_ops.concat([nn_ops.relu(x), nn_ops.relu(math_ops.negative(x))], axis)


@export("nn.local_response_normalization", "nn.lrn")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """x / (bias + alpha * sum of x ** 2 over the channels within depth_radius) ** beta, for a 4-D NHWC x."""
    x = convert_to_tensor(input)
    if x.ndim != 4 or x._shape[3] is None or not x.dtype.is_floating:
        raise user_error(ValueError(f"local_response_normalization needs a 4-D float input with a static depth, got "
                                    f"{x!r}"))
    r, c = int(depth_radius), x._shape[3]
    sq = math_ops.square(x)
    if r > 0:
        edge = fill_ops.zeros_like(sq[..., :1])
        padded = array_ops.concat([edge] * r + [sq] + [edge] * r, 3)
        total = padded[..., 0:c]
        for k in range(1, 2 * r + 1):
            total = total + padded[..., k:k + c]
    else:
        total = sq
    return x / math_ops.pow(bias + alpha * total, convert_to_tensor(beta, x.dtype))


@export("nn.compute_average_loss")
def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses over the global batch size (default: the first dim's size,
    one replica)."""
    loss = convert_to_tensor(per_example_loss)
    if not loss.dtype.is_floating:
        raise user_error(TypeError(f"compute_average_loss: per_example_loss must be float, got {loss.dtype.name}"))
    if sample_weight is not None:
        loss = loss * convert_to_tensor(sample_weight, loss.dtype)
    if global_batch_size is None:
        batch = shape_ops.shape(loss)[0] if loss.ndim else convert_to_tensor(1)
        global_batch_size = math_ops.cast(batch, loss.dtype)
    elif isinstance(global_batch_size, int) and global_batch_size <= 0:
        raise user_error(ValueError(f"global_batch_size must be positive. Got: {global_batch_size}"))
    return math_ops.divide(reduction_ops.reduce_sum(loss), math_ops.cast(convert_to_tensor(global_batch_size),
                                                                         loss.dtype))



@export("nn.weighted_moments")
def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """(mean, variance) of x over axes with each element counted frequency_weights times (broadcast to x);
    0 where the weights sum to 0, as TF's div_no_nan."""
    x = convert_to_tensor(x)
    w = convert_to_tensor(frequency_weights, x.dtype)
    axes = _axes(x, axes)
    total = reduction_ops.reduce_sum(w + fill_ops.zeros_like(x), axes, keepdims=True)
    mean = divide_no_nan(reduction_ops.reduce_sum(w * x, axes, keepdims=True), total)
    variance = divide_no_nan(reduction_ops.reduce_sum(w * math_ops.square(x - mean), axes, keepdims=True), total)
    if not keepdims:
        mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
    return mean, variance


@export("nn.scale_regularization_loss")
def scale_regularization_loss(regularization_loss):
    """The sum of the regularization losses over the number of replicas (1: tfn trains in one replica here)."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = add_n(list(regularization_loss))
    return reduction_ops.reduce_sum(convert_to_tensor(regularization_loss))
