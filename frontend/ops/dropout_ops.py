"""`tfn.nn.dropout`: a random mask from tfn.random's counter-based generator, new on every call (compiled too),
of the input's shape (sizes known only when the function runs included)."""
import numpy as np

from tfn.core.api import export
from tfn.core.tensor import TensorBase, convert_to_tensor, known
from tfn.ops import fill_ops, math_ops, shape_ops


@export("nn.dropout")
def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Each element zeroed with probability `rate`, the others scaled by 1 / (1 - rate); `noise_shape` (broadcast
    to x's shape; a None in it is x's size there) shares one draw among the elements it broadcasts over. Sizes of x
    known only when the function runs (a None batch dimension) are read then."""
    from tfn import random  # start-up cost: tfn.random loads on first use (frontend/__init__.py _LAZY)

    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a {x.dtype.name} "
                         f"tensor instead.")
    if not isinstance(rate, (int, float, np.floating, np.integer)) or not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate!r}")
    if rate == 0:
        return x
    keep = random.uniform(_noise_shape(x, noise_shape), seed=seed) >= np.float32(rate)
    scaled = x * (1 / (1 - rate))
    return math_ops.where(keep, scaled, fill_ops.zeros_like(scaled))


def _noise_shape(x, noise_shape):
    """The shape of the mask: x's where noise_shape is None or holds a None (its static sizes, the others read when
    the function runs), else noise_shape itself (a list or a 1-D int tensor)."""
    if noise_shape is None:
        noise_shape = [None] * x.ndim
    elif isinstance(known(noise_shape), TensorBase) or None not in list(noise_shape):
        return noise_shape
    if len(noise_shape) != x.ndim:
        raise ValueError(f"noise_shape {list(noise_shape)} must have x's rank {x.ndim} to hold a None")
    runtime = None
    sizes = []
    for i, (d, n) in enumerate(zip(noise_shape, x._shape)):
        if d is None and n is None:
            runtime = shape_ops.shape(x) if runtime is None else runtime
            d = runtime[i]
        sizes.append(n if d is None else d)
    return sizes
