"""Linear algebra ops: matmul with TF's BatchMatMulV2 batch broadcasting."""
import numpy as np

from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define


def pretty(shape):
    """A shape as TF prints it in messages: [2,3], with ? for a dynamic dim."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def matrix_dims(tt, transpose):
    """(rows, cols) of the matrices of an operand as the product sees them (after an optional transpose)."""
    rows, cols = tt.shape[-2], tt.shape[-1]
    return (cols, rows) if transpose else (rows, cols)


def _matmul_infer(types, attrs):
    a, b = types
    op = "MatMul" if a.rank == 2 and b.rank == 2 else "BatchMatMulV2"
    dt = rules.same_dtype(op, types)
    rules.allowed(op, dt, rules.NUMERIC)
    for i, t in enumerate(types):
        if t.rank < 2:
            raise InvalidArgumentError(f"In[{i}] is not a matrix. Instead it has shape {pretty(t.shape)} [Op:{op}]")
    m, ka = matrix_dims(a, attrs["transpose_a"])
    kb, n = matrix_dims(b, attrs["transpose_b"])
    if ka is not None and kb is not None and ka != kb:
        raise InvalidArgumentError(f"Matrix size-incompatible: In[0]: {pretty(a.shape)}, In[1]: {pretty(b.shape)} "
                                   f"[Op:{op}]")
    try:
        batch = rules.broadcast_shapes(op, a.shape[:-2], b.shape[:-2])
    except InvalidArgumentError:
        raise InvalidArgumentError(f"In[0] and In[1] must have compatible batch dimensions: {pretty(a.shape)} vs. "
                                   f"{pretty(b.shape)} [Op:{op}]") from None
    return rules.tensor(batch + (m, n), dt)


def _matmul_kernel(arrays, attrs):
    a, b = arrays
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    with np.errstate(all="ignore"):
        return np.matmul(a, b)


define("matmul", ["a", "b"], _matmul_infer, _matmul_kernel, {"transpose_a": "bool", "transpose_b": "bool"},
       tf_name="BatchMatMulV2", summary="matrix product over the last two dims, broadcasting the batch dims",
       tf_api=("matmul", "linalg.matmul"))
