"""tf.linalg.pinv and matrix_rank (from svd_ops' singular values), lstsq (TF's fast path: the regularised normal
equations through a Cholesky factor) and normalize (norm_ops' norm, kept as a divisor); composed of the other
factorisations, so their gradients are the factorisations' (TF's)."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import array_ops, fill_ops, linalg_ops, math_ops, norm_ops, reduction_ops, svd_ops
from tfn.ops.cholesky_ops import cholesky, cholesky_solve
from tfn.ops.composite import require_dtype, user_error
from tfn.ops.gauss_jordan_ops import transpose_last


def _matrix(op, a):
    a = convert_to_tensor(a)
    require_dtype(op, a, rules.FLOATS)
    if a.ndim < 2 or None in a._shape[-2:]:
        raise user_error(ValueError(f"{op}: input must have rank >= 2 and static matrix dims, got shape {a.shape}"))
    return a


def _eps(dtype):
    return float(np.finfo(dtype.np).eps)


@export("linalg.pinv")
def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each [..., m, n] matrix: singular values at or below rcond times the
    largest (default 10 max(m, n) eps) count as 0."""
    a = _matrix("pinv", a)
    m, n = a._shape[-2:]
    rcond = 10.0 * max(m, n) * _eps(a.dtype) if rcond is None else rcond
    s, u, v = svd_ops.svd(a)
    cutoff = array_ops.expand_dims(rcond * reduction_ops.reduce_max(s, -1), -1)
    big = math_ops.greater(s, cutoff)
    s_inv = math_ops.where(big, 1.0 / math_ops.where(big, s, fill_ops.ones_like(s)), fill_ops.zeros_like(s))
    return linalg_ops.matmul(v * array_ops.expand_dims(s_inv, -2), transpose_last(u))


@export("linalg.matrix_rank")
def matrix_rank(a, tol=None, validate_args=False, name=None):
    """How many singular values of each matrix are above tol (default: the largest times max(m, n) eps)."""
    a = _matrix("matrix_rank", a)
    s = svd_ops.svd(a, compute_uv=False)
    if tol is None:
        tol = reduction_ops.reduce_max(s, -1, keepdims=True) * (max(a._shape[-2:]) * _eps(a.dtype))
    return reduction_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int32), -1)


@export("linalg.lstsq")
def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """x minimising |matrix @ x - rhs|**2 + l2_regularizer |x|**2 for each [..., m, n] matrix and [..., m, k] rhs
    (m < n: the minimum-norm solution), by the regularised normal equations (TF's fast=True; fast=False gives the
    same solution for full-rank matrices)."""
    a = _matrix("MatrixSolveLs", matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    if b.ndim != a.ndim:
        raise user_error(ValueError(f"MatrixSolveLs: matrix and rhs must have the same rank, got shapes {a.shape} "
                                    f"and {b.shape}"))
    m, n = a._shape[-2:]
    at = transpose_last(a)
    if m >= n:
        gram = linalg_ops.matmul(at, a) + l2_regularizer * fill_ops.eye(n, dtype=a.dtype)
        return cholesky_solve(cholesky(gram), linalg_ops.matmul(at, b))
    gram = linalg_ops.matmul(a, at) + l2_regularizer * fill_ops.eye(m, dtype=a.dtype)
    return linalg_ops.matmul(at, cholesky_solve(cholesky(gram), b))


@export("linalg.normalize")
def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """(tensor / its norm, the norm) with the norm's reduced dims kept."""
    x = convert_to_tensor(tensor)
    norm = norm_ops.norm(x, ord=ord, axis=axis, keepdims=True)
    return x / norm, norm
