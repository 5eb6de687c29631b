"""gather_nd (TF's GatherNd): the slices of params at the index rows of indices' last dim."""
import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType


def shape_text(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _gather_nd_infer(types, attrs):
    params, indices = types
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"Value for attr 'Tindices' of {indices.dtype.name} is not in the list of "
                                   "allowed values: int32, int64 [Op:GatherNd]")
    if indices.rank < 1 or indices.shape[-1] is None:
        raise InvalidArgumentError(f"indices must be at least rank 1 with a known last dimension, got shape "
                                   f"{shape_text(indices.shape)} [Op:GatherNd]")
    k = indices.shape[-1]
    if k > params.rank:
        raise InvalidArgumentError(f"index innermost dimension length must be <= params rank; saw: {k} vs. "
                                   f"{params.rank} [Op:GatherNd]")
    return TensorType(indices.shape[:-1] + params.shape[k:], params.dtype)


def _gather_nd_kernel(arrays, attrs):
    params, indices = arrays
    k = indices.shape[-1]
    rows = indices.reshape(-1, k)
    for n, row in enumerate(rows):
        if any(i < 0 or i >= d for i, d in zip(row, params.shape)):
            raise InvalidArgumentError(f"indices[{n}] = [{', '.join(str(int(i)) for i in row)}] does not index "
                                       f"into param shape {shape_text(params.shape)} [Op:GatherNd]")
    picked = params[tuple(rows.T)] if k else np.broadcast_to(params, (len(rows),) + params.shape)
    return np.ascontiguousarray(picked.reshape(indices.shape[:-1] + params.shape[k:]))


define("gather_nd", ["params", "indices"], _gather_nd_infer, _gather_nd_kernel, tf_name="GatherNd",
       summary="params[indices[j]] for each row j of indices' last dim (the slices of params they name)",
       tf_api="gather_nd")
