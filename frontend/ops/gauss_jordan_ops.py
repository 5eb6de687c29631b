"""tf.linalg.det, slogdet, logdet, inv and solve: Gauss-Jordan elimination
with partial pivoting, a tfn.while_loop over the columns of [A | B] (one row swap, one scaling and one rank-1
update per column, so O(n**2 (n + m)) work), in float64 for float16/float32 matrices and rounded once. Batches of
matrices ([..., n, n]) are eliminated together. Their gradients are TF's, by the inverse (tfn.custom_gradient's
mechanism: the loop itself is not differentiated). A singular matrix gives det 0 (slogdet: sign 0, log -inf);
inv and solve raise InvalidArgumentError("Input is not invertible.") as TF's."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops, rules
from tfn.ops import array_ops, control_flow, fill_ops, linalg_ops, math_ops, reduction_ops, shape_ops, slicing_ops
from tfn.ops.composite import require_dtype, user_error, with_gradient


def square_matrix(op, a):
    """a as a float tensor of at least two dims whose last two are equal (when known), else TF's errors."""
    a = convert_to_tensor(a)
    require_dtype(op, a, rules.FLOATS)
    if a.ndim < 2:
        raise user_error(ValueError(f"{op}: input must have rank >= 2, got shape {a.shape}"))
    n, m = a._shape[-2:]
    if n is not None and m is not None and n != m:
        raise user_error(ValueError(f"{op}: input matrices must be square, got shape {a.shape}"))
    return a


def wide(x):
    """x in float64 (a float16/32 matrix is eliminated in float64, then rounded once)."""
    return x if x.dtype is dtypes.float64 else math_ops.cast(x, dtypes.float64)


def transpose_last(x):
    """x with its last two dims swapped."""
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return array_ops.transpose(x, perm)


def positions(n):
    """[0, 1, ..., n - 1] as int32, of static length when n is an int (a traced tfn.range(n) has a dynamic one)."""
    return convert_to_tensor(np.arange(n, dtype=np.int32)) if isinstance(n, int) else fill_ops.range(n)


def _eliminate(a, b):
    """Gauss-Jordan on [a | b] (float64, a [..., n, n], b [..., n, m] or None): (a**-1 b or None, log|det a|,
    sign of det a (0 when singular), whether a is singular)."""
    nb = a.ndim - 2
    n = a._shape[-1] if a._shape[-1] is not None else shape_ops.shape(a)[-1]  # static: the loop keeps its shapes
    rows = positions(n)
    aug = a if b is None else array_ops.concat([a, b], -1)
    batch = aug[..., 0, 0]

    def body(k, aug, log_det, sign, singular):
        col = slicing_ops.gather(aug, k, axis=-1)
        p = reduction_ops.argmax(math_ops.where(math_ops.greater_equal(rows, k), math_ops.abs(col), col * 0 - 1),
                                 axis=-1, output_type=dtypes.int32)
        pe = array_ops.expand_dims(p, -1)
        order = math_ops.where(math_ops.equal(rows, k), pe, math_ops.where(math_ops.equal(rows, pe), k, rows))
        aug = slicing_ops.gather(aug, order, axis=nb, batch_dims=nb)
        col = slicing_ops.gather(aug, k, axis=-1)
        pivot = slicing_ops.gather(col, k, axis=-1)
        zero = math_ops.equal(pivot, 0)
        safe = math_ops.where(zero, pivot * 0 + 1, pivot)
        row = slicing_ops.gather(aug, k, axis=-2) / array_ops.expand_dims(safe, -1)
        is_k = math_ops.equal(rows, k)
        factor = math_ops.where(is_k, col * 0, col)
        aug = aug - array_ops.expand_dims(factor, -1) * array_ops.expand_dims(row, -2)
        aug = math_ops.where(array_ops.expand_dims(is_k, -1), array_ops.expand_dims(row, -2), aug)
        swapped = math_ops.cast(math_ops.not_equal(p, k), dtypes.float64)
        sign = sign * (1 - 2 * swapped) * math_ops.sign(pivot)
        log_det = log_det + math_ops.log(math_ops.abs(pivot))
        return k + 1, aug, log_det, sign, math_ops.logical_or(singular, zero)

    start = (convert_to_tensor(0), aug, batch * 0, batch * 0 + 1, math_ops.not_equal(batch, batch))
    _, aug, log_det, sign, singular = control_flow.while_loop(lambda k, *_: math_ops.less(k, n), body, start)
    x = None if b is None else aug[..., :, n:]
    return x, log_det, sign, singular


def _not_invertible(x, singular):
    ok = math_ops.logical_not(reduction_ops.reduce_any(singular))
    return apply(ops.check, [x, ok], {"message": "Input is not invertible."})


def _solve64(a, b):
    x, _, _, singular = _eliminate(wide(a), wide(b))
    return math_ops.cast(_not_invertible(x, singular), a.dtype)


@export("linalg.det")
def det(input, name=None):  # noqa: A002
    """The determinant of each [..., n, n] matrix."""
    a = square_matrix("MatrixDeterminant", input)

    def forward(a):
        _, log_det, sign, _ = _eliminate(wide(a), None)
        return math_ops.cast(sign * math_ops.exp(log_det), a.dtype)

    def backward(d, g):  # d det / d a = det * a**-T
        return [array_ops.expand_dims(array_ops.expand_dims(g * d, -1), -1) * transpose_last(inv(a))]
    return with_gradient(forward, backward, a)


def _log_abs_det(a):
    def forward(a):
        _, log_det, _, _ = _eliminate(wide(a), None)
        return math_ops.cast(log_det, a.dtype)

    def backward(_, g):  # d log|det| / d a = a**-T
        return [array_ops.expand_dims(array_ops.expand_dims(g, -1), -1) * transpose_last(inv(a))]
    return with_gradient(forward, backward, a)


@export("linalg.slogdet")
def slogdet(input, name=None):  # noqa: A002
    """(sign, log |det|) of each [..., n, n] matrix: no overflow where det itself would."""
    a = square_matrix("LogMatrixDeterminant", input)
    from tfn.gradients import recording  # start-up cost: (and layering) the sign has no gradient
    with recording.pause():
        _, _, sign, _ = _eliminate(wide(a), None)
    return math_ops.cast(sign, a.dtype), _log_abs_det(a)


@export("linalg.logdet")
def logdet(matrix, name=None):
    """log det of each Hermitian positive-definite matrix (as log |det|)."""
    return _log_abs_det(square_matrix("logdet", matrix))


@export("linalg.inv")
def inv(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each [..., n, n] matrix (of its transpose with adjoint=True)."""
    a = square_matrix("MatrixInverse", input)
    if adjoint:
        a = transpose_last(a)

    def forward(a):
        return _solve64(a, fill_ops.zeros_like(a) + _eye(a))

    def backward(y, g):  # d a**-1 = -a**-T g a**-T
        yt = transpose_last(y)
        return [math_ops.negative(linalg_ops.matmul(linalg_ops.matmul(yt, g), yt))]
    return with_gradient(forward, backward, a)


def _eye(a):
    n = a._shape[-1] if a._shape[-1] is not None else shape_ops.shape(a)[-1]
    return fill_ops.eye(n, dtype=a.dtype)


@export("linalg.solve")
def solve(matrix, rhs, adjoint=False, name=None):
    """x with matrix @ x = rhs (matrix^T @ x = rhs with adjoint=True), for each [..., n, n] matrix and its
    [..., n, k] right-hand sides."""
    a = square_matrix("MatrixSolve", matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    if b.ndim != a.ndim:
        raise user_error(ValueError(f"MatrixSolve: matrix and rhs must have the same rank, got shapes {a.shape} and "
                                    f"{b.shape}"))
    if adjoint:
        a = transpose_last(a)

    def backward(x, g):  # as TF's _MatrixSolveGrad on the (transposed) matrix
        gb = solve(a, g, adjoint=True)
        return [math_ops.negative(linalg_ops.matmul(gb, transpose_last(x))), gb]
    return with_gradient(_solve64, backward, a, b)
