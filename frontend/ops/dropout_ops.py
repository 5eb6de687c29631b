"""`tfn.nn.dropout`: a random mask from tfn.random's counter-based generator, new on every call (compiled too)."""
import numpy as np

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import fill_ops, math_ops


@export("nn.dropout")
def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Each element zeroed with probability `rate`, the others scaled by 1 / (1 - rate); `noise_shape` (broadcast
    to x's shape) shares one draw among the elements it broadcasts over."""
    from tfn import random  # start-up cost: tfn.random loads on first use (frontend/__init__.py _LAZY)

    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a {x.dtype.name} "
                         f"tensor instead.")
    if not isinstance(rate, (int, float, np.floating, np.integer)) or not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate!r}")
    if rate == 0:
        return x
    shape = x.shape.as_list() if noise_shape is None else [int(d) for d in noise_shape]
    if None in shape:
        raise ValueError(f"dropout needs a static shape for its random mask, got {x.shape} (pass noise_shape)")
    keep = random.uniform(shape, seed=seed) >= np.float32(rate)
    scaled = x * (1 / (1 - rate))
    return math_ops.where(keep, scaled, fill_ops.zeros_like(scaled))
