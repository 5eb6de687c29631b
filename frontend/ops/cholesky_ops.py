"""tf.linalg.cholesky, triangular_solve and cholesky_solve: a tfn.while_loop over the
columns (Cholesky-Banachiewicz: one column of L from the ones before it) or rows (substitution), in float64 for
float16/float32 and rounded once, over batches [..., n, n]. Gradients are TF's (_CholeskyGrad,
_MatrixTriangularSolveGrad); cholesky_solve is two triangular solves, differentiated through them. A matrix that is
not positive definite raises InvalidArgumentError as TF's Cholesky."""
from tfn.core.api import export
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.ops import (
    array_ops,
    control_flow,
    fill_ops,
    linalg_ops,
    math_ops,
    matrix_ops,
    reduction_ops,
    shape_ops,
    slicing_ops,
)
from tfn.ops.composite import user_error, with_gradient
from tfn.ops.gauss_jordan_ops import positions, square_matrix, transpose_last, wide


def _size(a):
    n = a._shape[-1]
    return n if n is not None else shape_ops.shape(a)[-1]


def _cholesky64(a):
    n = _size(a)
    rows = positions(n)

    def body(j, low, ok):
        row_j = slicing_ops.gather(low, j, axis=-2)  # L[j, :j] (the rest is still 0)
        diag = slicing_ops.gather(slicing_ops.gather(a, j, axis=-1), j, axis=-1) - reduction_ops.reduce_sum(
            row_j * row_j, -1)
        ok = math_ops.logical_and(ok, math_ops.greater(diag, 0))
        root = math_ops.sqrt(math_ops.maximum(diag, 1e-300))
        dots = linalg_ops.matmul(low, array_ops.expand_dims(row_j, -1))[..., 0]
        col = (slicing_ops.gather(a, j, axis=-1) - dots) / array_ops.expand_dims(root, -1)
        col = math_ops.where(math_ops.greater(rows, j), col, col * 0)
        col = math_ops.where(math_ops.equal(rows, j), array_ops.expand_dims(root, -1) + col * 0, col)
        low = math_ops.where(math_ops.equal(rows, j), array_ops.expand_dims(col, -1), low)
        return j + 1, low, ok

    batch = a[..., 0, 0]
    start = (convert_to_tensor(0), fill_ops.zeros_like(a), math_ops.equal(batch, batch))
    _, low, ok = control_flow.while_loop(lambda j, *_: math_ops.less(j, n), body, start)
    return apply(ops.check, [low, reduction_ops.reduce_all(ok)],
                 {"message": "Cholesky decomposition was not successful. The input might not be valid."})


@export("linalg.cholesky")
def cholesky(input, name=None):  # noqa: A002
    """L, lower triangular with a positive diagonal, with L @ L^T = input, for each symmetric positive-definite
    [..., n, n] matrix (only its lower triangle is read)."""
    a = square_matrix("Cholesky", input)

    def backward(low, g):  # TF's _CholeskyGrad
        eye = fill_ops.zeros_like(low) + fill_ops.eye(_size(low), dtype=low.dtype)
        l_inv = triangular_solve(low, eye, lower=True)
        middle = linalg_ops.matmul(transpose_last(low), g)
        middle = matrix_ops.set_diag(middle, 0.5 * matrix_ops.diag_part(middle))
        middle = matrix_ops.band_part(middle, -1, 0)
        grad = linalg_ops.matmul(linalg_ops.matmul(transpose_last(l_inv), middle), l_inv)
        return [0.5 * (grad + transpose_last(grad))]
    return with_gradient(lambda a: math_ops.cast(_cholesky64(wide(a)), a.dtype), backward, a)


def _substitute64(a, b, lower):
    n = _size(a)
    rows = positions(n)

    def body(i, x):
        r = i if lower else n - 1 - i
        a_r = slicing_ops.gather(a, r, axis=-2)  # row r of a: the solved x rows only meet their own columns
        done = linalg_ops.matmul(array_ops.expand_dims(a_r, -2), x)[..., 0, :]
        pivot = array_ops.expand_dims(slicing_ops.gather(a_r, r, axis=-1), -1)
        x_r = (slicing_ops.gather(b, r, axis=-2) - done) / pivot
        return i + 1, math_ops.where(array_ops.expand_dims(math_ops.equal(rows, r), -1),
                                     array_ops.expand_dims(x_r, -2), x)

    a = matrix_ops.band_part(a, -1, 0) if lower else matrix_ops.band_part(a, 0, -1)
    _, x = control_flow.while_loop(lambda i, _: math_ops.less(i, n), body,
                                   (convert_to_tensor(0), fill_ops.zeros_like(b)))
    return x


@export("linalg.triangular_solve")
def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """x with matrix @ x = rhs (matrix^T @ x with adjoint=True) for each lower (or upper) triangular
    [..., n, n] matrix and its [..., n, k] right-hand sides; the other triangle is not read."""
    a = square_matrix("MatrixTriangularSolve", matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    if b.ndim != a.ndim:
        raise user_error(ValueError(f"MatrixTriangularSolve: matrix and rhs must have the same rank, got shapes "
                                    f"{a.shape} and {b.shape}"))
    lower, adjoint = bool(lower), bool(adjoint)

    def forward(a, b):
        a64 = wide(a)
        if adjoint:
            return math_ops.cast(_substitute64(transpose_last(a64), wide(b), not lower), a.dtype)
        return math_ops.cast(_substitute64(a64, wide(b), lower), a.dtype)

    def backward(x, g):  # TF's _MatrixTriangularSolveGrad
        gb = triangular_solve(a, g, lower=lower, adjoint=not adjoint)
        ga = math_ops.negative(linalg_ops.matmul(x, transpose_last(gb)) if adjoint
                               else linalg_ops.matmul(gb, transpose_last(x)))
        ga = matrix_ops.band_part(ga, -1, 0) if lower else matrix_ops.band_part(ga, 0, -1)
        return [ga, gb]
    return with_gradient(forward, backward, a, b)


@export("linalg.cholesky_solve")
def cholesky_solve(chol, rhs, name=None):
    """x with A @ x = rhs for A = chol @ chol^T (chol: tf.linalg.cholesky's factor)."""
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, y, lower=True, adjoint=True)

