"""tensor_scatter_update and tensor_scatter_add (TF's TensorScatterUpdate, TensorScatterAdd): a copy of a tensor
with slices replaced at indices, or with slices added to it (repeated indices add up)."""
import numpy as np

from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.ops_gather_nd import check_index_dtype, check_index_rows, index_rows, nd_index_depth
from tfn.dialects.ops_shape import shape_str
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType


def _compatible(a, b):
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _scatter_infer(types, attrs, tf_op="TensorScatterUpdate"):
    tensor, indices, updates = types
    check_index_dtype(indices, tf_op)
    if updates.dtype is not tensor.dtype:
        raise InvalidArgumentError(f"updates has dtype {updates.dtype.name}, but tensor has dtype "
                                   f"{tensor.dtype.name} [Op:{tf_op}]")
    k = nd_index_depth(indices, tensor.rank, tf_op,
                       "Index innermost dimension length must be <= tensor rank; saw: {k} vs. {rank}")
    want = indices.shape[:-1] + tensor.shape[k:]
    if not _compatible(updates.shape, want):
        raise InvalidArgumentError(f"updates must have shape {shape_str(want)} (indices.shape[:-1] + "
                                   f"tensor.shape[{k}:]), got {shape_str(updates.shape)} [Op:{tf_op}]")
    return TensorType(tensor.shape, tensor.dtype)


def _scatter_kernel(arrays, attrs, add=False):
    """Checked rows first (the first bad one is named), then one vectorised write or np.add.at (repeated rows add
    up; for an update, which of them wins is unspecified, as in TF)."""
    tensor, indices, updates = arrays
    k = indices.shape[-1]
    out = tensor.copy()
    rows = index_rows(indices).astype(np.int64)
    ups = updates.reshape((rows.shape[0],) + tensor.shape[k:])
    check_index_rows(rows, tensor.shape, "TensorScatterAdd" if add else "TensorScatterUpdate")
    if not len(rows):
        return out
    if k == 0:  # each row is the whole tensor
        if add:
            out += ups.sum(0, dtype=out.dtype)
        else:
            out[...] = ups[-1]
        return out
    at = tuple(rows.T)
    if add:
        np.add.at(out, at, ups)
    else:
        out[at] = ups
    return np.asarray(out)


define("tensor_scatter_update", ["tensor", "indices", "updates"], _scatter_infer, _scatter_kernel,
       tf_name="TensorScatterUpdate",
       summary="a copy of tensor with the slices at indices (rows of the last dim) replaced by updates",
       tf_api="tensor_scatter_nd_update")


def _scatter_add_infer(types, attrs):
    out = _scatter_infer(types, attrs, "TensorScatterAdd")
    if not (out.dtype.is_floating or out.dtype.is_integer):
        raise InvalidArgumentError(f"TensorScatterAdd does not support dtype {out.dtype.name} [Op:TensorScatterAdd]")
    return out


define("tensor_scatter_add", ["tensor", "indices", "updates"], _scatter_add_infer,
       lambda arrays, attrs: _scatter_kernel(arrays, attrs, add=True), tf_name="TensorScatterAdd",
       summary="a copy of tensor with updates added at indices (rows of the last dim; repeated rows add up)",
       tf_api="tensor_scatter_nd_add")
