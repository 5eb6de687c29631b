"""`tfn.boolean_mask`: the elements (or slices) of a tensor where a bool mask is True, in row-major order. The
result's leading size is the number of Trues, known when the function runs: each kept slice's place is an
exclusive cumsum of the mask, and a tensor_scatter_nd_update writes the slices there (the others into one spare
row, dropped). The gradient reaches the kept slices through the scatter's."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, scan_ops, scatter_ops, shape_ops
from tfn.ops.composite import norm_axis, user_error


def _dims(x):
    return [d if d is not None else shape_ops.shape(x)[i] for i, d in enumerate(x._shape)]


@export("boolean_mask")
def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """tensor[mask]: with mask of rank k over dims axis..axis+k-1 of tensor (axis default 0), a tensor whose dims
    axis..axis+k-1 became one, of the size the number of Trues."""
    x, m = convert_to_tensor(tensor), convert_to_tensor(mask)
    if not m.dtype.is_bool:
        raise user_error(TypeError(f"boolean_mask: mask must be a bool tensor, got {m.dtype.name}"))
    k = m.ndim
    if k == 0:
        raise user_error(ValueError("mask cannot be scalar."))
    axis = 0 if axis is None else norm_axis("BooleanMask", int(axis), max(x.ndim, 1))
    if axis + k > x.ndim or any(a is not None and b is not None and a != b
                                for a, b in zip(m._shape, x._shape[axis:axis + k])):
        raise user_error(ValueError(f"boolean_mask: mask of shape {m.shape} does not match dims {axis}.."
                                    f"{axis + k - 1} of the tensor's shape {x.shape}"))
    if axis:  # the masked dims first
        perm = list(range(axis, axis + k)) + list(range(axis)) + list(range(axis + k, x.ndim))
        x = array_ops.transpose(x, perm)
    dims = _dims(x)
    rest = dims[k:]
    data = array_ops.reshape(x, [-1] + rest)
    flags = math_ops.cast(array_ops.reshape(m, [-1]), dtypes.int32)
    count = reduction_ops.reduce_sum(flags)
    place = math_ops.where(math_ops.cast(flags, dtypes.bool), scan_ops.cumsum(flags, exclusive=True), count)
    spare = fill_ops.zeros([count + 1] + rest, x.dtype)
    out = scatter_ops.tensor_scatter_nd_update(spare, array_ops.expand_dims(place, -1), data)[:count]
    if axis:
        back = list(range(1, axis + 1)) + [0] + list(range(axis + 1, out.ndim))
        out = array_ops.transpose(out, back)
    return out
