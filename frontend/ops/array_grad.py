"""Gradients of the shape, fill and indexing ops, written with tfn ops (they run eagerly and traced)."""
import numpy as np

from tfn import dtypes
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops, ops_gather, ops_shape
from tfn.gradients.registry import gradient
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.debugging_ops import check_numerics
from tfn.ops.linalg_ops import matmul
from tfn.ops.math_grad import unbroadcast
from tfn.ops.math_ops import cast
from tfn.ops.scatter_ops import tensor_scatter_nd_add, tensor_scatter_nd_update
from tfn.ops.slicing_ops import gather


def reshape_to(t, x, what):
    """`t` reshaped to the shape of `x` (one dynamic dim becomes -1, more are read when the function runs)."""
    shape = list(x._shape)
    if shape.count(None) > 1:
        return array_ops.reshape(t, _sizes(x))
    return array_ops.reshape(t, [-1 if d is None else d for d in shape])


def _sizes(x):
    """x's sizes: Python ints, int32 scalar tensors for the dynamic ones (read when the function runs)."""
    runtime = shape_ops.shape(x) if None in x._shape else None
    return [runtime[i] if d is None else d for i, d in enumerate(x._shape)]


@gradient(ops.transpose)
def _transpose_grad(op, g):
    perm = op.attrs["perm"]
    return array_ops.transpose(g, [int(i) for i in np.argsort(perm)])


@gradient(ops.reshape)
def _reshape_grad(op, g):
    return reshape_to(g, op.inputs[0], "tfn.reshape")


@gradient(ops.expand_dims)
def _expand_dims_grad(op, g):
    x = op.inputs[0]
    return array_ops.squeeze(g, [ops_shape.expand_axis(x.ndim, op.attrs["axis"])])


@gradient(ops.squeeze)
def _squeeze_grad(op, g):
    for a in ops_shape.squeeze_axes(op.inputs[0]._shape, op.attrs["axis"]):  # ascending: each lands in place
        g = array_ops.expand_dims(g, a)
    return g


@gradient(ops.check)
def _check_grad(op, g):
    return (g,) + (None,) * (len(op.inputs) - 1)


@gradient(ops.broadcast_to)
def _broadcast_to_grad(op, g):
    return unbroadcast(g, op.inputs[0])


@gradient(ops.tile)
def _tile_grad(op, g):
    """The sum of g's tiles: g reshaped to [m0, d0, m1, d1, ...] and summed over the multiple axes."""
    x, multiples = op.inputs[0], op.attrs["multiples"]
    shape, axes = [], []
    for i, (d, m) in enumerate(zip(x._shape, multiples)):
        if m != 1:
            axes.append(len(shape))
            shape.append(m)
        shape.append(d if d is not None else shape_ops.shape(x)[i])
    if not axes:
        return g
    return reduction_ops.reduce_sum(array_ops.reshape(g, shape), axis=axes)


@gradient(ops.concat)
def _concat_grad(op, g):
    x, y = op.inputs
    axis = op.attrs["axis"] % x.ndim
    n = x._shape[axis]
    if n is None:
        n = cast(shape_ops.shape(x)[axis], dtypes.int64)
    head = (slice(None),) * axis
    return g[head + (slice(None, n),)], g[head + (slice(n, None),)]


@gradient(ops.stack)
def _stack_grad(op, g):
    return array_ops.unstack(g, num=len(op.inputs), axis=op.attrs["axis"])


@gradient(ops.unstack)
def _unstack_grad(op, *grads):
    return array_ops.stack(list(grads), axis=op.attrs["axis"])


@gradient(ops.fill)
def _fill_grad(op, g):
    return reduction_ops.reduce_sum(g)


# gather ------------------------------------------------------------------------------------------------

def _prod(dims):
    """The product of sizes: an int, or a scalar tensor when one of them is."""
    out = 1
    for d in dims:
        out = out * d
    return out


@gradient(ops.gather)
def _gather_grad(op, g):
    # params = [Bt.., A.., N, B..], indices = [Bt.., I..], g = [Bt.., A.., I.., B..]:
    # dparams[bt, a, n, b] = sum_i one_hot(indices)[bt, i, n] * g[bt, a, i, b], one batched matmul.
    params, indices = op.inputs
    axis, bd = op.attrs["axis"] % params.ndim, op.attrs["batch_dims"]
    bd = bd + indices.ndim if bd < 0 else bd  # batch_dims == indices' rank is valid: one index per batch entry
    # (sizes known only when the function runs are scalar tensors: the reshapes then read them at run time)
    ps = _sizes(params)
    bt, a, n, b = _prod(ps[:bd]), _prod(ps[bd:axis]), ps[axis], _prod(ps[axis + 1:])
    if isinstance(bt, int) and isinstance(a, int) and bt == a == 1 and None in indices._shape:
        i = -1  # indices of run-time shape: i is the one -1 below
    else:
        i = _prod(_sizes(indices)[bd:])
    g4 = array_ops.transpose(array_ops.reshape(g, [bt, a, i, b]), [0, 2, 1, 3])
    hot = fill_ops.one_hot(cast(indices, dtypes.int32), n, dtype=g.dtype)
    dp = matmul(array_ops.reshape(hot, [bt, i, n]), array_ops.reshape(g4, [bt, i, a * b]), transpose_a=True)
    dp = array_ops.transpose(array_ops.reshape(dp, [bt, n, a, b]), [0, 2, 1, 3])
    return array_ops.reshape(dp, ps), None


# strided_slice -----------------------------------------------------------------------------------------

def _picked(attrs, d, n):
    """The positions of input dim d (of size n) that the slice reads, in order; None when it reads all of it."""
    if d in attrs["shrink_axis"]:
        if n is None:
            raise NotImplementedError(f"the gradient of x[...] indexing the dynamic dim {d} is not supported yet")
        return [ops_gather.shrink_index(attrs["begin"][d], d, n)]
    b = None if d in attrs["begin_mask"] else attrs["begin"][d]
    e = None if d in attrs["end_mask"] else attrs["end"][d]
    s = attrs["strides"][d]
    if b is None and e is None and s == 1:
        return None
    if n is None:
        raise NotImplementedError(f"the gradient of x[...] slicing the dynamic dim {d} is not supported yet")
    picks = list(range(*slice(b, e, s).indices(n)))
    return None if picks == list(range(n)) else picks


def _unslice(g, d, n, picks):
    """g (its dim d holding the picked positions) spread to size n along d, zeros elsewhere: one gather."""
    rank = g.ndim
    perm = [d] + [i for i in range(rank) if i != d]
    t = array_ops.transpose(g, perm) if d else g
    t = array_ops.concat([t, fill_ops.zeros_like(t[0:1])], 0)  # row len(picks): the zeros
    where = {p: i for i, p in enumerate(picks)}
    t = gather(t, convert_to_tensor(np.array([where.get(p, len(picks)) for p in range(n)], np.int32)))
    return array_ops.transpose(t, [int(i) for i in np.argsort(perm)]) if d else t


@gradient(ops.strided_slice)
def _strided_slice_grad(op, g):
    # Back to x's rank (new axes dropped, indexed dims restored as 1s), then each sliced dim spread out.
    x, attrs = op.inputs[0], op.attrs
    index = dict(zip(attrs["dynamic_begin"], op.inputs[1:]))  # run-time indices (x[i] in a loop)
    bounds = [None] * (len(op.inputs) - 1)
    if attrs["dynamic_end"] or any(d not in attrs["shrink_axis"] for d in index):
        raise NotImplementedError("the gradient of x[...] with slice bounds known only at run time is not "
                                  "supported yet (indices known only at run time are)")
    if 0 in g._shape:
        return [fill_ops.zeros_like(x)] + bounds
    if attrs["new_axis"]:
        g = array_ops.squeeze(g, sorted(attrs["new_axis"]))
    for d in sorted(attrs["shrink_axis"]):
        g = array_ops.expand_dims(g, d)
    for d, n in enumerate(x._shape):
        if d in index:
            g = _place(g, d, n, index[d])
            continue
        picks = _picked(attrs, d, n)
        if picks is not None:
            g = _unslice(g, d, n, picks)
    return [g] + bounds


def _place(g, d, n, i):
    """g (size 1 along d) at the run-time position i (Python-style, may be negative) of a dim of size n."""
    if n is None:
        raise NotImplementedError(f"the gradient of x[i] indexing the dynamic dim {d} is not supported yet")
    hot = fill_ops.one_hot(math_ops.floormod(i, convert_to_tensor(n, i.dtype)), n, dtype=g.dtype)
    return g * array_ops.reshape(hot, [1] * d + [n] + [1] * (g.ndim - d - 1))


# tensor_scatter_update ---------------------------------------------------------------------------------

def _scattered_rows(op, g):
    """g's slices at the scatter's index rows: the gradient of its updates (of their shape, which the op's type
    rule made indices.shape[:-1] + tensor.shape[k:]). Dynamic dims are read when the function runs."""
    tensor, indices, _ = op.inputs
    k = indices._shape[-1]
    dims = [d if d is not None else shape_ops.shape(tensor, dtypes.int64)[i] for i, d in enumerate(tensor._shape)]
    at = cast(indices, dtypes.int64)
    flat, stride = reduction_ops.reduce_sum(at * 0, -1), 1
    for j in reversed(range(k)):
        flat = flat + at[..., j] * stride
        stride = stride * dims[j]
    return gather(array_ops.reshape(g, [-1] + dims[k:]), flat)


@gradient(ops.tensor_scatter_update)
def _scatter_update_grad(op, g):
    tensor, indices, updates = op.inputs
    d_updates = _scattered_rows(op, g)
    d_tensor = tensor_scatter_nd_update(g, indices, fill_ops.zeros_like(updates))
    return d_tensor, None, d_updates


@gradient(ops.tensor_scatter_add)
def _scatter_add_grad(op, g):
    return g, None, _scattered_rows(op, g)


@gradient(ops.gather_nd)
def _gather_nd_grad(op, g):
    """g added into zeros of params' shape at the rows gathered (a row gathered twice gets both)."""
    params, indices = op.inputs
    return tensor_scatter_nd_add(fill_ops.zeros_like(params), indices, g), None


# check_numerics, ensure_shape --------------------------------------------------------------------------

@gradient(ops.check_numerics)
def _check_numerics_grad(op, g):
    """As TF: the gradient passes through, itself checked for NaN and infinities."""
    return check_numerics(g, "Not a number (NaN) or infinity (Inf) values detected in gradient. " +
                          op.attrs["message"])


@gradient(ops.ensure_shape)
def _ensure_shape_grad(op, g):
    return g


# pad ---------------------------------------------------------------------------------------------------

@gradient(ops.pad)
def _pad_grad(op, g):
    """x's gradient is g without the padding; the padding value's is the sum of g over the padding."""
    x = op.inputs[0]
    flat = op.attrs["paddings"]
    gx = g[tuple(slice(b, -a if a else None) for b, a in zip(flat[0::2], flat[1::2]))] if x.ndim else g
    if not op.needs[1]:
        return gx, None
    return gx, math_ops.subtract(reduction_ops.reduce_sum(g), reduction_ops.reduce_sum(gx))
