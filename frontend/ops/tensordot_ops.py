"""tf.tensordot (tf.linalg.tensordot), tf.linalg.matvec and tf.linalg.cross, written as tfn.einsum equations (so
dims may be dynamic and the gradients are einsum's), and tf.linalg.matrix_transpose / adjoint (real tensors)."""
from tfn.core.api import export
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.ops import array_ops, einsum_ops
from tfn.ops.composite import user_error

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _axes_lists(axes, ra, rb):
    if isinstance(axes, TensorBase):
        axes = axes.numpy().tolist()
    if isinstance(axes, int):
        if not 0 <= axes <= min(ra, rb):
            raise user_error(ValueError(f"tensordot: axes must be in [0, {min(ra, rb)}], got {axes}"))
        return list(range(ra - axes, ra)), list(range(axes))
    if len(axes) != 2:
        raise user_error(ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}"))
    a_axes, b_axes = ([x] if isinstance(x, int) else list(x) for x in axes)
    if len(a_axes) != len(b_axes):
        raise user_error(ValueError(f"tensordot: different numbers of contracted axes: {a_axes} and {b_axes}"))
    return [x % ra for x in a_axes], [x % rb for x in b_axes]


@export("tensordot", "linalg.tensordot")
def tensordot(a, b, axes, name=None):
    """The sum over a's `axes[0]` and b's `axes[1]` (an int N: a's last N and b's first N) of a * b; the result's
    dims are a's free dims then b's."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    a_axes, b_axes = _axes_lists(axes, a.ndim, b.ndim)
    if a.ndim + b.ndim > len(_LETTERS):
        raise user_error(ValueError("tensordot: too many dims"))
    la = list(_LETTERS[:a.ndim])
    lb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(a_axes, b_axes):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in a_axes] + [c for j, c in enumerate(lb) if j not in b_axes]
    return einsum_ops.einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


@export("linalg.matvec")
def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """a @ b for each [..., m, n] matrix a and [..., n] vector b (a^T with transpose_a or adjoint_a)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.ndim < 2 or b.ndim < 1:
        raise user_error(ValueError(f"matvec: a must be at least 2-D and b 1-D, got shapes {a.shape} and {b.shape}"))
    spec = "...ji,...j->...i" if (transpose_a or adjoint_a) else "...ij,...j->...i"
    return einsum_ops.einsum(spec, a, b)


@export("linalg.cross")
def cross(a, b, name=None):
    """The cross product of the 3-vectors along the last dim of a and b (broadcasting the others)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a._shape[-1:] != (3,) or b._shape[-1:] != (3,):
        raise user_error(ValueError(f"Cross: the last dims must be 3, got shapes {a.shape} and {b.shape}"))
    a0, a1, a2 = array_ops.unstack(a, axis=-1)
    b0, b1, b2 = array_ops.unstack(b, axis=-1)
    return array_ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


@export("linalg.matrix_transpose", "linalg.transpose")
def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """a with its last two dims swapped (real tensors: conjugate changes nothing)."""
    a = convert_to_tensor(a)
    if a.ndim < 2:
        raise user_error(ValueError(f"Argument 'a' should be a (batch) matrix with rank >= 2. Found: {a.shape}"))
    perm = list(range(a.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return array_ops.transpose(a, perm)


@export("linalg.adjoint")
def adjoint(matrix, name=None):
    """The conjugate transpose of the last two dims: matrix_transpose (tfn's tensors are real)."""
    return matrix_transpose(matrix)
