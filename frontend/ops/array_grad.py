"""Gradients of the shape, fill and indexing ops, written with tfn ops (they run eagerly and traced)."""
import numpy as np

from tfn import dtypes
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops_shape
from tfn.dialects.optable import OPS
from tfn.gradients.registry import gradient
from tfn.ops import array_ops, fill_ops, reduction_ops, shape_ops
from tfn.ops.linalg_ops import matmul
from tfn.ops.math_grad import unbroadcast
from tfn.ops.math_ops import cast
from tfn.ops.scatter_ops import tensor_scatter_nd_update
from tfn.ops.slicing_ops import gather


def reshape_to(t, x, what):
    """`t` reshaped to the shape of `x`; at most one dim of x may be dynamic (it becomes -1)."""
    shape = list(x._shape)
    if shape.count(None) > 1:
        raise NotImplementedError(f"the gradient of {what} needs an input with at most one dynamic dimension, got "
                                  f"shape {x.shape}")
    return array_ops.reshape(t, [-1 if d is None else d for d in shape])


def _static(x, what):
    if None in x._shape:
        raise NotImplementedError(f"the gradient of {what} needs an input of static shape, got {x.shape}")
    return list(x._shape)


@gradient(OPS["transpose"])
def _transpose_grad(op, g):
    perm = op.attrs["perm"]
    return array_ops.transpose(g, [int(i) for i in np.argsort(perm)])


@gradient(OPS["reshape"])
def _reshape_grad(op, g):
    return reshape_to(g, op.inputs[0], "tfn.reshape")


@gradient(OPS["expand_dims"])
def _expand_dims_grad(op, g):
    x = op.inputs[0]
    return array_ops.squeeze(g, [ops_shape.expand_axis(x.ndim, op.attrs["axis"])])


@gradient(OPS["squeeze"])
def _squeeze_grad(op, g):
    for a in ops_shape.squeeze_axes(op.inputs[0]._shape, op.attrs["axis"]):  # ascending: each lands in place
        g = array_ops.expand_dims(g, a)
    return g


@gradient(OPS["broadcast_to"])
def _broadcast_to_grad(op, g):
    return unbroadcast(g, op.inputs[0])


@gradient(OPS["concat"])
def _concat_grad(op, g):
    x, y = op.inputs
    axis = op.attrs["axis"] % x.ndim
    n = x._shape[axis]
    if n is None:
        n = cast(shape_ops.shape(x)[axis], dtypes.int64)
    head = (slice(None),) * axis
    return g[head + (slice(None, n),)], g[head + (slice(n, None),)]


@gradient(OPS["stack"])
def _stack_grad(op, g):
    return array_ops.unstack(g, num=len(op.inputs), axis=op.attrs["axis"])


@gradient(OPS["unstack"])
def _unstack_grad(op, *grads):
    return array_ops.stack(list(grads), axis=op.attrs["axis"])


@gradient(OPS["fill"])
def _fill_grad(op, g):
    return reduction_ops.reduce_sum(g)


# gather ------------------------------------------------------------------------------------------------

def _prod(dims):
    return int(np.prod(dims, dtype=np.int64))


@gradient(OPS["gather"])
def _gather_grad(op, g):
    # params = [Bt.., A.., N, B..], indices = [Bt.., I..], g = [Bt.., A.., I.., B..]:
    # dparams[bt, a, n, b] = sum_i one_hot(indices)[bt, i, n] * g[bt, a, i, b], one batched matmul.
    params, indices = op.inputs
    axis, bd = op.attrs["axis"] % params.ndim, op.attrs["batch_dims"] % max(indices.ndim, 1)
    ps = _static(params, "tfn.gather")
    ids = _static(indices, "tfn.gather")
    bt, a, n, b = _prod(ps[:bd]), _prod(ps[bd:axis]), ps[axis], _prod(ps[axis + 1:])
    i = _prod(ids[bd:])
    g4 = array_ops.transpose(array_ops.reshape(g, [bt, a, i, b]), [0, 2, 1, 3])
    hot = fill_ops.one_hot(cast(indices, dtypes.int32), n, dtype=g.dtype)
    dp = matmul(array_ops.reshape(hot, [bt, i, n]), array_ops.reshape(g4, [bt, i, a * b]), transpose_a=True)
    dp = array_ops.transpose(array_ops.reshape(dp, [bt, n, a, b]), [0, 2, 1, 3])
    return array_ops.reshape(dp, ps), None


# strided_slice -----------------------------------------------------------------------------------------

@gradient(OPS["strided_slice"])
def _strided_slice_grad(op, g):
    # The slice picks distinct elements: scatter g back at their coordinates (computed by the op's own kernel).
    x, attrs = op.inputs[0], op.attrs
    if attrs["dynamic_begin"] or attrs["dynamic_end"]:
        raise NotImplementedError("the gradient of x[...] with slice bounds known only at run time is not "
                                  "supported yet")
    shape = _static(x, "x[...]")
    if not shape:  # a scalar with new axes: the same element
        return array_ops.reshape(g, [])
    grid = np.indices(shape, dtype=np.int64)
    kernel = OPS["strided_slice"].run_kernel
    index = np.stack([kernel([grid[k]], attrs)[0] for k in range(len(shape))], -1)
    return tensor_scatter_nd_update(fill_ops.zeros_like(x), convert_to_tensor(index, dtypes.int64), g)


# tensor_scatter_update ---------------------------------------------------------------------------------

@gradient(OPS["tensor_scatter_update"])
def _scatter_update_grad(op, g):
    tensor, indices, updates = op.inputs
    k = indices._shape[-1]
    shape = _static(tensor, "tfn.tensor_scatter_nd_update")
    strides = [_prod(shape[j + 1:k]) for j in range(k)]
    flat = reduction_ops.reduce_sum(cast(indices, dtypes.int64) * convert_to_tensor(np.asarray(strides, np.int64)),
                                    -1)
    rows = gather(array_ops.reshape(g, [_prod(shape[:k])] + shape[k:]), flat)
    d_updates = reshape_to(rows, updates, "tfn.tensor_scatter_nd_update")
    d_tensor = tensor_scatter_nd_update(g, indices, fill_ops.zeros_like(updates))
    return d_tensor, None, d_updates
