"""`tfn.split`, `tfn.reverse` and `tfn.roll`, composed of strided slices and concat (so they run on dynamic dims
where the slices can, and differentiate through the slices' gradient)."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.dialects import ops
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, math_ops, shape_ops
from tfn.ops.composite import norm_axis, user_error


def _ints(value, what, op):
    """An int or a list of ints known when the function is traced, as a list."""
    value = known(value)
    if isinstance(value, SymbolicTensor):
        raise user_error(TypeError(f"{op}: `{what}` must be known when the function is traced, got {value!r}"))
    if isinstance(value, Tensor):
        value = value.numpy()
    arr = np.asarray([known(v).numpy() if isinstance(known(v), Tensor) else v for v in value]
                     if isinstance(value, (list, tuple)) else value)
    if arr.size and arr.dtype.kind not in "iu":
        raise user_error(TypeError(f"{op}: `{what}` must be an int or a list of ints, got {value!r}"))
    return arr.astype(np.int64), arr.ndim


def _along(x, axis, s):
    """x[..., s, ...] with the slice s at `axis`."""
    return x[(slice(None),) * axis + (s,)]


@export("split")
def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """`value` cut along `axis` into num_or_size_splits equal pieces (an int that must divide the dim), or into
    pieces of the listed sizes (one may be -1: what is left)."""
    x = convert_to_tensor(value)
    axis_v, _ = _ints(axis, "axis", "Split")
    if axis_v.size != 1:
        raise user_error(InvalidArgumentError(f"axis must be a scalar, got {axis!r} [Op:Split]"))
    axis = norm_axis("Split", int(axis_v.reshape(-1)[0]), x.ndim)
    n = x._shape[axis]
    sizes, ndim = _ints(num_or_size_splits, "num_or_size_splits", "Split")
    if ndim == 0:
        parts = int(sizes)
        if parts < 1:
            raise user_error(ValueError(f"Split: num_or_size_splits must be >= 1, got {parts}"))
        if n is None:
            raise user_error(ValueError(f"Split: dim {axis} of {x.shape} is known only when the function runs; "
                                        "split it into a list of sizes instead of a number of pieces"))
        if n % parts:
            raise user_error(InvalidArgumentError(
                f"Number of ways to split should evenly divide the split dimension, but got split_dim {axis} "
                f"(size = {n}) and num_split {parts} [Op:Split]"))
        sizes = [n // parts] * parts
    else:
        sizes = [int(s) for s in sizes]
        if num is not None and int(num) != len(sizes):
            raise user_error(ValueError(f"Split: num={num} but {len(sizes)} sizes were given"))
        sizes = _fill_unknown(sizes, n, axis)
        if n is None:
            x = _check_sizes_fit(x, axis, sizes)
    out, at = [], 0
    for k, s in enumerate(sizes):
        if s is None:  # the -1 piece of a dynamic dim: everything up to the pieces after it
            rest = sum(sizes[k + 1:])
            out.append(_along(x, axis, slice(at, -rest if rest else None)))
            at = -rest
            continue
        stop = at + s
        out.append(_along(x, axis, slice(at, stop if stop != 0 else None) if at < 0 else slice(at, stop)))
        at = stop
    return out


def _fill_unknown(sizes, n, axis):
    """The sizes with a -1 replaced by what is left of the dim (None if the dim is dynamic), checked."""
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in sizes):
        raise user_error(InvalidArgumentError(f"Determined shape must either match input shape along split_dim "
                                              f"exactly if fully specified, or be less than the size of the input "
                                              f"along split_dim if not fully specified. Got: {sizes} [Op:SplitV]"))
    known_total = sum(s for s in sizes if s != -1)
    if n is None:
        return [None if s == -1 else s for s in sizes]
    if unknown:
        if known_total > n:
            raise user_error(InvalidArgumentError(f"the sizes {sizes} add up to more than dim {axis} (size {n}) "
                                                  "[Op:SplitV]"))
        sizes[unknown[0]] = n - known_total
    elif known_total != n:
        raise user_error(InvalidArgumentError(f"Determined shape must either match input shape along split_dim "
                                              f"exactly if fully specified, or be less than the size of the input "
                                              f"along split_dim if not fully specified.  Got: {known_total} "
                                              f"(sizes {sizes}, dim {axis} of size {n}) [Op:SplitV]"))
    return sizes


def _check_sizes_fit(x, axis, sizes):
    """x, checked when the function runs: its dynamic dim `axis` is the sum of the sizes, or at least that with a
    -1 (None) piece (TF's SplitV error; the slices alone would clamp and cut silently)."""
    total = sum(s for s in sizes if s is not None)
    count = shape_ops.shape(x, dtypes.int64)[axis]
    want = convert_to_tensor(total, dtypes.int64)
    fits = math_ops.greater_equal(count, want) if None in sizes else math_ops.equal(count, want)
    shown = [-1 if s is None else s for s in sizes]
    return apply(ops.check, [x, fits, count], {"message": (
        f"Determined shape must either match input shape along split_dim exactly if fully specified, or be less "
        f"than the size of the input along split_dim if not fully specified.  Got: {total} (sizes {shown}, dim "
        f"{axis} of size {{0}}) [Op:SplitV]")})


@export("reverse")
def reverse(tensor, axis, name=None):
    """`tensor` with the order of its elements reversed along each dim in `axis` (a list of ints)."""
    x = convert_to_tensor(tensor)
    axes, ndim = _ints(axis, "axis", "ReverseV2")
    if ndim != 1:
        raise user_error(InvalidArgumentError(f"'axis' must be 1-D, got shape {list(np.shape(axes))} "
                                              "[Op:ReverseV2]"))
    seen = set()
    key = [slice(None)] * x.ndim
    for a in axes.tolist():
        if not -x.ndim <= a < x.ndim:
            raise user_error(InvalidArgumentError(f"'axis'[{len(seen)}] = {a} is out of valid range [0, {x.ndim - 1}] "
                                                  "[Op:ReverseV2]"))
        a %= x.ndim
        if a in seen:
            raise user_error(InvalidArgumentError(f"axis {a} specified more than once. [Op:ReverseV2]"))
        seen.add(a)
        key[a] = slice(None, None, -1)
    return x[tuple(key)] if seen else array_ops.identity(x)


@export("roll")
def roll(input, shift, axis, name=None):  # noqa: A002
    """`input` with its elements shifted `shift` places along `axis` (ints or equal-length lists; elements
    leaving one end come back at the other). A shift may be a scalar tensor known only when the function runs."""
    x = convert_to_tensor(input)
    axes, andim = _ints(axis, "axis", "Roll")
    shifts = _shifts(shift)
    if andim > 1 or (len(shifts) != axes.size):
        raise user_error(InvalidArgumentError(f"shift and axis must have the same size, got {len(shifts)} shifts "
                                              f"and axis {axes.tolist()} [Op:Roll]"))
    total = {}
    for a, s in zip(axes.reshape(-1).tolist(), shifts):
        if not -x.ndim <= a < x.ndim:
            raise user_error(InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {x.ndim} "
                                                  "[Op:Roll]"))
        a %= x.ndim
        total[a] = s if a not in total else total[a] + s
    for a, s in total.items():
        x = _roll_axis(x, a, s)
    return x


def _shifts(shift):
    shift = known(shift)
    if isinstance(shift, SymbolicTensor):
        if shift.ndim != 0 or not shift.dtype.is_integer:
            raise user_error(TypeError(f"Roll: a run-time shift must be a scalar int tensor, got {shift!r}"))
        return [math_ops.cast(shift, dtypes.int64)]
    if isinstance(shift, (list, tuple)) and any(isinstance(known(s), SymbolicTensor) for s in shift):
        return [math_ops.cast(convert_to_tensor(s), dtypes.int64) for s in shift]
    values, _ = _ints(shift, "shift", "Roll")
    return [int(v) for v in values.reshape(-1)]


def _roll_axis(x, axis, s):
    n = x._shape[axis]
    if isinstance(s, int) and n is not None:
        s = s % n if n else 0
        if s == 0:
            return x
        return array_ops.concat([_along(x, axis, slice(n - s, None)), _along(x, axis, slice(0, n - s))], axis)
    size = shape_ops.shape(x, dtypes.int64)[axis]
    s = convert_to_tensor(s, dtypes.int64) if not isinstance(s, TensorBase) else s
    cut = size - math_ops.floormod(s, math_ops.maximum(size, 1))
    return array_ops.concat([_along(x, axis, slice(cut, None)), _along(x, axis, slice(0, cut))], axis)
