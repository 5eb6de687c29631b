"""The shape op: a tensor's dimensions as a 1-D int32/int64 tensor (dynamic dims read when the code runs)."""
import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType

SHAPE_DTYPES = (dtypes.int32, dtypes.int64)


def check_out_type(out_type):
    """out_type must be int32 or int64, as TF's Shape/Size attr allows."""
    if out_type not in SHAPE_DTYPES:
        raise TypeError(f"Value for attr 'out_type' of {out_type.name} is not in the list of allowed values: "
                        "int32, int64")
    return out_type


def _shape_infer(types, attrs):
    return TensorType((types[0].rank,), check_out_type(attrs["out_type"]))


def _shape_kernel(arrays, attrs):
    return np.array(arrays[0].shape, dtype=attrs["out_type"].np).reshape(-1)


define("shape", ["x"], _shape_infer, _shape_kernel, {"out_type": "dtype"},
       summary="the dimensions of x as a 1-D int32/int64 tensor", differentiable=False, tf_api="shape")
