"""Tensor-making functions: fill, zeros, ones, zeros_like, ones_like, range, one_hot.

Shapes (`dims`, `shape`) and `depth` must be known when a function is traced (Python ints, lists, TensorShape
or eager tensors); use zeros_like/ones_like for the shape of a tensor with dynamic dims.
"""
import numpy as np

from tfn import dtypes
from tfn.core import graph as graph_mod
from tfn.core.api import export, op_api
from tfn.core.dispatch import _apply_symbolic, apply
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops, optable
from tfn.ops.math_ops import cast


def _static_shape(shape, op):
    """A shape argument as a tuple of Python ints, known at trace time."""
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
    return _make("fill", [convert_to_tensor(value)], {"shape": _static_shape(dims, "Fill")})


def _scalar(v, dtype):
    return convert_to_tensor(b"" if dtype.is_string and v == 0 else v, dtype)


@export("zeros")
def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` filled with 0 (False, b"") of `dtype`."""
    dtype = dtypes.as_dtype(dtype)
    return _make("fill", [_scalar(0, dtype)], {"shape": _static_shape(shape, "Fill")})


@export("ones")
def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of `shape` filled with 1 (True) of `dtype`."""
    dtype = dtypes.as_dtype(dtype)
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
    if isinstance(depth, SymbolicTensor):
        raise TypeError(f"OneHot: `depth` must be known when the function is traced, got {depth!r}")
    depth = int(depth.numpy()) if isinstance(depth, Tensor) else int(depth)
    if dtype is None:
        ref = on_value if on_value is not None else off_value
        dtype = convert_to_tensor(ref).dtype if ref is not None else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = _one_hot_value(1 if on_value is None else on_value, dtype, "on_value")
    off = _one_hot_value(0 if off_value is None else off_value, dtype, "off_value")
    return apply("one_hot", [indices, on, off], {"depth": depth, "axis": -1 if axis is None else int(axis)})


def _one_hot_value(value, dtype, what):
    if isinstance(value, TensorBase) and value.dtype is not dtype:
        raise TypeError(f"dtype {value.dtype.name} of {what} does not match dtype parameter {dtype.name}")
    return convert_to_tensor(value, dtype)
