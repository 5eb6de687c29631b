"""tfn.reshape to a shape known only when the function runs (`tfn.reshape(x, [n, -1])` with a tensor `n`).

The rank must be known while tracing (a list of sizes, or a 1-D shape tensor of known length); each size may be
a Python int or a scalar tensor, one may be -1 (also at run time). The result gathers the row-major elements of
`x` with an index tensor made by broadcasting one tfn.range per dim; a shape whose element count is not `x`'s
raises InvalidArgumentError when the function runs, in TF's words (a tfn.check on the result).
"""
import numpy as np

from tfn import dtypes
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor, known
from tfn.dialects.ops_shape import shape_str
from tfn.ops.math_ops import cast, where
from tfn.ops.shape_ops import size
from tfn.ops.slicing_ops import gather


def is_runtime_shape(shape):
    """Whether a shape argument holds a symbolic tensor (a size known only when the function runs)."""
    shape = known(shape)
    return isinstance(shape, SymbolicTensor) or (isinstance(shape, (list, tuple)) and
                                                 any(isinstance(known(d), SymbolicTensor) for d in shape))


def _dims(shape):
    """The sizes as Python ints or int64 scalar tensors (TF's shapes are int64: an int32 size would wrap)."""
    shape = known(shape)
    if isinstance(shape, SymbolicTensor):
        if shape.ndim != 1 or shape._shape[0] is None:
            raise ValueError(f"Reshape: a run-time shape must be a 1-D tensor of known length, got {shape!r}")
        if not shape.dtype.is_integer:
            raise TypeError(f"Reshape: the shape must hold integers, got {shape!r}")
        return [cast(shape[i], dtypes.int64) for i in np.arange(shape._shape[0]).tolist()]
    dims = []
    for d in shape:
        d = known(d)
        if isinstance(d, TensorBase):
            if d.ndim != 0 or not d.dtype.is_integer:
                raise TypeError(f"Reshape: each size must be an int or a scalar int tensor, got {d!r}")
            dims.append(cast(d, dtypes.int64))
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            dims.append(int(d))
        else:
            raise TypeError(f"Reshape: each size must be an int or a scalar int tensor, got {d!r}")
    if sum(1 for d in dims if isinstance(d, int) and d == -1) > 1:
        raise ValueError(f"Reshape: only one dimension may be -1, got {shape!r}")
    return dims


def _check(x, ok, message, *details):
    """`x`, once the scalar bool `ok` holds when the function runs; else InvalidArgumentError with `message`, the
    run-time values of `details` put in ({0}, {1}, ...)."""
    details = [convert_to_tensor(cast(d, dtypes.int64) if isinstance(d, TensorBase) else np.int64(d), dtypes.int64)
               for d in details]
    return apply("check", [x, convert_to_tensor(ok, dtypes.bool), *details], {"message": message})


def _too_many(sizes):
    """Whether the product of `sizes` (the non-negative ones) passes int64 when the function runs: counted in
    float64, which cannot wrap as the int64 product would."""
    total = convert_to_tensor(1.0, dtypes.float64)
    for d in sizes:
        if isinstance(d, TensorBase):
            total = total * cast(where(d < 0, 1, d), dtypes.float64)
        elif d > 0:
            total = total * float(d)
    return total >= 2.0 ** 63


def _safe(dims, ok, empty=0):
    """The run-time sizes, `empty` where the shape failed its checks: the index built from them stays small (the
    checks report the shape)."""
    return [where(ok, d, empty) if isinstance(d, TensorBase) else d for d in dims]


def _shape_text(dims):
    """`[{0},{1},...]`: a message's placeholders for the sizes of a run-time shape."""
    return "[" + ",".join(f"{{{i}}}" for i in range(len(dims))) + "]"


def _product(values):
    out = 1
    for v in values:
        out = v * out if isinstance(v, TensorBase) else out * v
    return out


def reshape_runtime(x, shape):
    """`x` reshaped to `shape`, a shape with sizes computed at run time."""
    dims = given = _dims(shape)
    count = size(x, dtypes.int64)
    known_sizes = [where(d < 0, 1, d) if isinstance(d, TensorBase) else (1 if d == -1 else d) for d in dims]
    overflow = _too_many(known_sizes)
    known = convert_to_tensor(_product(known_sizes), dtypes.int64)
    inferred = count // where(known == 0, 1, known)  # (a zero size with a -1: the check below reports it)
    dims = [where(d < 0, inferred, d) if isinstance(d, TensorBase) else (inferred if d == -1 else d) for d in dims]
    total = convert_to_tensor(_product(dims), dtypes.int64)
    fits = (total == count) & ~overflow
    index = convert_to_tensor(0, dtypes.int64)
    for axis, d in enumerate(_safe(dims, fits)):
        line = convert_to_tensor(np.arange(d, dtype=np.int64)) if isinstance(d, int) else \
            apply("range", [convert_to_tensor(0, dtypes.int64), d, convert_to_tensor(1, dtypes.int64)])
        along = [1] * len(dims)
        along[axis] = -1
        index = index + apply("reshape", [line * _product(dims[axis + 1:])], {"shape": tuple(along)})
    index = where(fits, index, 0)  # (every index in range: the checks below report a bad shape)
    out = gather(apply("reshape", [x], {"shape": (-1,)}), index)
    # TF's two messages: with a -1 among the sizes (known now, or only when the function runs), and without
    message = "Input to reshape is a tensor with {0} values, but the requested shape "
    inferring = convert_to_tensor(-1 in [d for d in given if isinstance(d, int)])
    for d in given:
        if isinstance(d, TensorBase):
            inferring = inferring | (d < 0)
    out = _check(out, ~overflow, f"Reshape: the requested shape {_shape_text(given)} has more elements than int64 "
                 "can count [Op:Reshape]", *given)
    out = _check(out, ~inferring | (known != 0), "Reshape cannot infer the missing input size for an empty tensor "
                 "unless all specified input sizes are non-zero [Op:Reshape]")
    out = _check(out, fits | inferring | overflow, message + "has {1} [Op:Reshape]", count, total)
    return _check(out, fits | ~inferring | overflow, message + "requires a multiple of {1} [Op:Reshape]", count,
                  _product(known_sizes))


def broadcast_to_runtime(x, shape):
    """`x` broadcast to `shape`, a shape with sizes computed at run time (`x`'s own shape must be static).

    Each output element gathers the element of `x` it repeats; where a size is neither 1 nor `x`'s dim there, the
    result's check reports it when the function runs, in TF's words."""
    if None in x._shape:
        raise TypeError(f"BroadcastTo: to broadcast to a run-time shape, the input's shape must be known when the "
                        f"function is traced, got {x.shape}")
    dims = _dims(shape)
    if len(dims) < x.ndim:
        raise ValueError(f"BroadcastTo: the shape {shape!r} has fewer dims than the input's {x.shape}")
    src = [1] * (len(dims) - x.ndim) + list(x._shape)
    overflow = _too_many(dims)
    fits = ~overflow
    for d, s in zip(dims, src):
        if isinstance(d, int) and d != s and s != 1:
            raise ValueError(f"BroadcastTo: cannot broadcast the input's shape {x.shape} to {shape!r}")
        if isinstance(d, TensorBase):
            fits = fits & ((d == s) | (s == 1))
    index = convert_to_tensor(0, dtypes.int64)
    for axis, (d, s) in enumerate(zip(_safe(dims, fits), src)):
        if s != 1:
            line = convert_to_tensor(np.arange(s, dtype=np.int64)) * int(np.prod(src[axis + 1:], dtype=np.int64))
        else:
            size = convert_to_tensor(d, dtypes.int64)
            line = apply("range", [convert_to_tensor(0, dtypes.int64), size, convert_to_tensor(1, dtypes.int64)]) * 0
        along = [1] * len(dims)
        along[axis] = -1
        index = index + apply("reshape", [line], {"shape": tuple(along)})
    index = where(fits, index, 0)  # (every index in range: the check below reports a bad shape)
    out = gather(apply("reshape", [x], {"shape": (-1,)}), index)
    out = _check(out, ~overflow, f"BroadcastTo: the shape {_shape_text(dims)} has more elements than int64 can "
                 "count [Op:BroadcastTo]", *dims)
    message = (f"Unable to broadcast tensor of shape {shape_str(x._shape)} to tensor of shape {_shape_text(dims)} "
               "[Op:BroadcastTo]")
    return _check(out, fits | overflow, message, *dims)
