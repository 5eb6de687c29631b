"""`tfn.cumsum` and `tfn.math.cumprod`: running sums and products along an axis, as a Hillis-Steele scan of tfn
ops (ceil(log2 n) steps, each the tensor combined with itself shifted by 1, 2, 4, ... places along the axis, the
vacated places padded with 0 or 1). The scanned dim must be known when the function is traced; the others may be
dynamic. The gradients are those of the pads, slices and adds/multiplies (a product's through zeros too)."""
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import fill_ops, math_ops, split_ops
from tfn.ops.composite import norm_axis, require_dtype, user_error
from tfn.ops.sequence_ops import _static_count


def _shift(x, axis, k, fill):
    """x moved k places up along `axis` (k <= the dim), the first k places `fill`."""
    n = x._shape[axis]
    paddings = [[0, 0]] * x.ndim
    paddings[axis] = [k, 0]
    return fill_ops.pad(split_ops._along(x, axis, slice(0, n - k)), paddings, constant_values=fill)


def _scan(op, x, axis, exclusive, reverse, combine, fill):
    x = convert_to_tensor(x)
    require_dtype(op, x, rules.NUMERIC)
    axis = norm_axis(op, _static_count(axis, "axis", op), max(x.ndim, 1))
    if x.ndim == 0:
        raise user_error(ValueError(f"{op}: the input must have at least one dim, got a scalar"))
    n = x._shape[axis]
    if n is None:
        raise user_error(ValueError(f"{op}: dim {axis} of {x.shape} (the scanned one) must be known when the "
                                    "function is traced"))
    if reverse:
        x = split_ops.reverse(x, [axis])
    k = 1
    while k < n:
        x = combine(x, _shift(x, axis, k, fill))
        k *= 2
    if exclusive and n:
        x = _shift(x, axis, 1, fill)
    if reverse:
        x = split_ops.reverse(x, [axis])
    return x if n > 1 or exclusive else math_ops.identity(x)


@export("cumsum", "math.cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """out[i] = x[0] + ... + x[i] along `axis` (exclusive: up to x[i-1]; reverse: from the other end)."""
    return _scan("Cumsum", x, axis, exclusive, reverse, math_ops.add, 0)


@export("math.cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """out[i] = x[0] * ... * x[i] along `axis` (exclusive: up to x[i-1]; reverse: from the other end)."""
    return _scan("Cumprod", x, axis, exclusive, reverse, math_ops.multiply, 1)
