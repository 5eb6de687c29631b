"""tf.linalg.svd: one-sided Jacobi (Hestenes) in float64 for float16/float32, rounded once: the columns of A (of
A^T when it is wide) are orthogonalised by plane rotations, n/2 disjoint column pairs per round in the parallel
ordering of eigh_ops, until every pair is orthogonal to 1e-15 of its norms (at most 40 sweeps); the singular values
are the column norms (relative accuracy, no squaring of A), V the product of the rotations, U the normalised
columns. s descends. full_matrices completes U (or V) with an orthonormal basis of the rest (QR's). The gradient
is TF's _SvdGrad (full_matrices=False, or square matrices). A zero singular value's column of U is 0 (LAPACK gives
some unit vector orthogonal to the others)."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.ops import array_ops, control_flow, fill_ops, linalg_ops, math_ops, matrix_ops, reduction_ops, slicing_ops
from tfn.ops.composite import require_dtype, user_error, with_gradient
from tfn.ops.eigh_ops import MAX_SWEEPS, _argsort, _safe_reciprocal, _schedule, rotate_columns
from tfn.ops.gauss_jordan_ops import transpose_last, wide
from tfn.ops.qr_ops import qr

TOLERANCE = 1e-15


def _one_sided_jacobi64(a):
    """(s descending [..., n], u [..., m, n], v [..., n, n]) of a float64 a [..., m, n] with m >= n (static)."""
    n = a._shape[-1]
    size = n + n % 2
    if size != n:
        a = array_ops.concat([a, fill_ops.zeros_like(a[..., :1])], -1)
    eye = fill_ops.eye(size, dtype=dtypes.float64)
    if size == 1:
        s = math_ops.sqrt(reduction_ops.reduce_sum(a * a, -2))
        return s, a / array_ops.expand_dims(math_ops.where(math_ops.equal(s, 0), s + 1, s), -2), \
            fill_ops.zeros_like(a[..., :1, :]) + eye
    partners, signs = (convert_to_tensor(x) for x in _schedule(size))
    rounds = size - 1

    def rotation(a, r):
        partner, sg = slicing_ops.gather(partners, r), slicing_ops.gather(signs, r)
        norms = reduction_ops.reduce_sum(a * a, -2)
        norms_partner = slicing_ops.gather(norms, partner, axis=norms.ndim - 1)
        gamma = reduction_ops.reduce_sum(a * slicing_ops.gather(a, partner, axis=a.ndim - 1), -2)
        is_p = math_ops.greater(sg, 0)
        alpha, beta = math_ops.where(is_p, norms, norms_partner), math_ops.where(is_p, norms_partner, norms)
        return partner, sg, alpha, beta, gamma

    def unconverged(a, r):
        _, _, alpha, beta, gamma = rotation(a, r)
        return reduction_ops.reduce_any(math_ops.greater(math_ops.abs(gamma),
                                                         TOLERANCE * math_ops.sqrt(alpha * beta)))

    def cond(step, a, v, pending):
        return math_ops.logical_and(math_ops.less(step, MAX_SWEEPS * rounds),
                                    math_ops.logical_or(pending, math_ops.not_equal(step % rounds, 0)))

    def body(step, a, v, pending):
        r = step % rounds
        partner, sg, alpha, beta, gamma = rotation(a, r)
        pending = math_ops.logical_or(math_ops.logical_and(pending, math_ops.not_equal(r, 0)),
                                      reduction_ops.reduce_any(math_ops.greater(
                                          math_ops.abs(gamma), TOLERANCE * math_ops.sqrt(alpha * beta))))
        zero = math_ops.equal(gamma, 0)
        zeta = (beta - alpha) / (2 * math_ops.where(zero, gamma * 0 + 1, gamma))
        t = math_ops.where(math_ops.less(zeta, 0), zeta * 0 - 1, zeta * 0 + 1) / (
            math_ops.abs(zeta) + math_ops.sqrt(1 + zeta * zeta))
        t = math_ops.where(zero, t * 0, t)
        c = 1 / math_ops.sqrt(1 + t * t)
        gs = sg * (t * c)
        return step + 1, rotate_columns(a, c, gs, partner), rotate_columns(v, c, gs, partner), pending

    v0 = fill_ops.zeros_like(a[..., :1, :1]) + eye
    start = (convert_to_tensor(0), a, v0, unconverged(a, convert_to_tensor(0)))
    _, a, v, _ = control_flow.while_loop(cond, body, start)
    s = math_ops.sqrt(reduction_ops.reduce_sum(a * a, -2))
    u = a / array_ops.expand_dims(math_ops.where(math_ops.equal(s, 0), s + 1, s), -2)
    if size != n:
        s, u, v = s[..., :n], u[..., :n], v[..., :n, :n]
    order = _argsort(math_ops.negative(s))
    nb = s.ndim - 1
    return (slicing_ops.gather(s, order, axis=nb, batch_dims=nb), slicing_ops.gather(u, order, axis=nb + 1,
                                                                                     batch_dims=nb),
            slicing_ops.gather(v, order, axis=nb + 1, batch_dims=nb))


def _complete(u):
    """u [..., m, k] with orthonormal columns extended to [..., m, m] by QR's basis of the rest."""
    m, k = u._shape[-2:]
    if m == k:
        return u
    q, _ = qr(u, full_matrices=True)
    return array_ops.concat([u, q[..., :, k:]], -1)


def _svd64(a, full_matrices):
    m, n = a._shape[-2:]
    if m >= n:
        s, u, v = _one_sided_jacobi64(a)
    else:
        s, v, u = _one_sided_jacobi64(transpose_last(a))
    if full_matrices:
        u, v = _complete(u), _complete(v)
    return s, u, v


def _svd_grad(a, s, u, v, gs, gu, gv, full_matrices):
    """TF's _SvdGrad for real matrices."""
    m, n = a._shape[-2:]
    if full_matrices and m != n:
        raise NotImplementedError("svd gradient is not implemented when full_matrices is True and the matrices are "
                                  "not square (tfn)")
    gs_mat = matrix_ops.diag(gs)
    if gu is None:
        return linalg_ops.matmul(u, linalg_ops.matmul(gs_mat, transpose_last(v)))
    transposed = m > n
    if transposed:
        m, n = n, m
        u, v, gu, gv = v, u, gv, gu
    s_mat = matrix_ops.diag(s)
    s2 = s * s
    f = matrix_ops.set_diag(_safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)),
                            fill_ops.zeros_like(s))
    v1, gv1 = v[..., :, :m], gv[..., :, :m]
    f_u = f * linalg_ops.matmul(transpose_last(u), gu)
    f_v = f * linalg_ops.matmul(transpose_last(v1), gv1)
    inner = gs_mat + linalg_ops.matmul(f_u + transpose_last(f_u), s_mat) + linalg_ops.matmul(
        s_mat, f_v + transpose_last(f_v))
    grad = linalg_ops.matmul(u, linalg_ops.matmul(inner, transpose_last(v1)))
    if m != n:
        gv1t = transpose_last(gv1)
        term = gv1t - linalg_ops.matmul(linalg_ops.matmul(gv1t, v1), transpose_last(v1))
        grad = grad + linalg_ops.matmul(linalg_ops.matmul(u, matrix_ops.diag(_safe_reciprocal(s))), term)
    return transpose_last(grad) if transposed else grad


@export("linalg.svd")
def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """s (descending), and with compute_uv u and v, with tensor = u @ diag(s) @ v^T, for each [..., m, n] matrix:
    s [..., k], u [..., m, k], v [..., n, k] for k = min(m, n) (full_matrices: u [..., m, m], v [..., n, n])."""
    a = convert_to_tensor(tensor)
    require_dtype("Svd", a, rules.FLOATS)
    if a.ndim < 2 or None in a._shape[-2:]:
        raise user_error(ValueError(f"Svd: input must have rank >= 2 and static matrix dims, got shape {a.shape}"))
    full_matrices = bool(full_matrices)

    def forward(a):
        return tuple(math_ops.cast(x, a.dtype) for x in _svd64(wide(a), full_matrices))

    def backward(suv, grads):
        return [_svd_grad(a, *suv, *grads, full_matrices)]
    s, u, v = with_gradient(forward, backward, a)
    if compute_uv:
        return s, u, v
    return s
