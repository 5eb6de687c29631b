"""tf.norm (tf.linalg.norm): vector norms (euclidean, 1, inf, any p > 0) over one axis or the whole tensor, matrix
norms (frobenius, 1, inf) over two axes, composed of tfn reductions as TF's own norm is (so the gradients are the
reductions', NaN at 0 for the euclidean norm as TF's); the matrix 2-norm is the largest singular value (svd_ops)."""
import math

from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import array_ops, math_ops, reduction_ops, svd_ops
from tfn.ops.composite import require_dtype, user_error

_MATRIX_ORDS = ("euclidean", "fro", 1, 2, math.inf)


def _is_p(ord):  # noqa: A002
    return isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 0


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002
    a = math_ops.abs(x)
    if ord in ("euclidean", 2):
        return math_ops.sqrt(reduction_ops.reduce_sum(x * x, axis, keepdims=keepdims))
    if ord == 1:
        return reduction_ops.reduce_sum(a, axis, keepdims=keepdims)
    if ord == math.inf:
        return reduction_ops.reduce_max(a, axis, keepdims=keepdims)
    return math_ops.pow(reduction_ops.reduce_sum(math_ops.pow(a, float(ord)), axis, keepdims=keepdims), 1.0 / ord)


@export("norm", "linalg.norm")
def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """The `ord` norm of tensor: over all of it (axis None, as one vector), over one axis (a vector norm) or over
    two axes (a matrix norm: 'fro'/'euclidean', 1: the largest column sum of |x|, inf: the largest row sum)."""
    x = convert_to_tensor(tensor)
    require_dtype("norm", x, rules.FLOATS)
    keepdims = bool(keepdims)
    matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if matrix:
        if ord not in _MATRIX_ORDS:
            raise user_error(ValueError(f"'ord' must be a supported matrix norm in {list(_MATRIX_ORDS)}, got {ord}"))
        rows, cols = (int(a) % x.ndim for a in axis)
        if rows == cols:
            raise user_error(ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got "
                                        f"{axis}"))
        if ord == 2:  # the largest singular value, of the two axes moved last
            rest = [d for d in range(x.ndim) if d not in (rows, cols)]
            top = svd_ops.svd(array_ops.transpose(x, rest + [rows, cols]), compute_uv=False)[..., 0]
            if not keepdims:
                return top
            for d in sorted([rows, cols]):
                top = array_ops.expand_dims(top, d)
            return top
        if ord in ("euclidean", "fro"):
            return _vector_norm(x, "euclidean", [rows, cols], keepdims)
        summed, other = (rows, cols) if ord == 1 else (cols, rows)
        sums = reduction_ops.reduce_sum(math_ops.abs(x), summed, keepdims=True)
        out = reduction_ops.reduce_max(sums, other, keepdims=True)
        return out if keepdims else array_ops.squeeze(out, sorted([rows, cols]))
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise user_error(ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got "
                                        f"{axis}"))
        axis = axis[0]
    if not (ord in ("euclidean", 1, 2, math.inf) or _is_p(ord)):
        raise user_error(ValueError(f"'ord' must be a supported vector norm, got {ord}"))
    if axis is None:
        out = _vector_norm(array_ops.reshape(x, [-1]), ord, 0, False)
        return array_ops.reshape(out, [1] * x.ndim) if keepdims else out
    return _vector_norm(x, ord, int(axis), keepdims)
