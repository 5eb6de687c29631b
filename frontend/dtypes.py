"""tfn dtypes (`tfn.float32`, ...), the same objects as the dialect's."""
from tfn.dialects.dtypes import (  # noqa: F401
    ALL,
    DType,
    as_dtype,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)

bool = bool_  # noqa: A001  (TF's name)
half = float16
double = float64
