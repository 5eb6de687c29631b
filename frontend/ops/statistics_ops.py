"""`tfn.reduce_logsumexp`, `tfn.math.reduce_variance`, `reduce_std` and `count_nonzero`: reductions composed of
tfn's reductions with TF's axis/keepdims conventions (and TF's formulas, so the gradients are TF's)."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import rules
from tfn.gradients import recording
from tfn.ops import fill_ops, math_ops, reduction_ops
from tfn.ops.composite import require_dtype, user_error


@export("reduce_logsumexp", "math.reduce_logsumexp")
def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over `axis` (None: all dims), computed stably: the maximum is subtracted first."""
    x = convert_to_tensor(input_tensor)
    require_dtype("ReduceLogSumExp", x, rules.FLOATS)
    with recording.pause():  # TF's stop_gradient: the shift does not change the value
        raw_max = reduction_ops.reduce_max(x, axis, keepdims=True)
        shift = math_ops.where(math_ops.less(math_ops.abs(raw_max), float("inf")), raw_max,
                               fill_ops.zeros_like(raw_max))
        out_shift = shift if keepdims else reduction_ops.reduce_sum(shift, axis)  # (the reduced dims are 1s)
    total = reduction_ops.reduce_sum(math_ops.exp(x - shift), axis, keepdims=bool(keepdims))
    return math_ops.log(total) + out_shift


def _real(op, x):
    if not x.dtype.is_floating:
        raise user_error(TypeError(f"{op}: input must be either real or complex, received {x.dtype.name}"))


@export("math.reduce_variance")
def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean squared deviation from the mean over `axis` (None: all dims); float16/32/64."""
    x = convert_to_tensor(input_tensor)
    _real("reduce_variance", x)
    mean = reduction_ops.reduce_mean(x, axis, keepdims=True)
    return reduction_ops.reduce_mean(math_ops.square(x - mean), axis, keepdims=bool(keepdims))


@export("math.reduce_std")
def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation (square root of reduce_variance) over `axis`; float16/32/64."""
    x = convert_to_tensor(input_tensor)
    _real("reduce_std", x)
    return math_ops.sqrt(reduce_variance(x, axis, keepdims))


@export("math.count_nonzero")
def count_nonzero(input, axis=None, keepdims=None, dtype=dtypes.int64, name=None):  # noqa: A002
    """The number of elements not equal to zero (False, b"") over `axis` (None: all dims), as `dtype`."""
    x = convert_to_tensor(input)
    zero = b"" if x.dtype.is_string else 0
    nonzero = math_ops.cast(math_ops.not_equal(x, convert_to_tensor(zero, x.dtype)), dtypes.int64)
    return math_ops.cast(reduction_ops.reduce_sum(nonzero, axis, keepdims=bool(keepdims)), dtypes.as_dtype(dtype))
