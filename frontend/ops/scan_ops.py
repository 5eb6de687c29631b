"""`tfn.cumsum` and `tfn.math.cumprod`: running sums and products along an axis, as a Hillis-Steele scan of tfn
ops (ceil(log2 n) steps, each the tensor combined with itself shifted by 1, 2, 4, ... places along the axis, the
vacated places padded with 0 or 1). The gradients are those of the pads, slices and adds/multiplies (a product's
through zeros too). A scanned dim known only when the function runs is scanned by a tfn.while_loop doing the same
steps (tfn cannot differentiate through that loop yet: a tape asking for it raises LookupError)."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import array_ops, control_flow, fill_ops, math_ops, shape_ops, split_ops
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
    if reverse:
        x = split_ops.reverse(x, [axis])
    if n is None:
        x = _scan_dynamic(x, axis, exclusive, combine, fill)
    else:
        k = 1
        while k < n:
            x = combine(x, _shift(x, axis, k, fill))
            k *= 2
        if exclusive and n:
            x = _shift(x, axis, 1, fill)
    if reverse:
        x = split_ops.reverse(x, [axis])
    return x if n is None or n > 1 or exclusive else math_ops.identity(x)


def _shift_dynamic(x, axis, n, k, fill):
    """x moved k places up along `axis` (k, n: int32 tensors, 0 < k), the first k places `fill`."""
    head = split_ops._along(x, axis, slice(0, k))
    padding = fill_ops.zeros_like(head) if fill == 0 else fill_ops.ones_like(head)
    return array_ops.concat([padding, split_ops._along(x, axis, slice(0, math_ops.maximum(n - k, 0)))], axis)


def _scan_dynamic(x, axis, exclusive, combine, fill):
    """The scan of a dim known only when the function runs: the shifts by 1, 2, 4, ... in a tfn.while_loop."""
    n = shape_ops.shape(x)[axis]
    one = convert_to_tensor(1, dtypes.int32)

    def body(k, y):
        return k * 2, combine(y, _shift_dynamic(y, axis, n, k, fill))
    _, x = control_flow.while_loop(lambda k, y: math_ops.less(k, n), body, [one, x])
    return _shift_dynamic(x, axis, n, one, fill) if exclusive else x


@export("cumsum", "math.cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """out[i] = x[0] + ... + x[i] along `axis` (exclusive: up to x[i-1]; reverse: from the other end)."""
    return _scan("Cumsum", x, axis, exclusive, reverse, math_ops.add, 0)


@export("math.cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """out[i] = x[0] * ... * x[i] along `axis` (exclusive: up to x[i-1]; reverse: from the other end)."""
    return _scan("Cumprod", x, axis, exclusive, reverse, math_ops.multiply, 1)
