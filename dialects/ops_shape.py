"""Shape ops: transpose, reshape, expand_dims, squeeze, broadcast_to, tile, concat, stack, unstack.

Dynamic dims (None) follow the table's convention: a dynamic dim is assumed to be the size the op needs
(never a broadcast 1), and `squeeze` without an axis keeps dynamic dims.
"""
import math

import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType, check_size


def shape_str(shape):
    """A shape as TF prints it in op errors: `[2,?,3]`."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _merge_dim(a, b):
    return b if a is None else a


# transpose ---------------------------------------------------------------------------------------------

def _transpose_infer(types, attrs):
    x, perm = types[0], attrs["perm"]
    if len(perm) != x.rank:
        raise InvalidArgumentError(f"transpose expects a vector of size {x.rank}. But input(1) is a vector of "
                                   f"size {len(perm)} [Op:Transpose]")
    for d in perm:
        if not 0 <= d < x.rank:
            raise InvalidArgumentError(f"{d} is out of range [0 .. {x.rank}) [Op:Transpose]")
    for i in range(x.rank):
        if i not in perm:
            raise InvalidArgumentError(f"{i} is missing from {{{','.join(map(str, perm))}}}. [Op:Transpose]")
    return TensorType([x.shape[d] for d in perm], x.dtype)


define("transpose", ["x"], _transpose_infer, lambda a, at: np.transpose(a[0], at["perm"]), {"perm": "i64s"},
       summary="permute the dimensions: out.shape[i] = x.shape[perm[i]]", tf_api="transpose")


# reshape -----------------------------------------------------------------------------------------------

def num_elements(shape):
    """The element count of a shape, None if a dim is dynamic."""
    return None if None in shape else math.prod(shape)


def _reshape_check_request(shape):
    """The index of the -1 in a requested shape (or None); rejects other negative sizes."""
    unknown = None
    for i, d in enumerate(shape):
        if d == -1:
            if unknown is not None:
                raise InvalidArgumentError(f"Only one input size may be -1, not both {unknown} and {i} "
                                           "[Op:Reshape]")
            unknown = i
        elif d < 0:
            raise InvalidArgumentError(f"Size {i} must be non-negative, not {d} [Op:Reshape]")
    return unknown


def reshape_shape(in_shape, shape):
    """The result shape of reshaping `in_shape` to `shape` (one -1 allowed), as TF's Reshape checks it."""
    unknown = _reshape_check_request(shape)
    check_size([d for d in shape if d != -1], dtypes.int8)  # an overflowing request is TF's overflow error
    known = math.prod(d for d in shape if d != -1)
    count = num_elements(in_shape)
    if unknown is None:
        if count is not None and count != known:
            raise InvalidArgumentError(f"Input to reshape is a tensor with {count} values, but the requested "
                                       f"shape has {known} [Op:Reshape]")
        return tuple(shape)
    if known == 0:
        raise InvalidArgumentError("Reshape cannot infer the missing input size for an empty tensor unless all "
                                   "specified input sizes are non-zero [Op:Reshape]")
    if count is None:
        missing = None
    elif count % known:
        raise InvalidArgumentError(f"Input to reshape is a tensor with {count} values, but the requested shape "
                                   f"requires a multiple of {known} [Op:Reshape]")
    else:
        missing = count // known
    return tuple(missing if i == unknown else d for i, d in enumerate(shape))


def _reshape_infer(types, attrs):
    return TensorType(reshape_shape(types[0].shape, attrs["shape"]), types[0].dtype)


define("reshape", ["x"], _reshape_infer, lambda a, at: np.reshape(a[0], at["shape"]), {"shape": "i64s"},
       summary="the same elements in row-major order with a new shape (one size may be -1)", tf_api="reshape")


# expand_dims / squeeze ---------------------------------------------------------------------------------

def expand_axis(rank, axis):
    """The non-negative position of a new dim inserted at `axis` (in [-rank-1, rank])."""
    if not -rank - 1 <= axis <= rank:
        raise InvalidArgumentError(f"Tried to expand dim index {axis} for tensor with {rank} dimensions. "
                                   "[Op:ExpandDims]")
    return axis % (rank + 1)


def _expand_dims_infer(types, attrs):
    x = types[0]
    a = expand_axis(x.rank, attrs["axis"])
    return TensorType(x.shape[:a] + (1,) + x.shape[a:], x.dtype)


define("expand_dims", ["x"], _expand_dims_infer, lambda a, at: np.expand_dims(a[0], at["axis"]), {"axis": "i64"},
       summary="insert a dimension of size 1 at `axis`", tf_api="expand_dims")


def squeeze_axes(shape, axis):
    """The sorted dims that squeeze removes: the given axes (each must be 1 or dynamic) or every static 1."""
    rank = len(shape)
    if axis is None:
        return tuple(i for i, d in enumerate(shape) if d == 1)
    out = set()
    for a in axis:
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"Tried to squeeze dim index {a} for tensor with {rank} dimensions. "
                                       "[Op:Squeeze]")
        a %= rank
        if shape[a] not in (1, None):
            raise InvalidArgumentError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {shape[a]} "
                                       "[Op:Squeeze]")
        out.add(a)
    return tuple(sorted(out))


def _squeeze_infer(types, attrs):
    x = types[0]
    drop = squeeze_axes(x.shape, attrs["axis"])
    return TensorType([d for i, d in enumerate(x.shape) if i not in drop], x.dtype)


def _squeeze_kernel(arrays, attrs):
    x = arrays[0]
    return x.reshape([d for i, d in enumerate(x.shape) if i not in squeeze_axes(x.shape, attrs["axis"])])


define("squeeze", ["x"], _squeeze_infer, _squeeze_kernel, {"axis": "i64s"},
       summary="remove dimensions of size 1 (the given axes, or all static ones)", tf_api="squeeze")


# broadcast_to ------------------------------------------------------------------------------------------

def broadcast_to_shape(in_shape, shape):
    """The result shape of broadcasting `in_shape` to `shape` (a dynamic input dim is taken to match)."""
    if len(in_shape) > len(shape):
        raise InvalidArgumentError(f"Rank of input ({len(in_shape)}) must be no greater than rank of output "
                                   f"shape ({len(shape)}). [Op:BroadcastTo]")
    for d in shape:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0 [Op:BroadcastTo]")
    off = len(shape) - len(in_shape)
    for i, d in enumerate(in_shape):
        if d is not None and d != 1 and d != shape[off + i]:
            raise InvalidArgumentError(f"Incompatible shapes: {shape_str(in_shape)} vs. {shape_str(shape)} "
                                       "[Op:BroadcastTo]")
    return tuple(shape)


def _broadcast_to_infer(types, attrs):
    return TensorType(broadcast_to_shape(types[0].shape, attrs["shape"]), types[0].dtype)


define("broadcast_to", ["x"], _broadcast_to_infer, lambda a, at: np.broadcast_to(a[0], at["shape"]).copy(),
       {"shape": "i64s"}, summary="broadcast x (NumPy rules) to a given shape", tf_api="broadcast_to")


# tile --------------------------------------------------------------------------------------------------

def check_multiples(rank, multiples):
    """TF's Tile checks of `multiples` against the input's rank."""
    if len(multiples) != rank:
        raise InvalidArgumentError(f"Expected multiples argument to be a vector of length {rank} but got length "
                                   f"{len(multiples)} [Op:Tile]")
    for i, m in enumerate(multiples):
        if m < 0:
            raise InvalidArgumentError(f"Expected multiples[{i}] >= 0, but got {m} [Op:Tile]")


def _tile_infer(types, attrs):
    x, multiples = types[0], attrs["multiples"]
    check_multiples(x.rank, multiples)
    shape = tuple(None if d is None else d * m for d, m in zip(x.shape, multiples))
    check_size(shape, x.dtype)
    return TensorType(shape, x.dtype)


def _tile_kernel(arrays, attrs):
    check_multiples(arrays[0].ndim, attrs["multiples"])
    return np.tile(arrays[0], attrs["multiples"]) if arrays[0].ndim else arrays[0].copy()


define("tile", ["x"], _tile_infer, _tile_kernel, {"multiples": "i64s"},
       summary="x repeated multiples[i] times along each dim i: out.shape[i] = x.shape[i] * multiples[i]",
       tf_api="tile")


# concat / stack / unstack ------------------------------------------------------------------------------

def concat_type(types, axis):
    """The result type of concatenating `types` along `axis`, with TF's ConcatV2 checks."""
    dtype = rules.same_dtype("ConcatV2", types)
    rank = types[0].rank
    if rank == 0:
        raise InvalidArgumentError("Can't concatenate scalars (use tf.stack instead) [Op:ConcatV2]")
    if not -rank <= axis < rank:
        raise InvalidArgumentError(f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), "
                                   f"but got {axis} [Op:ConcatV2]")
    axis %= rank
    out = list(types[0].shape)
    for i, t in enumerate(types[1:], start=1):
        pair = f"shape[0] = {shape_str(types[0].shape)} vs. shape[{i}] = {shape_str(t.shape)}"
        if t.rank != rank:
            raise InvalidArgumentError(f"ConcatOp : Ranks of all input tensors should match: {pair} [Op:ConcatV2]")
        for d, (a, b) in enumerate(zip(out, t.shape)):
            if d == axis:
                out[d] = None if a is None or b is None else a + b
            elif a is not None and b is not None and a != b:
                raise InvalidArgumentError(f"ConcatOp : Dimension {d} in both shapes must be equal: {pair} "
                                           "[Op:ConcatV2]")
            else:
                out[d] = _merge_dim(a, b)
    return TensorType(out, dtype)


define("concat", ["x", "y"], lambda types, attrs: concat_type(types, attrs["axis"]),
       lambda a, at: np.concatenate(a, at["axis"]), {"axis": "i64"}, tf_name="ConcatV2",
       summary="join two tensors along an existing axis (tfn.concat chains it over a list)", tf_api="concat")


def stack_axis(rank, axis):
    """The non-negative position of the new stacking dim (TF raises ValueError outside [-rank-1, rank])."""
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank - 1}, {rank + 1})")
    return axis % (rank + 1)


def stack_type(types, axis):
    """The result type of stacking `types` (compatible shapes, one dtype) along a new `axis`."""
    dtype = rules.same_dtype("Pack", types)
    first = types[0]
    a = stack_axis(first.rank, axis)
    shape = list(first.shape)
    for i, t in enumerate(types[1:], start=1):
        if t.rank != first.rank or any(x is not None and y is not None and x != y for x, y in zip(shape, t.shape)):
            raise InvalidArgumentError(f"Shapes of all inputs must match: values[0].shape = {shape_str(first.shape)}"
                                       f" != values[{i}].shape = {shape_str(t.shape)} [Op:Pack]")
        shape = [_merge_dim(x, y) for x, y in zip(shape, t.shape)]
    return TensorType(shape[:a] + [len(types)] + shape[a:], dtype)


def _stack_infer(types, attrs):
    if not types:
        raise ValueError("List argument 'values' to 'Pack' Op with length 0 shorter than minimum length 1.")
    return stack_type(types, attrs["axis"])


define("stack", ["*values"], _stack_infer, lambda a, at: np.stack(a, at["axis"]), {"axis": "i64"},
       tf_name="Pack", summary="join tensors of one type along a new axis", tf_api="stack")


def unstack_types(x, num, axis):
    """The result types of unstacking x along `axis` into `num` (None: the static size) tensors."""
    if not -x.rank <= axis < x.rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-x.rank}, {x.rank})")
    axis %= x.rank
    size = x.shape[axis]
    if num is None:
        if size is None:
            raise ValueError(f"Cannot infer argument `num` from shape {shape_str(x.shape)}")
        num = size
    elif num < 0:
        raise ValueError(f"Value for attr 'num' of {num} must be at least minimum 0")
    elif size is not None and size != num:
        raise InvalidArgumentError(f"Input shape axis {axis} must equal {num}, got shape {shape_str(x.shape)} "
                                   "[Op:Unpack]")
    return [TensorType(x.shape[:axis] + x.shape[axis + 1:], x.dtype)] * num


def _unstack_kernel(arrays, attrs):
    x = arrays[0]
    return [np.take(x, i, axis=attrs["axis"]) for i in range(x.shape[attrs["axis"]])]


define("unstack", ["x"], lambda types, attrs: unstack_types(types[0], attrs["num"], attrs["axis"]),
       _unstack_kernel, {"num": "i64", "axis": "i64"}, results="*", tf_name="Unpack",
       summary="split x along `axis` into tensors of rank one less", tf_api="unstack")
