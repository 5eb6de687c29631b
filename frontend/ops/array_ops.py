"""Public shape functions: transpose, reshape, expand_dims, squeeze, broadcast_to, tile, concat, stack, unstack.

Permutations and axes must be known when a function is traced: Python ints, lists/tuples of ints, NumPy arrays
or eager tensors; a symbolic tensor there raises TypeError. reshape also takes sizes computed at run time
(ops/reshape_runtime.py), and so does broadcast_to of a static-shape input.
"""
import numpy as np

from tfn import dtypes
from tfn.core import tensor as tensor_mod
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops, ops_shape
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.types import TensorType, check_memory
from tfn.ops import reshape_runtime
from tfn.ops.math_ops import identity


def _not_symbolic(value, what, op):
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"{op}: `{what}` must be known when the function is traced (Python ints or a constant), "
                        f"but it is the symbolic tensor {value!r}; tfn does not support shapes computed at run time")


def _static_ints(value, what, op):
    """A 1-D shape-like argument as a tuple of Python ints, known at trace time."""
    value = known(value)
    _not_symbolic(value, what, op)
    if isinstance(value, TensorShape):
        if value.rank is None or None in value.as_list():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        return tuple(value.as_list())
    if isinstance(value, (list, tuple)):
        for v in value:
            _not_symbolic(v, what, op)
    arr = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    if arr.ndim != 1:
        raise InvalidArgumentError(f"{op}: `{what}` must be a vector of ints, got shape {list(arr.shape)} "
                                   f"[Op:{op}]")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{op}: `{what}` must contain integers, got {value!r}")
    return tuple(int(d) for d in arr)


def _static_int(value, what, op):
    """A scalar int argument (axis, num), known at trace time."""
    value = known(value)
    _not_symbolic(value, what, op)
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: `{what}` must be an int, got {value!r}")
    return int(value)


def _axis_list(axis, op):
    """An int or a list of ints (or an eager tensor of them) as a tuple of ints."""
    axis = known(axis)
    if isinstance(axis, Tensor):
        axis = axis.numpy()
    if isinstance(axis, np.ndarray):
        axis = axis.reshape(-1).tolist()
    if not isinstance(axis, (list, tuple)):
        axis = [axis]
    return tuple(_static_int(a, "axis", op) for a in axis)


def _type(t):
    return TensorType(t._shape, t.dtype)


@op_api(ops.transpose, exports=("transpose",))
def transpose(a, perm=None, conjugate=False, name=None):
    """Permute the dimensions of `a`: result dim i is `a`'s dim perm[i]; perm None reverses them."""
    x = convert_to_tensor(a)
    perm = tuple(reversed(range(x.ndim))) if perm is None else _static_ints(perm, "perm", "Transpose")
    return apply("transpose", [x], {"perm": perm})


@op_api(ops.reshape, exports=("reshape",))
def reshape(tensor, shape, name=None):
    """The elements of `tensor` in row-major order with a new shape (one size may be -1)."""
    x = convert_to_tensor(tensor)
    if reshape_runtime.is_runtime_shape(shape):
        return reshape_runtime.reshape_runtime(x, shape)
    return apply("reshape", [x], {"shape": _static_ints(shape, "shape", "Reshape")})


@op_api(ops.expand_dims, exports=("expand_dims",))
def expand_dims(input, axis, name=None):  # noqa: A002
    """`input` with a dimension of size 1 inserted at `axis` (in [-rank-1, rank])."""
    x = convert_to_tensor(input)
    return apply("expand_dims", [x], {"axis": _static_int(axis, "axis", "ExpandDims")})


@op_api(ops.squeeze, exports=("squeeze",))
def squeeze(input, axis=None, name=None):  # noqa: A002
    """`input` without the size-1 dims in `axis` (int or list); axis None removes every static size-1 dim.

    Without `axis`, dynamic dims are kept (tfn cannot know at trace time whether they will be 1); pass
    `axis` to squeeze a dynamic dim.
    """
    x = convert_to_tensor(input)
    return apply("squeeze", [x], {"axis": None if axis is None else _axis_list(axis, "Squeeze")})


@op_api(ops.broadcast_to, exports=("broadcast_to",))
def broadcast_to(input, shape, name=None):  # noqa: A002
    """`input` broadcast (NumPy rules) to `shape`; a dynamic input dim is assumed to match `shape`."""
    x = convert_to_tensor(input)
    if reshape_runtime.is_runtime_shape(shape):
        return reshape_runtime.broadcast_to_runtime(x, shape)
    return apply("broadcast_to", [x], {"shape": _static_ints(shape, "shape", "BroadcastTo")})


@op_api(ops.tile, exports=("tile",))
def tile(input, multiples, name=None):  # noqa: A002
    """`input` repeated `multiples[i]` times along each dim i (a vector of ints, one per dim of `input`).

    `multiples` must be known when a function is traced (Python ints, a list, a NumPy array or a constant).
    """
    x = convert_to_tensor(input)
    m = known(multiples)
    if isinstance(m, TensorBase) and m.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"Value for attr 'Tmultiples' of {m.dtype.name} is not in the list of allowed "
                                   "values: int32, int64 [Op:Tile]")
    return apply("tile", [x], {"multiples": _static_ints(multiples, "multiples", "Tile")})


@op_api(ops.concat, exports=("concat",))
def concat(values, axis, name="concat"):
    """The tensors in `values` joined along an existing `axis` (a pairwise `tfn.concat` chain)."""
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if not values:
        raise ValueError("List argument 'values' to 'ConcatV2' Op with length 0 shorter than minimum length 2.")
    axis = _static_int(axis, "axis", "ConcatV2")
    if len(values) == 1:
        return identity(convert_to_tensor(values[0]))
    ts = tensors(*values)
    result = ops_shape.concat_type([_type(t) for t in ts], axis)  # TF's errors, naming positions in the list
    check_memory(result)  # (before the tree: its levels, all alive at once, would take the machine's memory)
    while len(ts) > 1:  # a balanced tree of binary concats: each element is copied O(log n) times eagerly
        pairs = [apply("concat", ts[i:i + 2], {"axis": axis}) for i in range(0, len(ts) - 1, 2)]
        ts = pairs + ts[len(ts) - len(ts) % 2:]
    return ts[0]


@op_api(ops.stack, exports=("stack",))
def stack(values, axis=0, name="stack"):
    """The tensors in `values` (one dtype, compatible shapes) joined along a new `axis`."""
    values = list(values)
    axis = _static_int(axis, "axis", "Pack")
    if axis == 0 and not any(isinstance(v, TensorBase) for v in values):
        return convert_to_tensor(values)  # as TF: a list of Python values is a constant
    if not values:
        raise ValueError("List argument 'values' to 'Pack' Op with length 0 shorter than minimum length 1.")
    ts = tensors(*values)
    types = [_type(t) for t in ts]
    ops_shape.stack_type(types, axis)
    if any(t != types[0] for t in types):
        # The variadic op needs one type; compatible shapes that differ in static knowledge go via concat.
        a = ops_shape.stack_axis(types[0].rank, axis)
        return concat([expand_dims(t, a) for t in ts], a)
    return apply("stack", ts, {"axis": axis})


@op_api(ops.unstack, exports=("unstack",))
def unstack(value, num=None, axis=0, name="unstack"):
    """The list of rank-(R-1) tensors that `value` holds along `axis` (`num` defaults to its static size)."""
    x = convert_to_tensor(value)
    axis = _static_int(axis, "axis", "Unpack")
    num = None if num is None else _static_int(num, "num", "Unpack")
    num = len(ops_shape.unstack_types(_type(x), num, axis))
    return apply("unstack", [x], {"num": num, "axis": axis})



tensor_mod.STACK[:] = [stack]  # convert_to_tensor packs lists of symbolic tensors with it
