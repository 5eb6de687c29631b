"""Reductions over axes (sum, mean, prod, max, min, any, all) and argmax/argmin."""
import numpy as np

from tfn.dialects import dtypes, rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define


def extreme(dtype, lowest):
    """The lowest (or highest) value of a dtype: -inf/+inf for floats, the integer bounds, False/True for bool."""
    if dtype.is_floating:
        return -np.inf if lowest else np.inf
    if dtype.is_bool:
        return 0 if lowest else 1
    info = np.iinfo(dtype.np)
    return int(info.min if lowest else info.max)


def check_axes(op, axes, rank):
    """The `axis` attribute is sorted, unique and within [0, rank)."""
    axes = tuple(axes)
    for a in axes:
        if not 0 <= a < rank:
            raise InvalidArgumentError(f"Invalid reduction dimension ({a} for input with {rank} dimension(s) "
                                       f"[Op:{op}]")
    if list(axes) != sorted(set(axes)):
        raise ValueError(f"axis {list(axes)} must be sorted and unique")
    return axes


def reduced_shape(shape, axes, keepdims):
    """The shape after reducing `axes` (kept as 1s with keepdims)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduction_infer(op, allowed):
    def infer(types, attrs):
        x = types[0]
        rules.allowed(op, x.dtype, allowed)
        axes = check_axes(op, attrs["axis"], x.rank)
        return rules.tensor(reduced_shape(x.shape, axes, attrs["keepdims"]), x.dtype)
    return infer


def _accumulator(dtype):
    """NumPy accumulation dtype: float16 sums in float32; integers wrap in their own width."""
    return np.float32 if dtype == np.float16 else dtype


def _sum(x, axes, kd):
    return np.sum(x, axis=axes, keepdims=kd, dtype=_accumulator(x.dtype))


def _prod(x, axes, kd):
    return np.prod(x, axis=axes, keepdims=kd, dtype=_accumulator(x.dtype))


def _max(x, axes, kd):
    return np.max(x, axis=axes, keepdims=kd, initial=extreme(dtypes.as_dtype(x.dtype), True))


def _min(x, axes, kd):
    return np.min(x, axis=axes, keepdims=kd, initial=extreme(dtypes.as_dtype(x.dtype), False))


def _mean(x, axes, kd):
    """Float mean (0/0 is NaN), or integer mean truncated toward zero (an empty mean is 0, as TF)."""
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = _sum(x, axes, kd)
    if x.dtype.kind == "f":
        return total / np.asarray(count, total.dtype)
    wide = total.astype(np.int64)
    n = max(count, 1)
    q = wide // n
    q = q + ((wide % n != 0) & (wide < 0))
    return q.astype(x.dtype)


def _kernel(fn):
    def kernel(arrays, attrs):
        with np.errstate(all="ignore"):
            x = arrays[0]
            return np.asarray(fn(x, tuple(attrs["axis"]), bool(attrs["keepdims"]))).astype(x.dtype)
    return kernel


REDUCTIONS = {
    # name: (TF op, NumPy kernel, allowed dtypes, differentiable, summary)
    "reduce_sum": ("Sum", _sum, rules.NUMERIC, True, "sum over axes"),
    "reduce_mean": ("Mean", _mean, rules.NUMERIC, True, "mean over axes (integer means truncate)"),
    "reduce_prod": ("Prod", _prod, rules.NUMERIC, True, "product over axes"),
    "reduce_max": ("Max", _max, rules.NUMERIC, True, "maximum over axes (NaN propagates; empty gives the lowest)"),
    "reduce_min": ("Min", _min, rules.NUMERIC, True, "minimum over axes (NaN propagates; empty gives the highest)"),
    "reduce_any": ("Any", lambda x, a, k: np.any(x, axis=a, keepdims=k), rules.BOOL, False, "logical or over axes"),
    "reduce_all": ("All", lambda x, a, k: np.all(x, axis=a, keepdims=k), rules.BOOL, False, "logical and over axes"),
}

for _name, (_tf, _fn, _allowed, _diff, _summary) in REDUCTIONS.items():
    define(_name, ["x"], _reduction_infer(_tf, _allowed), _kernel(_fn), {"axis": "i64s", "keepdims": "bool"},
           tf_name=_tf, summary=_summary, differentiable=_diff, tf_api=(_name, "math." + _name))


INDEX_DTYPES = (dtypes.int16, dtypes.int32, dtypes.int64)


def _arg_infer(op):
    def infer(types, attrs):
        x, axis = types[0], attrs["axis"]
        rules.allowed(op, x.dtype, rules.NUMERIC + rules.BOOL)
        rules.allowed(op, attrs["output_type"], INDEX_DTYPES)
        if not 0 <= axis < x.rank:
            raise InvalidArgumentError(f"Expected dimension in the range [{-x.rank}, {x.rank}), but got {axis} "
                                       f"[Op:{op}]")
        if x.shape[axis] == 0:
            raise InvalidArgumentError(f"Reduction axis {axis} is empty in shape {list(x.shape)} [Op:{op}]")
        return rules.tensor(reduced_shape(x.shape, (axis,), False), attrs["output_type"])
    return infer


def _arg_kernel(op, fn):
    def kernel(arrays, attrs):
        x, axis = arrays[0], attrs["axis"]
        if x.shape[axis] == 0:
            raise InvalidArgumentError(f"Reduction axis {axis} is empty in shape {list(x.shape)} [Op:{op}]")
        return fn(x, axis=axis).astype(attrs["output_type"].np)
    return kernel


define("argmax", ["x"], _arg_infer("ArgMax"), _arg_kernel("ArgMax", np.argmax), {"axis": "i64", "output_type": "dtype"},
       tf_name="ArgMax", summary="index of the first maximum along axis (the first NaN wins)", differentiable=False,
       tf_api=("argmax", "math.argmax"))
define("argmin", ["x"], _arg_infer("ArgMin"), _arg_kernel("ArgMin", np.argmin), {"axis": "i64", "output_type": "dtype"},
       tf_name="ArgMin", summary="index of the first minimum along axis (the first NaN wins)", differentiable=False,
       tf_api=("argmin", "math.argmin"))
