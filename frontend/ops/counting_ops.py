"""Counting and order tests of TF's tf.math: bincount, confusion_matrix, in_top_k, invert_permutation,
zero_fraction, is_non_decreasing, is_strictly_increasing, reduce_euclidean_norm; composed of tfn's segment sums,
scatters and reductions, so they run eagerly and compiled (a size read from the data is a run-time size)."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops, rules
from tfn.ops import (
    array_ops,
    fill_ops,
    math_ops,
    reduction_ops,
    rounding_ops,
    scatter_ops,
    segment_ops,
    shape_ops,
    slicing_ops,
)
from tfn.ops.composite import require_dtype, user_error


def _int_values(op, x):
    if not x.dtype.is_integer:
        raise user_error(TypeError(f"{op}: values must be int32 or int64, got {x.dtype.name}"))
    return math_ops.cast(x, dtypes.int32)


def _flat(x):
    return array_ops.reshape(x, [-1])


@export("math.bincount")
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None, axis=None,
             binary_output=False):
    """counts[v] = how many times v occurs in arr (or the sum of its weights), for v up to max(arr) (at least
    minlength - 1, at most maxlength - 1: larger values are dropped). axis=-1 counts each row of a 2-D arr.
    A negative value raises InvalidArgumentError, as TF's."""
    arr = convert_to_tensor(arr)
    ids = _int_values("Bincount", arr)
    if axis not in (None, 0, -1):
        raise user_error(ValueError(f"Unsupported axis value {axis}: only 0 and -1 are supported"))
    if axis == -1 and arr.ndim != 2:
        raise user_error(ValueError(f"bincount with axis=-1 needs a 2-D arr, got shape {arr.shape}"))
    if weights is not None:
        values = convert_to_tensor(weights)
        if values.shape.as_list() != arr.shape.as_list() and None not in arr._shape + values._shape:
            raise user_error(ValueError(f"weights shape {values.shape} must be arr's shape {arr.shape}"))
    else:
        values = fill_ops.ones_like(arr, dtype=dtypes.as_dtype(dtype))
    if binary_output:
        values = fill_ops.ones_like(values)
    size = math_ops.maximum(reduction_ops.reduce_max(_flat(ids)) + 1, 0) if 0 not in arr._shape else 0
    if minlength is not None:
        size = math_ops.maximum(size, math_ops.cast(convert_to_tensor(minlength), dtypes.int32))
    if maxlength is not None:
        size = math_ops.minimum(size, math_ops.cast(convert_to_tensor(maxlength), dtypes.int32))
    size = math_ops.cast(convert_to_tensor(size), dtypes.int32)
    ids = apply(ops.check, [ids, reduction_ops.reduce_all(math_ops.greater_equal(ids, 0))],
                {"message": "Input arr must be non-negative!"})
    keep = math_ops.less(ids, size)
    ids = math_ops.where(keep, ids, fill_ops.zeros_like(ids) - 1)  # dropped: unsorted_segment_sum drops negatives
    if axis == -1:
        rows = shape_ops.shape(arr)[0]
        ids = math_ops.where(math_ops.less(ids, 0), ids,
                             ids + array_ops.expand_dims(fill_ops.range(rows) * size, -1))
        out = segment_ops.unsorted_segment_sum(_flat(values), _flat(ids), rows * size)
        out = array_ops.reshape(out, array_ops.stack([rows, size]))
    else:
        out = segment_ops.unsorted_segment_sum(_flat(values), _flat(ids), size)
    return math_ops.minimum(out, 1) if binary_output else out


@export("math.confusion_matrix")
def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=dtypes.int32, name=None):
    """m[i, j] = how many examples have label i and prediction j (or the sum of their weights)."""
    labels = _int_values("confusion_matrix", convert_to_tensor(labels))
    predictions = _int_values("confusion_matrix", convert_to_tensor(predictions))
    if num_classes is None:
        n = math_ops.maximum(reduction_ops.reduce_max(labels), reduction_ops.reduce_max(predictions)) + 1
    else:
        n = math_ops.cast(convert_to_tensor(num_classes), dtypes.int32)
    if weights is None:
        values = fill_ops.ones_like(labels, dtype=dtypes.as_dtype(dtype))
    else:
        values = math_ops.cast(convert_to_tensor(weights), dtypes.as_dtype(dtype))
    out = segment_ops.unsorted_segment_sum(_flat(values), _flat(labels * n + predictions), n * n)
    return array_ops.reshape(out, array_ops.stack([n, n]))


@export("math.in_top_k", "nn.in_top_k")
def in_top_k(targets, predictions, k, name=None):
    """Whether predictions[i, targets[i]] is among the k largest of its row (ties at the boundary count as in;
    False for a target out of range or a row with a non-finite prediction, as TF's InTopKV2)."""
    targets, predictions = convert_to_tensor(targets), convert_to_tensor(predictions)
    require_dtype("InTopKV2", predictions, rules.FLOATS)
    if predictions.ndim != 2 or targets.ndim != 1:
        raise user_error(ValueError(f"in_top_k: predictions must be 2-D and targets 1-D, got shapes "
                                    f"{predictions.shape} and {targets.shape}"))
    t = _int_values("InTopKV2", targets)
    classes = shape_ops.shape(predictions)[1]
    valid = math_ops.logical_and(math_ops.greater_equal(t, 0), math_ops.less(t, classes))
    safe = math_ops.where(valid, t, fill_ops.zeros_like(t))
    value = slicing_ops.gather(predictions, safe, axis=1, batch_dims=1)
    above = reduction_ops.reduce_sum(math_ops.cast(math_ops.greater(predictions, array_ops.expand_dims(value, -1)),
                                                   dtypes.int32), 1)
    finite = reduction_ops.reduce_all(rounding_ops.is_finite(predictions), 1)
    k = math_ops.cast(convert_to_tensor(k), dtypes.int32)
    return math_ops.logical_and(math_ops.logical_and(valid, finite), math_ops.less(above, k))


@export("math.invert_permutation")
def invert_permutation(x, name=None):
    """y with y[x[i]] = i for a permutation x of 0..n-1 (an index out of range raises InvalidArgumentError)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer or x.ndim != 1:
        raise user_error(ValueError(f"invert_permutation: x must be a 1-D int32 or int64 tensor, got {x!r}"))
    n = shape_ops.shape(x, out_type=x.dtype)[0]
    return scatter_ops.scatter_nd(array_ops.expand_dims(x, -1), fill_ops.range(n, dtype=x.dtype),
                                  array_ops.expand_dims(n, 0))


@export("math.zero_fraction")
def zero_fraction(value, name=None):
    """The fraction of value's elements that are 0, as float32."""
    value = convert_to_tensor(value)
    return reduction_ops.reduce_mean(math_ops.cast(math_ops.equal(value, fill_ops.zeros_like(value)),
                                                   dtypes.float32))


def _pairs(op, x):
    x = convert_to_tensor(x)
    require_dtype(op, x, rules.NUMERIC)
    flat = _flat(x)
    return flat[1:], flat[:-1]


@export("math.is_non_decreasing")
def is_non_decreasing(x, name=None):
    """Whether x[i] <= x[i + 1] for every i of x flattened (True with fewer than two elements)."""
    later, earlier = _pairs("is_non_decreasing", x)
    return reduction_ops.reduce_all(math_ops.greater_equal(later, earlier))


@export("math.is_strictly_increasing")
def is_strictly_increasing(x, name=None):
    """Whether x[i] < x[i + 1] for every i of x flattened (True with fewer than two elements)."""
    later, earlier = _pairs("is_strictly_increasing", x)
    return reduction_ops.reduce_all(math_ops.greater(later, earlier))


@export("math.reduce_euclidean_norm")
def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x ** 2)) over axis (None: all); integers are summed as float64 and the root truncated, as TF."""
    x = convert_to_tensor(input_tensor)
    require_dtype("EuclideanNorm", x, rules.NUMERIC)
    if x.dtype.is_floating:
        return math_ops.sqrt(reduction_ops.reduce_sum(math_ops.square(x), axis, keepdims=bool(keepdims)))
    wide = math_ops.cast(x, dtypes.float64)
    return math_ops.cast(math_ops.sqrt(reduction_ops.reduce_sum(wide * wide, axis, keepdims=bool(keepdims))),
                         x.dtype)
