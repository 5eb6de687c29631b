"""gather_nd (TF's GatherNd): the slices of params at the index rows of indices' last dim."""
import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.ops_shape import shape_str
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType


def check_index_dtype(indices, tf_op):
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"Value for attr 'Tindices' of {indices.dtype.name} is not in the list of "
                                   f"allowed values: int32, int64 [Op:{tf_op}]")


def nd_index_depth(indices, rank, tf_op, too_deep):
    """The depth k (the last dim) of nd indices into a tensor of `rank`, checked as TF does (gather_nd and the
    scatters): int32/int64 indices of rank >= 1 with a known last dim, and k <= rank (else `too_deep`, TF's words
    for that op, with {k} and {rank})."""
    check_index_dtype(indices, tf_op)
    if indices.rank < 1 or indices.shape[-1] is None:
        raise InvalidArgumentError(f"indices must be at least rank 1 with a known last dimension, got shape "
                                   f"{shape_str(indices.shape)} [Op:{tf_op}]")
    k = indices.shape[-1]
    if k > rank:
        raise InvalidArgumentError(too_deep.format(k=k, rank=rank) + f" [Op:{tf_op}]")
    return k


def index_rows(indices):
    """indices as [n, k] rows of its last dim (reshape(-1, k) cannot infer n when k is 0)."""
    return indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), indices.shape[-1])


def check_index_rows(rows, shape, tf_op, what="shape"):
    """InvalidArgumentError naming the first of `rows` (index rows, [n, k]) with an index outside `shape`."""
    rows = rows.astype(np.int64)
    bad = np.zeros(len(rows), bool)
    for j in range(rows.shape[1]):
        bad |= (rows[:, j] < 0) | (rows[:, j] >= shape[j])
    if bad.any():
        n = int(np.argmax(bad))
        raise InvalidArgumentError(f"indices[{n}] = [{', '.join(str(int(i)) for i in rows[n])}] does not index "
                                   f"into {what} {shape_str(shape)} [Op:{tf_op}]")


def _gather_nd_infer(types, attrs):
    params, indices = types
    k = nd_index_depth(indices, params.rank, "GatherNd",
                       "index innermost dimension length must be <= params rank; saw: {k} vs. {rank}")
    return TensorType(indices.shape[:-1] + params.shape[k:], params.dtype)


def _gather_nd_kernel(arrays, attrs):
    params, indices = arrays
    k = indices.shape[-1]
    rows = index_rows(indices)
    check_index_rows(rows, params.shape, "GatherNd", "param shape")
    picked = params[tuple(rows.T)] if k else np.broadcast_to(params, (len(rows),) + params.shape)
    return np.ascontiguousarray(picked.reshape(indices.shape[:-1] + params.shape[k:]))


define("gather_nd", ["params", "indices"], _gather_nd_infer, _gather_nd_kernel, tf_name="GatherNd",
       summary="params[indices[j]] for each row j of indices' last dim (the slices of params they name)",
       tf_api="gather_nd")
