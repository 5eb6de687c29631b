"""`tfn.add_n`, `tfn.linspace`, `tfn.meshgrid` and `tfn.sequence_mask`, composed of tfn ops.

linspace's `num` must be known when a function is traced; sequence_mask's `maxlen` may be a run-time tensor (or
None: the largest length, read when the function runs)."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.dispatch import tensors
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.dialects import rules
from tfn.dialects.types import TensorType, check_memory
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops
from tfn.ops.composite import norm_axis, require_dtype, user_error


@export("add_n", "math.add_n")
def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one dtype and one shape (no broadcasting, as TF)."""
    if isinstance(inputs, TensorBase) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise user_error(ValueError("inputs must be a list of at least one Tensor with the same dtype and shape"))
    ts = [convert_to_tensor(t) for t in inputs] if all(isinstance(t, TensorBase) for t in inputs) else \
        tensors(*inputs)
    for t in ts:
        if t.dtype is not ts[0].dtype or len(t._shape) != len(ts[0]._shape) or any(
                a is not None and b is not None and a != b for a, b in zip(t._shape, ts[0]._shape)):
            raise user_error(ValueError(f"inputs must be a list of at least one Tensor with the same dtype and "
                                        f"shape, got {ts[0].dtype.name}{list(ts[0].shape)} and "
                                        f"{t.dtype.name}{list(t.shape)}"))
    require_dtype("AddN", ts[0], rules.NUMERIC)
    if len(ts) == 1:
        return math_ops.identity(ts[0])
    while len(ts) > 1:  # a balanced tree of additions
        ts = [ts[i] + ts[i + 1] for i in range(0, len(ts) - 1, 2)] + ts[len(ts) - len(ts) % 2:]
    return ts[0]


def _static_count(value, what, op):
    value = known(value)
    if isinstance(value, SymbolicTensor):
        raise user_error(TypeError(f"{op}: `{what}` must be known when the function is traced, got {value!r}"))
    if isinstance(value, Tensor):
        if value.ndim != 0 or not value.dtype.is_integer:
            raise user_error(TypeError(f"{op}: `{what}` must be a scalar int, got {value!r}"))
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise user_error(TypeError(f"{op}: `{what}` must be an int, got {value!r}"))
    return int(value)


@export("linspace")
def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from start to stop (both included) along a new `axis`; start and stop may be
    tensors that broadcast against each other (float16/32/64)."""
    start = convert_to_tensor(start)
    stop = convert_to_tensor(stop, start.dtype) if not isinstance(stop, TensorBase) else stop
    require_dtype("LinSpace", start, rules.FLOATS)
    if stop.dtype is not start.dtype:
        raise user_error(TypeError(f"linspace: stop has dtype {stop.dtype.name}, start {start.dtype.name}"))
    n = _static_count(num, "num", "LinSpace")
    if n < 0:
        raise user_error(ValueError(f"linspace: num must be >= 0, got {n}"))
    zero = start * 0 + stop * 0  # the broadcast shape of start and stop
    start, stop = start + zero, stop + zero
    at = norm_axis("LinSpace", int(axis), zero.ndim + 1)
    first, last = array_ops.expand_dims(start, at), array_ops.expand_dims(stop, at)
    steps = max(n - 1, 1)
    delta = (last - first) / float(steps)
    along = [1] * (zero.ndim + 1)
    along[at] = -1
    pieces = [first]
    if n > 2:
        check_memory(TensorType((n - 2,), dtypes.int64))  # (the positions, before NumPy allocates them)
        mid = array_ops.reshape(convert_to_tensor(np.arange(1, n - 1), start.dtype), along)
        pieces.append(first + delta * mid)
    if n > 1:
        pieces.append(last)
    out = array_ops.concat(pieces, at)
    return out if n else out[(slice(None),) * at + (slice(0, 0),)]


@export("meshgrid")
def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors: N grids of shape (len(x0), ..., len(xN-1)), with the first two dims
    swapped for indexing="xy" (the default, Cartesian) and not for "ij" (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise user_error(TypeError(f"meshgrid: unexpected keyword argument {next(iter(kwargs))!r}"))
    if indexing not in ("xy", "ij"):
        raise user_error(ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}"))
    if not args:
        return []
    xs = [convert_to_tensor(a) for a in args]
    rank = len(xs)
    order = list(range(rank))
    if indexing == "xy" and rank > 1:
        order[0], order[1] = 1, 0  # x varies along dim 1, y along dim 0
    lines = []
    for i, x in enumerate(xs):
        along = [1] * rank
        along[order[i]] = -1
        lines.append(array_ops.reshape(x, along))
    sizes = [None] * rank
    for i, x in enumerate(xs):
        sizes[order[i]] = int(np.prod(x._shape)) if None not in x._shape else None
    if None not in sizes:
        return [array_ops.broadcast_to(line, sizes) for line in lines]
    out = []
    for i, line in enumerate(lines):  # sizes known when the function runs: broadcast against the other lines
        grid = line
        for j, other in enumerate(lines):
            if j != i:
                grid = grid + math_ops.cast(fill_ops.zeros_like(other), line.dtype) if not line.dtype.is_bool \
                    else math_ops.logical_or(grid, math_ops.cast(fill_ops.zeros_like(other), line.dtype))
        out.append(grid)
    return out


@export("sequence_mask")
def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[i..., j] = j < lengths[i...]: a mask of shape lengths.shape + [maxlen] (maxlen None: the largest
    length), cast to `dtype`."""
    lengths = convert_to_tensor(lengths)
    if not lengths.dtype.is_integer:
        raise user_error(TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}"))
    if maxlen is None:
        limit = math_ops.maximum(reduction_ops.reduce_max(lengths), 0)
    else:
        limit = convert_to_tensor(maxlen)
        if limit.ndim != 0 or not limit.dtype.is_integer:
            raise user_error(ValueError(f"sequence_mask: maxlen must be a scalar int, got {maxlen!r}"))
        limit = math_ops.cast(limit, lengths.dtype)
    positions = fill_ops.range(limit)
    mask = math_ops.less(positions, array_ops.expand_dims(lengths, -1))
    dtype = dtypes.as_dtype(dtype)
    return mask if dtype.is_bool else math_ops.cast(mask, dtype)
