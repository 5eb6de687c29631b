"""tf.linalg.tensor_diag and tensor_diag_part (tf.diag / tf.diag_part of TF 1): the diagonal of a tensor of shape
D + D as one of shape D and back, through a flat [n, n] matrix (tfn.linalg.diag / diag_part)."""
import math

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, matrix_ops, reduction_ops, shape_ops
from tfn.ops.composite import user_error


def _dims(x, dims):
    """x's dims as a list of ints where static, else one shape tensor (for reshape)."""
    if None not in dims:
        return list(dims)
    return shape_ops.shape(x)


@export("linalg.tensor_diag")
def tensor_diag(diagonal, name=None):
    """out[i1..ik, i1..ik] = diagonal[i1..ik], zeros elsewhere: shape D + D for a diagonal of shape D."""
    d = convert_to_tensor(diagonal)
    if d.ndim == 0:
        raise user_error(ValueError("tensor_diag: the diagonal must be at least 1-D, got a scalar"))
    square = matrix_ops.diag(array_ops.reshape(d, [-1]))
    dims = _dims(d, d._shape)
    if isinstance(dims, list):
        return array_ops.reshape(square, dims + dims)
    return array_ops.reshape(square, array_ops.concat([dims, dims], 0))


@export("linalg.tensor_diag_part")
def tensor_diag_part(input, name=None):  # noqa: A002
    """out[i1..ik] = input[i1..ik, i1..ik] for an input of shape D + D."""
    x = convert_to_tensor(input)
    k = x.ndim // 2
    if x.ndim == 0 or x.ndim % 2 or any(a is not None and b is not None and a != b
                                        for a, b in zip(x._shape[:k], x._shape[k:])):
        raise user_error(ValueError(f"tensor_diag_part: input must have an even rank 2k and shape D + D, got "
                                    f"{x.shape}"))
    front = x._shape[:k]
    if None in front:
        dims = shape_ops.shape(x)[:k]
        n = reduction_ops.reduce_prod(dims)
        return array_ops.reshape(matrix_ops.diag_part(array_ops.reshape(x, array_ops.stack([n, n]))), dims)
    n = math.prod(front)
    return array_ops.reshape(matrix_ops.diag_part(array_ops.reshape(x, [n, n])), list(front))
