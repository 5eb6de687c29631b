"""tf.linalg.qr: Householder QR (LAPACK's sign convention: R's diagonal is -sign(x_k) |x|, so Q and R are NumPy's),
a tfn.while_loop over the columns in float64 for float16/float32 (rounded once), on batches [..., m, n]. Its
gradient is TF's _QrGrad (full_matrices=False, or square matrices)."""
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import array_ops, control_flow, fill_ops, linalg_ops, math_ops, matrix_ops, reduction_ops, slicing_ops
from tfn.ops.cholesky_ops import triangular_solve
from tfn.ops.composite import require_dtype, user_error, with_gradient
from tfn.ops.gauss_jordan_ops import positions, transpose_last, wide


def _householder64(a):
    """(Q [..., m, m], R [..., m, n]) of a float64 a with static m, n."""
    m, n = a._shape[-2:]
    rows = positions(m)
    eye = fill_ops.zeros_like(a[..., :1] * transpose_last(a[..., :1])) + fill_ops.eye(m, dtype=a.dtype)

    def body(k, q, r):
        col = slicing_ops.gather(r, k, axis=-1)
        x = math_ops.where(math_ops.greater_equal(rows, k), col, col * 0)
        xk = slicing_ops.gather(col, k, axis=-1)
        norm = math_ops.sqrt(reduction_ops.reduce_sum(x * x, -1))
        alpha = math_ops.negative(math_ops.where(math_ops.less(xk, 0), -norm, norm))
        v = math_ops.where(math_ops.equal(rows, k), array_ops.expand_dims(xk - alpha, -1), x)
        vv = reduction_ops.reduce_sum(v * v, -1)
        beta = array_ops.expand_dims(math_ops.where(math_ops.equal(vv, 0), vv * 0, 2.0 / math_ops.where(
            math_ops.equal(vv, 0), vv * 0 + 1, vv)), -1)
        vtr = linalg_ops.matmul(array_ops.expand_dims(v, -2), r)  # [..., 1, n]
        r = r - array_ops.expand_dims(beta * v, -1) * vtr
        qv = linalg_ops.matmul(q, array_ops.expand_dims(v, -1))  # [..., m, 1]
        q = q - qv * array_ops.expand_dims(beta * v, -2)
        return k + 1, q, r

    steps = min(m - 1, n)  # as LAPACK: a reflection of a last single row is the identity
    _, q, r = control_flow.while_loop(lambda k, *_: math_ops.less(k, steps), body,
                                      (convert_to_tensor(0), eye, a))
    return q, matrix_ops.band_part(r, 0, -1)


def _solve_r(x, r):
    """x @ inverse(r)^T for an upper-triangular r (TF's _TriangularSolve in _QrGrad)."""
    return transpose_last(triangular_solve(r, transpose_last(x), lower=False))


def _deep_grad(q, r, dq, dr):
    qdq = linalg_ops.matmul(transpose_last(q), dq)
    qdq_ = qdq - transpose_last(qdq)
    rdr = linalg_ops.matmul(r, transpose_last(dr))
    rdr_ = rdr - transpose_last(rdr)
    tril = matrix_ops.band_part(qdq_ + rdr_, -1, 0)
    return linalg_ops.matmul(q, dr + _solve_r(tril, r)) + _solve_r(dq - linalg_ops.matmul(q, qdq), r)


@export("linalg.qr")
def qr(input, full_matrices=False, name=None):  # noqa: A002
    """(q, r) with input = q @ r, q's columns orthonormal and r upper triangular: q [..., m, k], r [..., k, n] for
    k = min(m, n) (full_matrices: q [..., m, m], r [..., m, n])."""
    a = convert_to_tensor(input)
    require_dtype("Qr", a, rules.FLOATS)
    if a.ndim < 2 or None in a._shape[-2:]:
        raise user_error(ValueError(f"Qr: input must have rank >= 2 and static matrix dims, got shape {a.shape}"))
    m, n = a._shape[-2:]
    k = min(m, n)

    def forward(a):
        q, r = _householder64(wide(a))
        if not full_matrices:
            q, r = q[..., :, :k], r[..., :k, :]
        return math_ops.cast(q, a.dtype), math_ops.cast(r, a.dtype)

    def backward(qr_, grads):
        q, r = qr_
        dq, dr = grads
        if full_matrices and m > n:
            raise NotImplementedError("QrGrad not implemented when nrows > ncols and full_matrices is true.")
        if m >= n:
            return [_deep_grad(q, r, dq, dr)]
        y, u = a[..., :, m:], r[..., :, :m]
        dv, du = dr[..., :, m:], dr[..., :, :m]
        dx = _deep_grad(q, u, dq + linalg_ops.matmul(y, transpose_last(dv)), du)
        return [array_ops.concat([dx, linalg_ops.matmul(q, dv)], -1)]
    return with_gradient(forward, backward, a)
