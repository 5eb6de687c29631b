"""`tfn.nn` bias, moments and normalisation functions as compositions of tfn ops."""

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, math_ops, reduction_ops


@export("nn.bias_add")
def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channels: the last dimension (NHWC, the default) or the second ("NC...")."""
    x = convert_to_tensor(value)
    b = convert_to_tensor(bias, dtype=x.dtype)
    if b.shape.rank is not None and b.shape.rank != 1:
        raise ValueError(f"bias must be 1-D, got shape {b.shape}")
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"value must be at least 2-D, got shape {x.shape}")
    channels_first = data_format is not None and data_format.startswith("NC")
    if data_format is not None and not channels_first and not (data_format.startswith("N")
                                                                and data_format.endswith("C")):
        raise ValueError(f"data_format must be 'N...C' or 'NC...', got {data_format!r}")
    axis = 1 if channels_first else -1
    if x.shape.rank is not None:
        c, n = x.shape.as_list()[axis], b.shape.as_list()[0] if b.shape.rank else None
        if c is not None and n is not None and c != n:
            raise ValueError(f"bias of {n} values for a value of {c} channels (shape {x.shape}, "
                             f"data_format {data_format or 'NHWC'!r})")
    if channels_first:
        b = array_ops.reshape(b, [-1] + [1] * (x.shape.rank - 2))
    return x + b


def _axes(axes):
    return [int(a) for a in ([axes] if isinstance(axes, int) else axes)]


@export("nn.moments")
def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) of `x` over `axes`: variance is the mean squared deviation from the mean."""
    y = convert_to_tensor(x)
    axes = _axes(axes)
    mean = reduction_ops.reduce_mean(y, axis=axes, keepdims=True)
    d = y - mean
    variance = reduction_ops.reduce_mean(d * d, axis=axes, keepdims=True)
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        variance = array_ops.squeeze(variance, axes)
    return mean, variance


@export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset (offset and scale may be None)."""
    x = convert_to_tensor(x)
    inv = math_ops.rsqrt(convert_to_tensor(variance, dtype=x.dtype) + variance_epsilon)
    if scale is not None:
        inv = inv * convert_to_tensor(scale, dtype=x.dtype)
    shift = -convert_to_tensor(mean, dtype=x.dtype) * inv
    if offset is not None:
        shift = shift + convert_to_tensor(offset, dtype=x.dtype)
    return x * inv + shift


@export("nn.l2_normalize", "math.l2_normalize")
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)) (`axis` None: all elements)."""
    x = convert_to_tensor(x)
    axis = dim if axis is None else axis
    squares = reduction_ops.reduce_sum(x * x, axis=axis, keepdims=True)
    return x * math_ops.rsqrt(math_ops.maximum(squares, epsilon))
