"""Indexing ops: gather (GatherV2) and strided_slice (Python's `x[...]`)."""
import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType

INDEX_DTYPES = (dtypes.int16, dtypes.int32, dtypes.int64)


# gather ------------------------------------------------------------------------------------------------

def gather_axes(params, indices, axis, batch_dims):
    """(axis, batch_dims) normalised to non-negative ints, with GatherV2's checks."""
    if params.rank == 0:
        raise InvalidArgumentError("Shape must be at least rank 1 but is rank 0 for 'GatherV2' [Op:GatherV2]")
    if not -params.rank <= axis < params.rank:
        raise InvalidArgumentError(f"Expected axis in the range [{-params.rank}, {params.rank}), but got {axis} "
                                   "[Op:GatherV2]")
    axis %= params.rank
    if not -indices.rank <= batch_dims <= indices.rank:
        raise InvalidArgumentError(f"Expected batch_dims in the range [{-indices.rank}, {indices.rank}], but got "
                                   f"{batch_dims} [Op:GatherV2]")
    batch_dims = batch_dims % indices.rank if batch_dims < 0 else batch_dims
    if batch_dims > axis:
        raise InvalidArgumentError(f"batch_dims ({batch_dims}) must be less than or equal to axis ({axis}). "
                                   "[Op:GatherV2]")
    for i in range(batch_dims):
        p, q = params.shape[i], indices.shape[i]
        if p is not None and q is not None and p != q:
            raise InvalidArgumentError(f"params.shape[{i}]: {p} should be equal to indices.shape[{i}]: {q} "
                                       "[Op:GatherV2]")
    return axis, batch_dims


def _gather_infer(types, attrs):
    params, indices = types
    if indices.dtype not in INDEX_DTYPES:
        raise InvalidArgumentError(f"Value for attr 'Tindices' of {indices.dtype.name} is not in the list of "
                                   "allowed values: int16, int32, int64 [Op:GatherV2]")
    axis, b = gather_axes(params, indices, attrs["axis"], attrs["batch_dims"])
    batch = [p if p is not None else q for p, q in zip(params.shape[:b], indices.shape[:b])]
    shape = batch + list(params.shape[b:axis]) + list(indices.shape[b:]) + list(params.shape[axis + 1:])
    return TensorType(shape, params.dtype)


def index_position(shape, flat):
    """TF's SliceDebugString: `[i,j]` for a flat position in a shape (`` for a scalar)."""
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _gather_kernel(arrays, attrs):
    params, indices = arrays
    axis, b = gather_axes(TensorType(params.shape, params.dtype), TensorType(indices.shape, indices.dtype),
                          attrs["axis"], attrs["batch_dims"])
    n = params.shape[axis]
    bad = np.flatnonzero((indices < 0) | (indices >= n))
    if bad.size:
        k = int(bad[0])
        raise InvalidArgumentError(f"indices{index_position(indices.shape, k)} = {indices.reshape(-1)[k]} is not "
                                   f"in [0, {n}) [Op:GatherV2]")
    if b == 0:
        return np.take(params, indices, axis=axis)
    out_shape = params.shape[:axis] + indices.shape[b:] + params.shape[axis + 1:]
    p = params.reshape((-1,) + params.shape[b:])
    q = indices.reshape((-1,) + indices.shape[b:])
    parts = [np.take(p[i], q[i], axis=axis - b) for i in range(p.shape[0])]
    return np.stack(parts).reshape(out_shape) if parts else np.empty(out_shape, params.dtype)


define("gather", ["params", "indices"], _gather_infer, _gather_kernel, {"axis": "i64", "batch_dims": "i64"},
       tf_name="GatherV2", summary="slices of params along `axis` at `indices` (each in [0, params.shape[axis]))",
       tf_api="gather")


# strided_slice -----------------------------------------------------------------------------------------

SLICE_ATTRS = {"begin": "i64s", "end": "i64s", "strides": "i64s", "begin_mask": "i64s", "end_mask": "i64s",
               "shrink_axis": "i64s", "new_axis": "i64s", "dynamic_begin": "i64s", "dynamic_end": "i64s"}


def _check_dims(name, dims, rank):
    for d in dims:
        if not 0 <= d < rank:
            raise InvalidArgumentError(f"strided_slice: {name} dim {d} is not in [0, {rank}) [Op:StridedSlice]")


def _check_slice_attrs(rank, values, attrs):
    for name in ("begin", "end", "strides"):
        if len(attrs[name]) != rank:
            raise InvalidArgumentError(f"strided_slice: `{name}` has {len(attrs[name])} entries for an input of "
                                       f"rank {rank} [Op:StridedSlice]")
    for name in ("begin_mask", "end_mask", "shrink_axis", "dynamic_begin", "dynamic_end"):
        _check_dims(name, attrs[name], rank)
    for d, s in enumerate(attrs["strides"]):
        if s == 0:
            raise InvalidArgumentError(f"strides[{d}] must be non-zero [Op:StridedSlice]")
        if d in attrs["shrink_axis"] and s != 1:
            raise InvalidArgumentError(f"strided_slice: shrunk dim {d} needs stride 1 [Op:StridedSlice]")
    want = len(attrs["dynamic_begin"]) + len(attrs["dynamic_end"])
    if len(values) != want:
        raise InvalidArgumentError(f"strided_slice: expected {want} dynamic bounds, got {len(values)} "
                                   "[Op:StridedSlice]")
    for t in values:
        if t.rank != 0 or t.dtype is not dtypes.int64:
            raise InvalidArgumentError(f"strided_slice: dynamic bounds must be int64 scalars, got "
                                       f"{t.mlir_str()} [Op:StridedSlice]")


def shrink_index(index, dim, size):
    """A Python/NumPy-style index into a dim of `size` as a non-negative int, or TF's error."""
    if not -size <= index < size:
        raise InvalidArgumentError(f"slice index {index} of dimension {dim} out of bounds. [Op:StridedSlice]")
    return index % size


def _strided_slice_infer(types, attrs):
    x, values = types[0], types[1:]
    _check_slice_attrs(x.rank, values, attrs)
    dynamic = set(attrs["dynamic_begin"]) | set(attrs["dynamic_end"])
    shape = []
    for d, n in enumerate(x.shape):
        if d in attrs["shrink_axis"]:
            if n is not None and d not in dynamic:
                shrink_index(attrs["begin"][d], d, n)
            continue
        if n is None or d in dynamic:
            shape.append(None)
            continue
        b = None if d in attrs["begin_mask"] else attrs["begin"][d]
        e = None if d in attrs["end_mask"] else attrs["end"][d]
        shape.append(len(range(*slice(b, e, attrs["strides"][d]).indices(n))))
    out_rank = len(shape) + len(attrs["new_axis"])
    _check_dims("new_axis", attrs["new_axis"], out_rank)
    for p in sorted(set(attrs["new_axis"])):
        shape.insert(p, 1)
    if len(shape) != out_rank:
        raise InvalidArgumentError("strided_slice: `new_axis` repeats a position [Op:StridedSlice]")
    return TensorType(shape, x.dtype)


def _strided_slice_kernel(arrays, attrs):
    x, values = arrays[0], [int(v) for v in arrays[1:]]
    begin, end = list(attrs["begin"]), list(attrs["end"])
    for d in attrs["dynamic_begin"]:
        begin[d] = values.pop(0)
    for d in attrs["dynamic_end"]:
        end[d] = values.pop(0)
    key = []
    for d, n in enumerate(x.shape):
        if d in attrs["shrink_axis"]:
            key.append(shrink_index(begin[d], d, n))
            continue
        b = None if d in attrs["begin_mask"] else begin[d]
        e = None if d in attrs["end_mask"] else end[d]
        key.append(slice(b, e, attrs["strides"][d]))
    out = np.asarray(x[tuple(key)])
    for p in sorted(attrs["new_axis"]):
        out = np.expand_dims(out, p)
    return out.copy()


define("strided_slice", ["x", "*values"], _strided_slice_infer, _strided_slice_kernel, SLICE_ATTRS,
       tf_name="StridedSlice",
       summary="x[...] per input dim: begin:end:strides (Python slice rules; a dim in begin_mask/end_mask has "
               "that bound omitted), or an index for dims in shrink_axis (dropped); new_axis are the output "
               "positions of inserted unit dims; dims in dynamic_begin/dynamic_end take that bound from "
               "`values` (int64 scalars: the begins in order, then the ends)", tf_api="Tensor.__getitem__")
