"""`tfn.repeat`, `tfn.unique`, `tfn.unique_with_counts`, `tfn.searchsorted`: written with tfn ops (gathers, the
stable argsort, cumulative sums, boolean masks), so that they compile with sizes known only when the function runs.

unique orders the values by a stable argsort: equal values are adjacent, the first of each run is its first
occurrence; the runs, sorted again by those first positions, give TF's order (first appearance), and each
element's output index is its run's place in that order. searchsorted compares every value with the whole sorted
sequence (O(values x sequence) work and memory), which suits the bucket boundaries it is mostly used with.
"""
import collections

import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import SymbolicTensor, Tensor, convert_to_tensor, known
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.composite import user_error
from tfn.ops.mask_ops import boolean_mask
from tfn.ops.scan_ops import cumsum
from tfn.ops.segment_ops import unsorted_segment_sum
from tfn.ops.slicing_ops import gather
from tfn.ops.sort_ops import argsort

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


@export("repeat")
def repeat(input, repeats, axis=None, name=None):  # noqa: A002  (TF's name)
    """Each element of `input` along `axis` repeated `repeats` times (an int, or one count per element); without an
    axis, the flattened input."""
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = array_ops.reshape(x, [-1]), 0
    axis = int(axis) % max(x.ndim, 1)
    r = known(repeats)
    n = x.shape[axis]
    if not isinstance(r, SymbolicTensor) and n is not None:
        counts = np.asarray(r.numpy() if isinstance(r, Tensor) else r)
        if counts.ndim > 1 or counts.ndim == 1 and counts.shape[0] not in (1, n):
            raise user_error(ValueError(f"repeat: repeats must be a scalar or have one count per element ({n}), "
                                        f"got shape {list(counts.shape)}"))
        if (counts < 0).any():
            raise user_error(ValueError(f"repeat: repeats must be >= 0, got {counts.tolist()}"))
        return gather(x, np.repeat(np.arange(n), np.broadcast_to(counts, (n,))).astype(np.int64), axis=axis)
    counts = math_ops.cast(convert_to_tensor(r), dtypes.int64)
    size = shape_ops.shape(x, dtypes.int64)[axis]
    counts = array_ops.broadcast_to(counts, array_ops.reshape(size, [1])) if counts.ndim == 0 else counts
    ends = cumsum(counts)
    positions = fill_ops.range(0, reduction_ops.reduce_sum(counts), dtype=dtypes.int64)
    return gather(x, searchsorted(ends, positions, side="right", out_type=dtypes.int64), axis=axis)


@export("searchsorted")
def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each value (along the innermost dim, the other dims matching sorted_sequence's), the index at which it
    would be inserted into the sorted innermost rows: before equal entries ('left') or after them ('right')."""
    seq, vals = convert_to_tensor(sorted_sequence), convert_to_tensor(values)
    if side not in ("left", "right"):
        raise user_error(ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}"))
    if seq.ndim == 0 or vals.ndim == 0 or seq.ndim != vals.ndim:
        raise user_error(ValueError(f"searchsorted: sorted_sequence and values must have the same rank >= 1, got "
                                    f"shapes {list(seq.shape)} and {list(vals.shape)}"))
    before = math_ops.less if side == "left" else math_ops.less_equal
    below = before(array_ops.expand_dims(seq, -2), array_ops.expand_dims(vals, -1))
    return math_ops.cast(reduction_ops.reduce_sum(math_ops.cast(below, dtypes.int64), axis=-1), out_type)


def _unique_parts(x, out_idx):
    """(values in order of first appearance, each element's index into them, the runs of the sorted values, the
    order of the runs) of a 1-D tensor."""
    x = convert_to_tensor(x)
    if x.ndim != 1:
        raise user_error(ValueError(f"unique expects a 1-D tensor, got shape {list(x.shape)}"))
    order = argsort(x, stable=True)
    sorted_x = gather(x, order)
    n = shape_ops.shape(x, dtypes.int64)[0]
    starts = array_ops.concat([fill_ops.ones([1], dtypes.bool),
                               math_ops.not_equal(sorted_x[1:], sorted_x[:-1])], 0)[:n]
    run = cumsum(math_ops.cast(starts, dtypes.int64)) - 1  # the run (distinct value) of each sorted position
    first = boolean_mask(order, starts)  # each run's first position in x, runs in value order
    by_appearance = argsort(first, stable=True)  # the runs in order of first appearance
    place = argsort(by_appearance, stable=True)  # each run's place in that order (the inverse permutation)
    idx_sorted = gather(place, run)
    idx = gather(idx_sorted, argsort(order, stable=True))
    return gather(x, gather(first, by_appearance)), math_ops.cast(idx, out_idx), run, by_appearance


@export("unique")
def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of 1-D x in order of first appearance, and for each element of x its index in
    y (x == gather(y, idx))."""
    y, idx, _, _ = _unique_parts(x, dtypes.as_dtype(out_idx))
    return Unique(y, idx)


@export("unique_with_counts")
def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): unique's, and how many times each value of y occurs in x."""
    out_idx = dtypes.as_dtype(out_idx)
    y, idx, run, by_appearance = _unique_parts(x, out_idx)
    runs = shape_ops.shape(by_appearance, dtypes.int64)[0]
    per_run = unsorted_segment_sum(fill_ops.ones_like(run), run, runs)
    return UniqueWithCounts(y, idx, math_ops.cast(gather(per_run, by_appearance), out_idx))

