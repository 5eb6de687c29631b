"""Public linear algebra functions: `tfn.matmul` (also `tfn.linalg.matmul` and the `@` operator)."""
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import TensorBase
from tfn.dialects import ops


@op_api(ops.matmul, exports=("matmul", "linalg.matmul"))
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, name=None):
    """a @ b over the last two dims with broadcast batch dims; adjoint is transpose for real dtypes."""
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    a, b = tensors(a, b)
    attrs = {"transpose_a": bool(transpose_a or adjoint_a), "transpose_b": bool(transpose_b or adjoint_b)}
    return apply("matmul", [a, b], attrs)


TensorBase.__matmul__ = lambda self, other: matmul(self, other)
TensorBase.__rmatmul__ = lambda self, other: matmul(other, self)
