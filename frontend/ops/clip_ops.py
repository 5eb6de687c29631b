"""`tfn.clip_by_value`, `tfn.clip_by_norm`, `tfn.clip_by_global_norm` and `tfn.linalg.global_norm`, composed of
tfn ops as TF composes them (so their gradients are those of minimum/maximum, sqrt, ...)."""
import numpy as np

from tfn.core.api import export
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects import rules
from tfn.ops import fill_ops, math_ops, reduction_ops
from tfn.ops.composite import require_dtype, user_error


def _like(value, x, what):
    """A clip bound as a tensor of x's dtype (Python numbers convert; a tensor of another dtype is an error)."""
    if isinstance(value, TensorBase):
        if value.dtype is not x.dtype:
            raise user_error(TypeError(f"clip_by_value: {what} has dtype {value.dtype.name}, but t has dtype "
                                       f"{x.dtype.name}"))
        return value
    return convert_to_tensor(value, x.dtype)


@export("clip_by_value")
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """t with values below clip_value_min raised to it and values above clip_value_max lowered to it (the bounds
    broadcast against t, but may not make the result larger than t)."""
    x = convert_to_tensor(t)
    require_dtype("ClipByValue", x, rules.NUMERIC)
    lo, hi = _like(clip_value_min, x, "clip_value_min"), _like(clip_value_max, x, "clip_value_max")
    out = math_ops.maximum(math_ops.minimum(x, hi), lo)
    if len(out._shape) != len(x._shape) or any(a is not None and b is not None and a != b
                                               for a, b in zip(out._shape, x._shape)):
        raise user_error(ValueError(f"clip_by_value: the bounds broadcast t of shape {x.shape} to {out.shape}; "
                                    "they must broadcast to t's shape"))
    return out


def _l2norm(x, axes):
    """sqrt(sum(x*x)) over axes (kept as 1s), with a zero gradient (not NaN) where the sum is 0."""
    l2sum = reduction_ops.reduce_sum(x * x, axes, keepdims=True)
    positive = math_ops.greater(l2sum, 0)
    safe = math_ops.where(positive, l2sum, fill_ops.ones_like(l2sum))
    return math_ops.where(positive, math_ops.sqrt(safe), l2sum)


@export("clip_by_norm")
def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t), clip_norm): t rescaled so that its L2 norm over `axes` (None: all) is at
    most clip_norm (float16/32/64)."""
    x = convert_to_tensor(t)
    require_dtype("ClipByNorm", x, rules.FLOATS)
    c = convert_to_tensor(clip_norm, x.dtype) if not isinstance(clip_norm, TensorBase) else clip_norm
    norm = _l2norm(x, axes)
    return (x * c) / math_ops.maximum(norm, c)


@export("linalg.global_norm")
def global_norm(t_list, name=None):
    """sqrt(sum of the squares of every element of every tensor in t_list); None entries are skipped."""
    ts = [convert_to_tensor(t) for t in _as_list(t_list, "global_norm") if t is not None]
    if not ts:
        raise user_error(ValueError("global_norm: t_list holds no tensor"))
    for t in ts:
        require_dtype("GlobalNorm", t, rules.FLOATS)
        if t.dtype is not ts[0].dtype:
            raise user_error(TypeError(f"global_norm: the tensors of t_list have different dtypes "
                                       f"({ts[0].dtype.name} and {t.dtype.name})"))
    total = None
    for t in ts:
        s = reduction_ops.reduce_sum(t * t)
        total = s if total is None else total + s
    return math_ops.sqrt(total)


def _as_list(t_list, op):
    if isinstance(t_list, (TensorBase, np.ndarray)) or not isinstance(t_list, (list, tuple)):
        raise user_error(TypeError(f"{op}: t_list should be a sequence of tensors, got {type(t_list).__name__}"))
    return list(t_list)


@export("clip_by_global_norm")
def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(the tensors of t_list scaled by clip_norm / max(global_norm, clip_norm), global_norm); None entries stay
    None. An infinite or NaN global norm makes every clipped tensor NaN, as TF."""
    items = _as_list(t_list, "clip_by_global_norm")
    norm = global_norm(items) if use_norm is None else convert_to_tensor(use_norm)
    c = convert_to_tensor(clip_norm, norm.dtype) if not isinstance(clip_norm, TensorBase) else clip_norm
    one = convert_to_tensor(1, norm.dtype)
    scale = c * math_ops.minimum(one / norm, one / c) + (norm - norm)  # NaN when the norm is inf or NaN
    out = [None if t is None else convert_to_tensor(t) * math_ops.cast(scale, convert_to_tensor(t).dtype)
           for t in items]
    return out, norm
