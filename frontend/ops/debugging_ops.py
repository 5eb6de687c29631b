"""`tfn.debugging.check_numerics` and `tfn.ensure_shape`: their operand passed through, checked eagerly at once
and, traced, when the compiled function runs (an InvalidArgumentError naming the op and the user's line)."""
from tfn.core.api import op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, Tensor, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops
from tfn.ops import math_ops
from tfn.ops.composite import user_error


@op_api(ops.check_numerics, exports=("debugging.check_numerics",))
def check_numerics(tensor, message, name=None):
    """`tensor`, after checking that it holds no NaN and no infinity (else InvalidArgumentError with `message`);
    float16/32/64."""
    return apply("check_numerics", [convert_to_tensor(tensor)], {"message": str(message)})


def _expected(shape):
    """shape (a TensorShape, a list with None for any size, or None) as a list of ints with -1 for any size, or
    None when it says nothing (unknown rank)."""
    shape = known(shape)
    if shape is None:
        return None
    if isinstance(shape, SymbolicTensor):
        raise user_error(TypeError(f"ensure_shape: `shape` must be known when the function is traced, got {shape!r}"))
    if isinstance(shape, TensorShape):
        if shape.rank is None:
            return None
        shape = shape.as_list()
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    try:
        return [-1 if d is None else int(d) for d in shape]
    except TypeError:
        raise user_error(TypeError(f"ensure_shape: `shape` must be a list of ints or None, got {shape!r}")) from None


@op_api(ops.ensure_shape, exports=("ensure_shape",))
def ensure_shape(x, shape, name=None):
    """`x`, after checking that its shape is compatible with `shape` (None for a dim: any size); the result's
    static shape has the sizes `shape` names. A mismatch raises InvalidArgumentError (traced: when it runs)."""
    x = convert_to_tensor(x)
    want = _expected(shape)
    if want is None:
        return math_ops.identity(x)
    return apply("ensure_shape", [x], {"shape": want})
