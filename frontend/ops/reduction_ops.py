"""Public reductions (`tfn.reduce_sum`, ..., `tfn.math.argmax`) with TF's axis and keepdims conventions."""
import numpy as np

from tfn import dtypes
from tfn.core.api import op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor, known
from tfn.dialects import ops
from tfn.dialects.errors import InvalidArgumentError


def _static_ints(axis, what):
    """A Python int or list of ints (or an eager integer tensor) as a flat int64 array."""
    axis = known(axis)
    if isinstance(axis, SymbolicTensor):
        raise TypeError(f"{what} must be known when the function is traced; got the symbolic tensor {axis.name}")
    values = np.asarray(axis.numpy() if isinstance(axis, TensorBase) else axis)
    if values.dtype.kind not in "iu" and values.size:
        raise TypeError(f"{what} must be an int or a list of ints, got {axis!r}")
    return values.reshape(-1).astype(np.int64)


def reduction_axes(op, x, axis):
    """TF's `axis` argument (None = all dims; ints may be negative) as sorted unique non-negative axes."""
    rank = len(x._shape)
    if axis is None:
        return tuple(range(rank))
    out = set()
    for a in _static_ints(axis, "axis"):
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"Invalid reduction dimension ({a} for input with {rank} dimension(s) "
                                       f"[Op:{op}]")
        out.add(int(a) % rank)
    return tuple(sorted(out))


def _reduction(opdef, doc):
    """The public function of a reduction op, exported as tfn.<name> and tfn.math.<name>."""
    @op_api(opdef, exports=(opdef.name, "math." + opdef.name))
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = convert_to_tensor(input_tensor)
        return apply(opdef, [x], {"axis": reduction_axes(opdef.tf_name, x, axis), "keepdims": bool(keepdims)})
    fn.__name__ = opdef.name
    fn.__doc__ = doc
    return fn


reduce_sum = _reduction(ops.reduce_sum, "Sum over `axis` (None: all dims), keeping reduced dims as 1s with keepdims.")
reduce_mean = _reduction(ops.reduce_mean, "Mean over `axis`; integer means truncate toward zero, as TF.")
reduce_prod = _reduction(ops.reduce_prod, "Product over `axis` (1 for an empty reduction).")
reduce_max = _reduction(ops.reduce_max, "Maximum over `axis` (the dtype's lowest value when empty).")
reduce_min = _reduction(ops.reduce_min, "Minimum over `axis` (the dtype's highest value when empty).")
reduce_any = _reduction(ops.reduce_any, "Logical or of a bool tensor over `axis`.")
reduce_all = _reduction(ops.reduce_all, "Logical and of a bool tensor over `axis`.")


def _arg_axis(op, x, axis):
    rank = len(x._shape)
    if axis is None:
        axis = 0
    values = _static_ints(axis, "axis")
    if values.size != 1:
        raise InvalidArgumentError(f"dimension must be a scalar, got {values.tolist()} [Op:{op}]")
    a = int(values[0])
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"Expected dimension in the range [{-rank}, {rank}), but got {a} [Op:{op}]")
    return a % rank


def _arg_reduction(opdef, doc):
    """The public function of argmax/argmin, exported as tfn.<name> and tfn.math.<name>."""
    @op_api(opdef, exports=(opdef.name, "math." + opdef.name))
    def fn(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
        x = convert_to_tensor(input)
        attrs = {"axis": _arg_axis(opdef.tf_name, x, axis), "output_type": dtypes.as_dtype(output_type)}
        return apply(opdef, [x], attrs)
    fn.__name__ = opdef.name
    fn.__doc__ = doc
    return fn


argmax = _arg_reduction(ops.argmax, "Index of the first largest value along `axis` (None: 0).")
argmin = _arg_reduction(ops.argmin, "Index of the first smallest value along `axis` (None: 0).")
