"""`tfn.tensor_scatter_nd_update`: a copy of a tensor with slices replaced (TF's TensorScatterUpdate)."""
from tfn.core.api import op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops


@op_api(ops.tensor_scatter_update, exports=("tensor_scatter_nd_update",))
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with `tensor[indices[j]] = updates[j]` for each row j of indices' last dim (int32/int64);
    an index out of range raises InvalidArgumentError (when the compiled function runs)."""
    t = convert_to_tensor(tensor)
    return apply("tensor_scatter_update", [t, convert_to_tensor(indices), convert_to_tensor(updates, t.dtype)])
