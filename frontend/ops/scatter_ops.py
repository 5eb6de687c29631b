"""`tfn.gather_nd` (TF's GatherNd), `tfn.tensor_scatter_nd_update`, `_add` and `_sub` (TF's
TensorScatterUpdate/Add/Sub: a copy of a tensor with slices replaced, added to or subtracted from), and
`tfn.scatter_nd`, the add into zeros of a given shape."""
from tfn import dtypes
from tfn.core.api import export, op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.ops import fill_ops
from tfn.state.variables import Variable


@op_api(ops.tensor_scatter_update, exports=("tensor_scatter_nd_update",))
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with `tensor[indices[j]] = updates[j]` for each row j of indices' last dim (int32/int64);
    an index out of range raises InvalidArgumentError (when the compiled function runs)."""
    t = convert_to_tensor(tensor)
    return apply("tensor_scatter_update", [t, convert_to_tensor(indices), convert_to_tensor(updates, t.dtype)])


@op_api(ops.tensor_scatter_add, exports=("tensor_scatter_nd_add",))
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates[j]` added at `tensor[indices[j]]` for each row j of indices' last dim
    (repeated indices add up); an index out of range raises InvalidArgumentError (when the function runs)."""
    t = convert_to_tensor(tensor)
    return apply("tensor_scatter_add", [t, convert_to_tensor(indices), convert_to_tensor(updates, t.dtype)])


@export("tensor_scatter_nd_sub")
def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates[j]` subtracted at `tensor[indices[j]]` (repeated indices subtract each)."""
    t = convert_to_tensor(tensor)
    return apply("tensor_scatter_add", [t, convert_to_tensor(indices), -convert_to_tensor(updates, t.dtype)])


@op_api(ops.gather_nd, exports=("gather_nd",))
def gather_nd(params, indices, batch_dims=0, name=None):
    """The slices params[indices[j]] for each row j of indices' last dim (int32/int64): a tensor of shape
    indices.shape[:-1] + params.shape[k:]; a row out of range raises InvalidArgumentError (traced: when it runs)."""
    if batch_dims != 0:
        raise ValueError("gather_nd: batch_dims other than 0 are not supported by tfn")
    return apply("gather_nd", [convert_to_tensor(params), convert_to_tensor(indices)])


@export("scatter_nd")
def scatter_nd(indices, updates, shape, name=None):
    """A tensor of `shape` holding zeros, with updates[j] added at indices[j] (repeated indices add up)."""
    indices, updates = convert_to_tensor(indices), convert_to_tensor(updates)
    if updates.dtype is dtypes.bool or updates.dtype.is_string:
        raise TypeError(f"scatter_nd: updates of dtype {updates.dtype.name} cannot be summed")
    return tensor_scatter_nd_add(fill_ops.zeros(shape, updates.dtype), indices, updates)


# --- Variable's scatter methods (installed on the class: variables.py is below the op dispatch) -------------

def _scatter_into(variable, op, indices, updates):
    with variable._eager_lock():
        new = apply(op, [variable.value(), convert_to_tensor(indices), convert_to_tensor(updates, variable.dtype)])
        return variable.assign(new)


def _scatter_nd_update(self, indices, updates, name=None):
    """Replace the slices at `indices` (rows of int indices) with `updates`; returns the new value."""
    return _scatter_into(self, "tensor_scatter_update", indices, updates)


def _scatter_nd_add(self, indices, updates, name=None):
    """Add `updates` at `indices` (repeated indices add up); returns the new value."""
    return _scatter_into(self, "tensor_scatter_add", indices, updates)


def _scatter_nd_sub(self, indices, updates, name=None):
    """Subtract `updates` at `indices`; returns the new value."""
    return _scatter_into(self, "tensor_scatter_add", indices, -convert_to_tensor(updates, self.dtype))


def _sparse_read(self, indices, name=None):
    """The rows of the value at `indices` (a gather along dim 0)."""
    return apply("gather", [self.value(), convert_to_tensor(indices)], {"axis": 0, "batch_dims": 0})


def _gather_nd(self, indices, name=None):
    return apply("gather_nd", [self.value(), convert_to_tensor(indices)])


for _name, _method in (("scatter_nd_update", _scatter_nd_update), ("scatter_nd_add", _scatter_nd_add),
                       ("scatter_nd_sub", _scatter_nd_sub), ("sparse_read", _sparse_read),
                       ("gather_nd", _gather_nd)):
    setattr(Variable, _name, _method)
