"""`tfn.linalg.diag`, `diag_part`, `trace`, `band_part` (and `tfn.linalg.set_diag`) on the last two dims of a
tensor, composed of tfn ops: a mask made by comparing a row range with a column range selects the elements with
`where`, so they run on dynamic dims and differentiate through `where`. One diagonal `k` (a Python int) at a
time; TF's k=(low, high) bands of diagonals are not supported."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.composite import require_dtype, user_error
from tfn.ops.sequence_ops import _static_count


def _size(x, axis):
    """Dim `axis` of x: a Python int when static, else an int64 scalar tensor read when the function runs."""
    d = x._shape[axis]
    return d if d is not None else shape_ops.shape(x, dtypes.int64)[axis]


def _positions(rows, cols):
    """(i, j): int64 row indices shaped [rows, 1] and column indices shaped [1, cols]."""
    i = array_ops.reshape(fill_ops.range(convert_to_tensor(rows, dtypes.int64) if isinstance(rows, int) else rows),
                          [-1, 1])
    j = array_ops.reshape(fill_ops.range(convert_to_tensor(cols, dtypes.int64) if isinstance(cols, int) else cols),
                          [1, -1])
    return i, j


def _matrix(op, x):
    x = convert_to_tensor(x)
    require_dtype(op, x, rules.NUMERIC)
    if x.ndim < 2:
        raise user_error(ValueError(f"{op}: input must be at least 2-D, got shape {x.shape}"))
    return x


def _k(op, k):
    if isinstance(k, (list, tuple)) or (isinstance(k, TensorBase) and k.ndim):
        raise user_error(ValueError(f"{op}: k must be one diagonal (an int); bands of diagonals k=(low, high) "
                                    "are not supported by tfn"))
    return _static_count(k, "k", op)


@export("linalg.diag_part")
def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The diagonal k (0: main, > 0 above, < 0 below) of each matrix in the last two dims: [..., length]."""
    x = _matrix("MatrixDiagPartV3", input)
    k = _k("MatrixDiagPartV3", k)
    m, n = _size(x, -2), _size(x, -1)
    if isinstance(m, int) and isinstance(n, int) and m and n and not -m < k < n:
        raise user_error(InvalidArgumentError(f"k must be in ({-m}, {n}) for a {m}x{n} matrix, got {k} "
                                              "[Op:MatrixDiagPartV3]"))
    i, j = _positions(m, n)
    picked = math_ops.where(math_ops.equal(j - i, k), x, fill_ops.zeros_like(x))
    if k >= 0:  # row i holds the element of the diagonal at column i + k
        line, length = reduction_ops.reduce_sum(picked, -1), _min(m, _plus(n, -k))
    else:  # column j holds the one at row j - k
        line, length = reduction_ops.reduce_sum(picked, -2), _min(n, _plus(m, k))
    return line[..., :length]


def _plus(a, b):
    return a + b if isinstance(a, int) else a + convert_to_tensor(b, dtypes.int64)


def _min(a, b):
    """max(min(a, b), 0) of sizes: a Python int when both are, else an int64 scalar tensor."""
    if isinstance(a, int) and isinstance(b, int):
        return max(min(a, b), 0)
    a, b = (convert_to_tensor(v, dtypes.int64) if isinstance(v, int) else v for v in (a, b))
    return math_ops.maximum(math_ops.minimum(a, b), convert_to_tensor(0, dtypes.int64))


@export("linalg.diag")
def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Matrices with `diagonal` ([..., n]) on diagonal k and padding_value elsewhere: [..., n+|k|, n+|k|]."""
    v = convert_to_tensor(diagonal)
    require_dtype("MatrixDiagV3", v, rules.NUMERIC)
    if v.ndim < 1:
        raise user_error(ValueError(f"MatrixDiagV3: diagonal must be at least 1-D, got shape {v.shape}"))
    k = _k("MatrixDiagV3", k)
    if _static_count(num_rows, "num_rows", "MatrixDiagV3") != -1 or \
            _static_count(num_cols, "num_cols", "MatrixDiagV3") != -1:
        raise user_error(ValueError("MatrixDiagV3: num_rows/num_cols other than -1 (a square result) are not "
                                    "supported by tfn"))
    if k:
        paddings = [[0, 0]] * (v.ndim - 1) + [[0, abs(k)]]
        v = fill_ops.pad(v, paddings)
    size = _size(v, -1)
    i, j = _positions(size, size)
    value = array_ops.expand_dims(v, -1 if k >= 0 else -2)  # element (i, j) reads v[i] above, v[j] below
    pad = convert_to_tensor(padding_value, v.dtype)
    return math_ops.where(math_ops.equal(j - i, k), value, pad)


@export("linalg.set_diag")
def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """`input` with its diagonal k replaced by `diagonal` (one shorter per |k| when k != 0, as TF)."""
    x = _matrix("MatrixSetDiagV3", input)
    k = _k("MatrixSetDiagV3", k)
    v = convert_to_tensor(diagonal, x.dtype) if not isinstance(diagonal, TensorBase) else diagonal
    m, n = _size(x, -2), _size(x, -1)
    i, j = _positions(m, n)
    length = n if k < 0 else m
    want = max(0, length)
    if isinstance(want, int) and v._shape[-1] is not None:
        extra = want - v._shape[-1]
        if extra < 0:
            raise user_error(ValueError(f"MatrixSetDiagV3: diagonal of length {v._shape[-1]} is too long for "
                                        f"diagonal {k} of a {m}x{n} matrix"))
        v = fill_ops.pad(v, [[0, 0]] * (v.ndim - 1) + [[0, extra]])
    value = array_ops.expand_dims(v, -1 if k >= 0 else -2)
    return math_ops.where(math_ops.equal(j - i, k), value, x)


@export("linalg.trace")
def trace(x, name=None):
    """The sum of the main diagonal of each matrix in the last two dims: a tensor of shape x.shape[:-2]."""
    return reduction_ops.reduce_sum(diag_part(x), -1)


@export("linalg.band_part")
def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Each matrix with the elements outside its band zeroed: kept where (num_lower < 0 or i - j <= num_lower)
    and (num_upper < 0 or j - i <= num_upper). num_lower/num_upper may be scalar tensors."""
    x = _matrix("MatrixBandPart", input)
    i, j = _positions(_size(x, -2), _size(x, -1))
    keep = None
    for limit, dist in ((num_lower, i - j), (num_upper, j - i)):
        limit = math_ops.cast(convert_to_tensor(limit, dtypes.int64) if not isinstance(limit, TensorBase)
                              else limit, dtypes.int64)
        if limit.ndim != 0 or not limit.dtype.is_integer:
            raise user_error(ValueError(f"MatrixBandPart: num_lower and num_upper must be scalar ints, got {limit!r}"))
        inside = math_ops.logical_or(math_ops.less(limit, 0), math_ops.less_equal(dist, limit))
        keep = inside if keep is None else math_ops.logical_and(keep, inside)
    return math_ops.where(keep, x, fill_ops.zeros_like(x))
