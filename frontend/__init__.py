"""tfn: TensorFlow's tf.function rebuilt as a compiler on MLIR. `import tfn as tf` runs the guide's programs."""
from tfn import (  # noqa: F401
    autograph,
    config,
    dtypes,
    errors,
    linalg,
    math,
    nest,
    nn,
    types,
)
from tfn.config import executing_eagerly  # noqa: F401
from tfn.core.tensor import Tensor, constant, convert_to_tensor, is_tensor  # noqa: F401
from tfn.core.tensor_shape import TensorShape  # noqa: F401
from tfn.core.tensor_spec import TensorSpec  # noqa: F401
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
from tfn.ops.array_ops import (  # noqa: F401
    broadcast_to,
    concat,
    expand_dims,
    reshape,
    squeeze,
    stack,
    transpose,
    unstack,
)
from tfn.ops.control_flow import cond, while_loop  # noqa: F401
from tfn.ops.fill_ops import fill, one_hot, ones, ones_like, range, zeros, zeros_like  # noqa: F401
from tfn.ops.linalg_ops import matmul  # noqa: F401
from tfn.ops.math_ops import (  # noqa: F401
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
from tfn.ops.print_ops import print  # noqa: F401,A004
from tfn.ops.py_function import py_function  # noqa: F401
from tfn.ops.reduction_ops import (  # noqa: F401
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from tfn.ops.scatter_ops import tensor_scatter_nd_update  # noqa: F401
from tfn.ops.shape_ops import rank, shape, size  # noqa: F401
from tfn.ops.slicing_ops import gather  # noqa: F401
from tfn.ops.tensor_array import TensorArray  # noqa: F401
from tfn.state.module import Module  # noqa: F401
from tfn.state.variables import Variable, init_scope  # noqa: F401
from tfn.tracing.function import ConcreteFunction, PolymorphicFunction, function  # noqa: F401

divide = truediv

__version__ = "0.1.0"

# Gradients: the tape, and the gradient rules registered beside the ops' public functions.
from tfn import autodiff  # noqa: E402,F401
from tfn.gradients.custom import custom_gradient  # noqa: E402,F401
from tfn.gradients.tape import GradientTape, UnconnectedGradients, stop_gradient  # noqa: E402,F401
from tfn.ops import array_grad, math_grad, nn_grad  # noqa: E402,F401
