"""Tensor-making functions: fill, zeros, ones, zeros_like, ones_like, range, one_hot, eye, pad.

`depth`, eye's sizes and pad's `paddings` must be known when a function is traced (Python ints, lists,
TensorShape or eager tensors). fill/zeros/ones also take sizes known only at run time (symbolic dims, or a 1-D
shape tensor of known length): a static shape is one tfn.fill, a run-time one costs a few ops more.
"""
import numpy as np

from tfn import dtypes
from tfn.core import graph as graph_mod
from tfn.core.api import export, op_api
from tfn.core.dispatch import _apply_symbolic, apply
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops, optable
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, math_ops
from tfn.ops.math_ops import cast


def _static_shape(shape, op):
    """A shape argument as a tuple of Python ints, known at trace time."""
    shape = known(shape)
    if isinstance(shape, SymbolicTensor) or (isinstance(shape, (list, tuple)) and
                                             any(isinstance(d, SymbolicTensor) for d in shape)):
        raise TypeError(f"{op}: the shape must be known when the function is traced, got {shape!r}; use "
                        "tfn.zeros_like/tfn.ones_like/tfn.fill with a static shape instead")
    if isinstance(shape, TensorShape):
        if shape.rank is None or None in shape.as_list():
            raise ValueError(f"{op}: the shape {shape} is not fully defined")
        return tuple(shape.as_list())
    arr = np.asarray(shape.numpy() if isinstance(shape, Tensor) else
                     [int(d) if isinstance(d, Tensor) else d for d in shape] if isinstance(shape, (list, tuple))
                     else shape)
    if arr.ndim > 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"{op}: the shape must be an int or a list of ints, got {shape!r}")
    return tuple(int(d) for d in arr.reshape(-1))


def _make(name, inputs, attrs):
    """Apply a tensor-making op; while tracing it is emitted (not folded to a possibly huge constant)."""
    g = graph_mod.current()
    if g is not None:
        return _apply_symbolic(g, optable.OPS[name], inputs, attrs)
    return apply(name, inputs, attrs)


@op_api(ops.fill, exports=("fill",))
def fill(dims, value, name=None):
    """A tensor of shape `dims` with every element the scalar `value` (dtype from value, as TF)."""
    if _runtime_shape(dims):
        return _fill_runtime(dims, convert_to_tensor(value))
    return _make("fill", [convert_to_tensor(value)], {"shape": _static_shape(dims, "Fill")})


def _runtime_shape(shape):
    """Whether a shape argument holds a symbolic tensor (a size known only when the function runs)."""
    shape = known(shape)
    return isinstance(shape, SymbolicTensor) or (isinstance(shape, (list, tuple)) and
                                                 any(isinstance(d, SymbolicTensor) for d in shape))


def _fill_runtime(shape, value):
    """fill with run-time sizes: fill_like of a tensor of that shape, made by broadcasting one tfn.range per
    dim against the others (the rank must be known while tracing)."""
    if isinstance(shape, SymbolicTensor):
        if shape.ndim != 1 or shape._shape[0] is None:
            raise ValueError(f"Fill: a run-time shape must be a 1-D tensor of known length, got {shape!r}")
        dims = [shape[i] for i in np.arange(shape._shape[0]).tolist()]  # (`range` here is tfn.range)
    else:
        dims = list(shape)
    for d in dims:  # (a float size made a float range: tfn.fill([2.0], v) gave two elements)
        if isinstance(d, TensorBase) and (d.ndim != 0 or not d.dtype.is_integer):
            raise TypeError(f"Fill: the shape must be an int or a list of ints, got {shape!r}")
    probe = None
    for axis, d in enumerate(dims):
        n = convert_to_tensor(d) if isinstance(d, TensorBase) else convert_to_tensor(int(d), dtypes.int32)
        along = [1] * len(dims)
        along[axis] = -1
        line = array_ops.reshape(math_ops.less(range(n), 0), along)  # all False, sized n along `axis`
        probe = line if probe is None else math_ops.logical_or(probe, line)
    return apply("fill_like", [probe, value])


def _scalar(v, dtype):
    return convert_to_tensor(b"" if dtype.is_string and v == 0 else v, dtype)


@export("zeros")
def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` filled with 0 (False, b"") of `dtype`."""
    dtype = dtypes.as_dtype(dtype)
    if _runtime_shape(shape):
        return _fill_runtime(shape, _scalar(0, dtype))
    return _make("fill", [_scalar(0, dtype)], {"shape": _static_shape(shape, "Fill")})


@export("ones")
def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` filled with 1 (True) of `dtype`."""
    dtype = dtypes.as_dtype(dtype)
    if _runtime_shape(shape):
        return _fill_runtime(shape, _scalar(1, dtype))
    return _make("fill", [_scalar(1, dtype)], {"shape": _static_shape(shape, "Fill")})


@op_api(ops.fill_like, exports=("zeros_like",))
def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of input's shape (dynamic dims included) filled with 0, of `dtype` (default input's)."""
    x = convert_to_tensor(input)
    return apply("fill_like", [x, _scalar(0, dtypes.as_dtype(dtype or x.dtype))])


@export("ones_like")
def ones_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of input's shape (dynamic dims included) filled with 1, of `dtype` (default input's)."""
    x = convert_to_tensor(input)
    return apply("fill_like", [x, _scalar(1, dtypes.as_dtype(dtype or x.dtype))])


_RANGE_HIERARCHY = (dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64)


@op_api(ops.range, exports=("range",))
def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """[start, start + delta, ...) below limit (above it for delta < 0), as TF's tf.range.

    `range(n)` counts from 0. Without `dtype` Python ints give int32 and any float gives float32 (the widest
    of the arguments' dtypes). With Python numbers the result is a constant; tensor arguments give a Range op
    whose length is known only when it runs.
    """
    if limit is None:
        start, limit = 0, start
    args = [start, limit, delta]
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        ts = [cast(a, dtype) if isinstance(a, TensorBase) else convert_to_tensor(a, dtype) for a in args]
    else:
        ts = [convert_to_tensor(a) for a in args]
        order = [_RANGE_HIERARCHY.index(t.dtype) if t.dtype in _RANGE_HIERARCHY else -1 for t in ts]
        dtype = ts[int(np.argmax(order))].dtype
        ts = [cast(t, dtype) for t in ts]
    return apply("range", ts)


@op_api(ops.one_hot, exports=("one_hot",))
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: on_value where the new `axis` (default last) position equals the index, off_value
    elsewhere (out-of-range indices give an all-off row). dtype comes from on/off_value, else float32."""
    indices = convert_to_tensor(indices)
    depth = known(depth)
    if not isinstance(depth, SymbolicTensor):
        depth = int(depth.numpy()) if isinstance(depth, Tensor) else int(depth)
    if dtype is None:
        ref = on_value if on_value is not None else off_value
        dtype = convert_to_tensor(ref).dtype if ref is not None else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = _one_hot_value(1 if on_value is None else on_value, dtype, "on_value")
    off = _one_hot_value(0 if off_value is None else off_value, dtype, "off_value")
    if isinstance(depth, SymbolicTensor):  # known when the function runs: compare with a range along `axis`
        if depth.ndim != 0 or not depth.dtype.is_integer:
            raise TypeError(f"OneHot: `depth` must be a scalar int, got {depth!r}")
        at = indices.ndim if axis is None or int(axis) == -1 else int(axis)
        along = [1] * (indices.ndim + 1)
        along[at] = -1
        depth = cast(depth, dtypes.int64)  # (int32 indices' dtype would wrap a depth past 2**31 - 1)
        depth = apply(ops.check, [depth, math_ops.greater_equal(depth, _scalar(0, dtypes.int64)), depth],
                      {"message": "depth must be non-negative, got: {0} [Op:OneHot]"})
        positions = array_ops.reshape(range(depth), along)
        hot = math_ops.equal(array_ops.expand_dims(cast(indices, dtypes.int64), at), positions)
        return math_ops.where(hot, on, off)
    return apply("one_hot", [indices, on, off], {"depth": depth, "axis": -1 if axis is None else int(axis)})


def _one_hot_value(value, dtype, what):
    if isinstance(value, TensorBase) and value.dtype is not dtype:
        raise TypeError(f"dtype {value.dtype.name} of {what} does not match dtype parameter {dtype.name}")
    return convert_to_tensor(value, dtype)


@op_api(ops.eye, exports=("eye", "linalg.eye"))
def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """Identity matrices `[*batch_shape, num_rows, num_columns]` (num_columns defaults to num_rows)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_string:
        raise TypeError("Eye: a string identity matrix is not defined; use a numeric or bool dtype")
    if _runtime_shape([num_rows, num_columns]):  # sizes known when the function runs: compare two ranges
        rows = convert_to_tensor(num_rows)
        cols = rows if num_columns is None else convert_to_tensor(num_columns)
        diagonal = math_ops.equal(array_ops.reshape(range(rows), [-1, 1]), array_ops.reshape(range(cols), [1, -1]))
        batch = [] if batch_shape is None else list(_static_shape(batch_shape, "Eye"))
        if batch:
            no = _fill_runtime(batch + [rows, cols], convert_to_tensor(False))
            diagonal = math_ops.logical_or(no, diagonal)
        return cast(diagonal, dtype)
    rows = _static_shape([num_rows], "Eye")[0]
    cols = rows if num_columns is None else _static_shape([num_columns], "Eye")[0]
    batch = () if batch_shape is None else _static_shape(batch_shape, "Eye")
    return _make("eye", [], {"shape": batch + (rows, cols), "dtype": dtype})


_PAD_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


@op_api(ops.pad, exports=("pad",))
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """`tensor` padded by `paddings` ([rank, 2]: before and after each dim): with `constant_values`, or by
    mirroring its edges (REFLECT leaves the edge out, SYMMETRIC repeats it; their dims must be static)."""
    x = convert_to_tensor(tensor)
    pairs = _paddings(paddings, x.ndim)
    mode = str(mode).upper()
    if mode not in _PAD_MODES:
        raise ValueError(f"Value of argument `mode` expected to be one of \"CONSTANT\", \"REFLECT\", or "
                         f"\"SYMMETRIC\". Received `mode` = {mode}")
    if mode == "CONSTANT":
        value = convert_to_tensor(constant_values, x.dtype)
        return apply("pad", [x, value], {"paddings": [p for pair in pairs for p in pair]})
    for axis, (before, after) in enumerate(pairs):
        x = _mirror(x, axis, before, after, mode == "REFLECT")
    return x


def _paddings(paddings, rank):
    """paddings as [(before, after)] per dim, known when the function is traced."""
    paddings = known(paddings)
    if isinstance(paddings, SymbolicTensor):
        raise TypeError(f"Pad: `paddings` must be known when the function is traced, got {paddings!r}")
    arr = np.asarray(paddings.numpy() if isinstance(paddings, Tensor) else paddings)
    if arr.dtype.kind not in "iu" or arr.shape != (rank, 2):
        raise ValueError(f"Pad: paddings must be an int tensor of shape [{rank}, 2] (the input's rank), got "
                         f"{paddings!r}")
    return [(int(a), int(b)) for a, b in arr]


def _mirror(x, axis, before, after, reflect):
    """x with `before`/`after` mirrored slices of its own edges along `axis` (MirrorPad)."""
    if before == 0 and after == 0:
        return x
    n = x.shape[axis]
    if n is None:
        raise ValueError(f"MirrorPad: dimension {axis} must be known when the function is traced")
    edge = 1 if reflect else 0
    if before > n - edge or after > n - edge:
        raise InvalidArgumentError(f"paddings must be no greater than the dimension size: {before}, {after} greater "
                                   f"than {n - edge} [Op:MirrorPad]")
    lead = (slice(None),) * axis
    pieces = []
    if before:
        pieces.append(x[lead + (slice(before - 1 + edge, None if edge - 1 < 0 else edge - 1, -1),)])
    pieces.append(x)
    if after:
        stop = n - 1 - edge - after
        pieces.append(x[lead + (slice(n - 1 - edge, None if stop < 0 else stop, -1),)])
    return array_ops.concat(pieces, axis)
