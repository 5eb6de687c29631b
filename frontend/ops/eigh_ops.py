"""tf.linalg.eigh and eigvalsh: the cyclic Jacobi method with the parallel (round-robin) ordering, in float64 for
float16/float32 and rounded once. Each round rotates n/2 disjoint (p, q) pairs at once (A <- J^T A J, V <- V J with
one plane rotation per pair, zeroing every a_pq of the round); n - 1 rounds make a sweep, and sweeps repeat until
the off-diagonal part is below 1e-15 of the matrix (quadratic convergence: a handful of sweeps), at most 40. An odd
n is padded with a zero row and column, which no rotation touches (a_pq = 0 gives the identity). Only the lower
triangle is read, as TF's. Eigenvalues ascend; the gradient is TF's _SelfAdjointEigV2Grad."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import (
    array_ops,
    control_flow,
    debugging_ops,
    fill_ops,
    linalg_ops,
    math_ops,
    matrix_ops,
    reduction_ops,
    slicing_ops,
)
from tfn.ops.composite import user_error, with_gradient
from tfn.ops.gauss_jordan_ops import square_matrix, transpose_last, wide

MAX_SWEEPS = 40
TOLERANCE = 1e-15


def _schedule(n):
    """Per round of a sweep (n even): each index's partner, and +1 for the pair's p, -1 for its q."""
    players = list(range(n))
    partners, signs = [], []
    for _ in range(n - 1):
        partner = np.zeros(n, np.int32)
        sign = np.zeros(n)
        for i in range(n // 2):
            p, q = sorted((players[i], players[n - 1 - i]))
            partner[p], partner[q] = q, p
            sign[p], sign[q] = 1.0, -1.0
        partners.append(partner)
        signs.append(sign)
        players = [players[0], players[-1]] + players[1:-1]
    return np.array(partners), np.array(signs)


def rotate_columns(x, c, gs, partner):
    """x @ J for the round's rotations J (J[j, j] = c_j, J[p, q] = s, J[q, p] = -s; gs = sign * s): column j
    becomes c_j x[:, j] - gs_j x[:, partner(j)], O(size of x) instead of a matrix product."""
    return x * array_ops.expand_dims(c, -2) - slicing_ops.gather(x, partner, axis=x.ndim - 1) * \
        array_ops.expand_dims(gs, -2)


def _symmetric_from_lower(a):
    low = matrix_ops.band_part(a, -1, 0)
    sym = low + transpose_last(low) - a * fill_ops.eye(a._shape[-1], dtype=a.dtype)
    return debugging_ops.ensure_shape(sym, [-1 if d is None else d for d in a._shape])  # (band_part's are dynamic)


def _jacobi64(a):
    """(eigenvalues ascending [..., n], eigenvectors [..., n, n]) of a symmetric float64 a of static n."""
    n = a._shape[-1]
    if n == 1:
        return a[..., 0], fill_ops.ones_like(a)
    size = n + n % 2
    if size != n:  # pad with a zero row and column
        a = array_ops.concat([a, fill_ops.zeros_like(a[..., :1])], -1)
        a = array_ops.concat([a, fill_ops.zeros_like(a[..., :1, :])], -2)
    partners, signs = _schedule(size)
    partners_t = convert_to_tensor(partners)
    signs_t = convert_to_tensor(signs)
    eye = fill_ops.eye(size, dtype=dtypes.float64)
    scale = reduction_ops.reduce_sum(a * a)
    rounds = size - 1

    def off(a):
        return reduction_ops.reduce_sum(math_ops.square(a * (1 - eye)))

    def cond(step, a, v):
        more = math_ops.greater(off(a), TOLERANCE * TOLERANCE * scale)
        return math_ops.logical_and(math_ops.less(step, MAX_SWEEPS * rounds),
                                    math_ops.logical_or(more, math_ops.not_equal(step % rounds, 0)))

    def body(step, a, v):
        r = step % rounds
        partner = slicing_ops.gather(partners_t, r)
        sg = slicing_ops.gather(signs_t, r)
        d = matrix_ops.diag_part(a)
        d_partner = slicing_ops.gather(d, partner, axis=d.ndim - 1)
        apq = reduction_ops.reduce_sum(a * fill_ops.one_hot(partner, size, dtype=dtypes.float64), -1)
        is_p = math_ops.greater(sg, 0)
        app, aqq = math_ops.where(is_p, d, d_partner), math_ops.where(is_p, d_partner, d)
        zero = math_ops.equal(apq, 0)
        tau = (aqq - app) / (2 * math_ops.where(zero, apq * 0 + 1, apq))
        t = math_ops.where(math_ops.less(tau, 0), -1.0 + tau * 0, 1.0 + tau * 0) / (
            math_ops.abs(tau) + math_ops.sqrt(1 + tau * tau))
        t = math_ops.where(zero, t * 0, t)
        c = 1 / math_ops.sqrt(1 + t * t)
        gs = sg * t * c
        a = transpose_last(rotate_columns(transpose_last(rotate_columns(a, c, gs, partner)), c, gs, partner))
        return step + 1, 0.5 * (a + transpose_last(a)), rotate_columns(v, c, gs, partner)

    v0 = fill_ops.zeros_like(a) + eye
    _, a, v = control_flow.while_loop(cond, body, (convert_to_tensor(0), a, v0))
    e = matrix_ops.diag_part(a)
    if size != n:
        e, v = e[..., :n], v[..., :n, :n]
    order = _argsort(e)
    nb = e.ndim - 1
    return (slicing_ops.gather(e, order, axis=nb, batch_dims=nb),
            slicing_ops.gather(v, order, axis=nb + 1, batch_dims=nb))


def _argsort(x):
    from tfn.ops import sort_ops  # start-up cost: (sort_ops imports the reduction families)
    return sort_ops.argsort(x, axis=-1)


def _safe_reciprocal(x, epsilon=1e-20):
    return x / (x * x + epsilon)


def _eigh_grad(a, e, v, ge, gv):
    """TF's _SelfAdjointEigV2Grad: the gradient on a's lower triangle (a symmetric matrix's)."""
    inner = matrix_ops.diag(ge)
    if gv is not None:
        f = matrix_ops.set_diag(_safe_reciprocal(array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)),
                                fill_ops.zeros_like(e))
        inner = inner + f * linalg_ops.matmul(transpose_last(v), gv)
    grad = linalg_ops.matmul(v, linalg_ops.matmul(inner, transpose_last(v)))
    grad = matrix_ops.band_part(grad + transpose_last(grad), -1, 0)
    return matrix_ops.set_diag(grad, 0.5 * matrix_ops.diag_part(grad))


def _static(op, tensor):
    a = square_matrix(op, tensor)
    if a._shape[-1] is None:
        raise user_error(ValueError(f"{op}: tfn needs a static matrix size, got shape {a.shape}"))
    return a


@export("linalg.eigh")
def eigh(tensor, name=None):
    """(e, v): the eigenvalues (ascending) and orthonormal eigenvectors (columns) of each symmetric [..., n, n]
    matrix, read from its lower triangle."""
    a = _static("SelfAdjointEigV2", tensor)

    def forward(a):
        e, v = _jacobi64(_symmetric_from_lower(wide(a)))
        return math_ops.cast(e, a.dtype), math_ops.cast(v, a.dtype)

    def backward(ev, grads):
        return [_eigh_grad(a, ev[0], ev[1], grads[0], grads[1])]
    return with_gradient(forward, backward, a)


@export("linalg.eigvalsh")
def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of each symmetric [..., n, n] matrix, read from its lower triangle."""
    a = _static("SelfAdjointEigV2", tensor)
    vectors = []

    def forward(a):
        e, v = _jacobi64(_symmetric_from_lower(wide(a)))
        vectors.append(math_ops.cast(v, a.dtype))
        return math_ops.cast(e, a.dtype)

    def backward(e, g):
        return [_eigh_grad(a, e, vectors[0], g, None)]
    return with_gradient(forward, backward, a)
