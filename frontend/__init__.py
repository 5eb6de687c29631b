"""tfn: TensorFlow's tf.function rebuilt as a compiler on MLIR. `import tfn as tf` runs the guide's programs."""
from tfn import dtypes, errors, math, nest  # noqa: F401
from tfn.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from tfn.function import ConcreteFunction, PolymorphicFunction, function  # noqa: F401
from tfn.math_ops import (  # noqa: F401
    abs,
    add,
    cast,
    cos,
    equal,
    exp,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tanh,
    truediv,
    where,
)
from tfn.tensor import Tensor, constant, convert_to_tensor, is_tensor  # noqa: F401
from tfn.tensor_shape import TensorShape  # noqa: F401
from tfn.tensor_spec import TensorSpec  # noqa: F401

divide = truediv

__version__ = "0.1.0"
