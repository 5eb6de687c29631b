"""`tfn.shape`, `tfn.size`, `tfn.rank`: a tensor's shape, element count and rank as tensors (TF semantics)."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export, op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.dialects.ops_shape_of import check_out_type
from tfn.ops.reduction_ops import reduce_prod


def _out_type(out_type):
    return check_out_type(dtypes.as_dtype(out_type))


@op_api(ops.shape, exports=("shape",))
def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape of `input` as a 1-D `out_type` (int32 or int64) tensor; dynamic dims are read at run time."""
    return apply("shape", [convert_to_tensor(input)], {"out_type": _out_type(out_type)})


@export("size")
def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The number of elements of `input` as a scalar `out_type` tensor (a constant when the shape is known)."""
    x, dt = convert_to_tensor(input), _out_type(out_type)
    if None not in x._shape:
        return convert_to_tensor(np.prod(x._shape, dtype=np.int64).astype(dt.np), dt)
    return reduce_prod(shape(x, dt))


@export("rank")
def rank(input, name=None):  # noqa: A002
    """The rank of `input` as a scalar int32 tensor (tfn tensors always have a known rank)."""
    return convert_to_tensor(np.int32(convert_to_tensor(input).ndim), dtypes.int32)
