"""The tf.data transformations beyond the basic ones (frontend/data/dataset.py): concatenate, flat_map,
interleave, padded_batch, scan, take_while, unique, shard, and the sources counter, random, sample_from_datasets,
choose_from_datasets.

Each is a Python generator over its inputs' elements (flat tuples of NumPy arrays), as the basic ones are; none is
indexed by compiled code, so a `for` over one inside a tfn.function pulls its elements through a run-time callback
(frontend/data/staging.py). Functions of elements (scan's, take_while's predicate) are traced once and compiled, as
map's are; flat_map's and interleave's, which return datasets, run in Python on each element.
"""
import itertools
import os

import numpy as np

from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core.tensor import Tensor
from tfn.core.tensor_shape import TensorShape
from tfn.core.tensor_spec import TensorSpec
from tfn.data import structure
from tfn.data.dataset import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    _compiled,
    _RangeDataset,
    _TensorSliceDataset,
    _Unary,
    batched_cardinality,
)
from tfn.dialects.errors import FailedPreconditionError, InvalidArgumentError

_INT64_LIMIT = np.iinfo(np.int64).max


def common_spec(specs, what):
    """The element spec holding the elements of every spec in `specs` (same structure and dtypes; each dim kept where
    all agree, else None); TypeError naming `what` when they do not fit."""
    first = specs[0]
    for other in specs[1:]:
        try:
            nest.assert_same_structure(first, other)
        except (TypeError, ValueError):
            raise TypeError(f"{what}: incompatible dataset elements {first!r} and {other!r}") from None
        for a, b in zip(nest.flatten(first), nest.flatten(other)):
            if a.dtype != b.dtype:
                raise TypeError(f"{what}: incompatible dataset elements {first!r} and {other!r} (dtype "
                                f"{a.dtype.name} vs {b.dtype.name})")
    leaves = [nest.flatten(s) for s in specs]
    return nest.pack_sequence_as(first, [column[0].most_specific_common_supertype(list(column[1:]))
                                         for column in zip(*leaves)])


class _Many(Dataset):
    """A dataset over several input datasets (their source tensors in order, for compiled calls)."""

    def __init__(self, spec, datasets):
        super().__init__(spec)
        self._children = tuple(datasets)


# --- concatenate ---------------------------------------------------------------------------------------------

class _ConcatenateDataset(_Many):
    def __init__(self, first, second):
        super().__init__(common_spec([first.element_spec, second.element_spec], "Dataset.concatenate"),
                         (first, second))

    def _cardinality(self):
        a, b = (c._cardinality() for c in self._children)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if min(a, b) < 0 else a + b

    def _gen(self):
        for c in self._children:
            yield from c._gen()

    def _rebuild(self, tensors):
        return _ConcatenateDataset(*(c._rebuild(tensors) for c in self._children))


# --- datasets made by a function of each element -------------------------------------------------------------

class _SpecDataset(Dataset):
    """An empty dataset of a given element spec: what a function of window elements is probed with."""

    def _gen(self):
        return iter(())


def _probe(s):
    return _SpecDataset(s.element_spec) if isinstance(s, structure.WindowSpec) else s.placeholder_value()


def _dataset_fn_spec(fn, spec, what):
    """The element spec of the datasets `fn` makes from elements of `spec`: fn run once on symbolic elements in a
    throw-away trace (nothing of it is compiled)."""
    with graph_mod.FuncGraph(what.replace(".", "_")):
        args = nest.map_structure(_probe, spec)
        out = fn(*structure.as_args(args))
    if not isinstance(out, Dataset):
        raise TypeError(f"{what}: the function must return a tfn.data.Dataset, it returned {out!r}")
    return out.element_spec


def _datasets_of(fn, parent, spec, what):
    """A generator of the datasets fn makes from each element of `parent`, run eagerly."""
    pspec = parent.element_spec
    for flat in parent._gen():
        out = fn(*structure.as_args(structure.pack(pspec, flat)))
        if not isinstance(out, Dataset):
            raise TypeError(f"{what}: the function must return a tfn.data.Dataset, it returned {out!r}")
        common_spec([spec, out.element_spec], what)
        yield out


class _FlatMapDataset(_Unary):
    def __init__(self, parent, fn):
        self._fn = fn
        super().__init__(parent, _dataset_fn_spec(fn, parent.element_spec, "Dataset.flat_map"))

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        for ds in _datasets_of(self._fn, self._parent, self._spec, "Dataset.flat_map"):
            yield from ds._gen()

    def _rebuild(self, tensors):
        return _FlatMapDataset(self._parent._rebuild(tensors), self._fn)


class _InterleaveDataset(_Unary):
    """TF's deterministic interleave: `cycle_length` input elements' datasets open at once, `block_length`
    consecutive elements taken from each in turn; an exhausted one is replaced by the next input element's."""

    def __init__(self, parent, fn, cycle_length, block_length):
        self._fn, self._cycle, self._block = fn, cycle_length, block_length
        super().__init__(parent, _dataset_fn_spec(fn, parent.element_spec, "Dataset.interleave"))

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        """TF's loop: at a slot holding a dataset, its next element (the slot's block counted; a block done, the
        next slot); an exhausted one empties the slot (the next slot's turn); an empty slot takes the next input
        element's dataset while there is one."""
        inputs = _datasets_of(self._fn, self._parent, self._spec, "Dataset.interleave")
        slots = [None] * self._cycle
        end_of_input, open_slots, i, taken = False, 0, 0, 0
        while not end_of_input or open_slots:
            if slots[i] is not None:
                flat = next(slots[i], None)
                if flat is not None:
                    yield flat
                    taken += 1
                    if taken == self._block:
                        i, taken = (i + 1) % self._cycle, 0
                    continue
                slots[i] = None
                open_slots -= 1
                i, taken = (i + 1) % self._cycle, 0
            elif not end_of_input:
                ds = next(inputs, None)
                if ds is None:
                    end_of_input = True
                else:
                    slots[i] = ds._gen()
                    open_slots += 1
            else:
                i, taken = (i + 1) % self._cycle, 0

    def _rebuild(self, tensors):
        return _InterleaveDataset(self._parent._rebuild(tensors), self._fn, self._cycle, self._block)


# --- window ------------------------------------------------------------------------------------------------

class _WindowDataset(_Unary):
    """Dataset.window: window k holds the elements k·shift, k·shift + stride, ... (`size` of them, fewer in the last
    windows unless dropped), each component as a dataset of its values."""

    def __init__(self, parent, size, shift, stride, drop):
        super().__init__(parent, nest.map_structure(structure.WindowSpec, parent.element_spec))
        self._size, self._shift, self._stride, self._drop = size, shift, stride, drop

    def _cardinality(self):
        n = self._parent._cardinality()
        if n < 0:
            return n
        span = (self._size - 1) * self._stride + 1
        full = 0 if n < span else (n - span) // self._shift + 1
        return full if self._drop else -(-n // self._shift)

    def _gen(self):
        source, leaves = self._parent._gen(), nest.flatten(self._parent.element_spec)
        buf, base, read, start, exhausted = [], 0, 0, 0, False
        while True:
            last = start + (self._size - 1) * self._stride
            while not exhausted and read <= last:
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                    break
                if read >= base:
                    buf.append(nxt)
                read += 1
            rows = [buf[i - base] for i in range(start, last + 1, self._stride) if i - base < len(buf)]
            if not rows or len(rows) < self._size and self._drop:
                return
            yield tuple(_TensorSliceDataset(Tensor(np.stack([r[k] for r in rows]), s.dtype))
                        for k, s in enumerate(leaves))
            start += self._shift
            del buf[:max(0, start - base)]
            base = start

    def _rebuild(self, tensors):
        return _WindowDataset(self._parent._rebuild(tensors), self._size, self._shift, self._stride, self._drop)


def _window(dataset, size, shift, stride, drop_remainder):
    size = _int(size, "size")
    shift = size if shift is None else _int(shift, "shift")
    stride = _int(stride, "stride")
    for what, n in (("size", size), ("shift", shift), ("stride", stride)):
        if n <= 0:
            raise InvalidArgumentError(f"Dataset.window: {what} must be positive, got {n}")
    return _WindowDataset(dataset, size, shift, stride, bool(drop_remainder))


# --- padded_batch ----------------------------------------------------------------------------------------------

def _up_to(spec, value):
    """value's parts, one per leaf of the structure `spec` (a leaf takes the whole value found at its place)."""
    if isinstance(spec, TensorSpec):
        return [value]
    if isinstance(spec, dict):
        if not isinstance(value, dict) or nest.sorted_keys(value) != nest.sorted_keys(spec):
            raise ValueError(f"{value!r} does not have the structure of {spec!r}")
        return [v for k in nest.sorted_keys(spec) for v in _up_to(spec[k], value[k])]
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        raise ValueError(f"{value!r} does not have the structure of {spec!r}")
    return [v for s, x in zip(spec, value) for v in _up_to(s, x)]


def _padded_shapes(spec, padded_shapes):
    """Per component of `spec`: the shape each element is padded to (None dims: the batch's largest)."""
    flat = nest.flatten(spec)
    if padded_shapes is None:
        shapes = [s.shape for s in flat]
    else:
        try:
            shapes = _up_to(spec, padded_shapes)
        except (TypeError, ValueError):
            raise ValueError(f"padded_batch: padded_shapes {padded_shapes!r} does not match the element structure "
                             f"{spec!r}") from None
        shapes = [TensorShape(None if isinstance(p, Tensor) and p.shape.rank == 0 else
                              (p.numpy().tolist() if isinstance(p, Tensor) else p)) for p in shapes]
        shapes = [TensorShape([None if d is not None and d < 0 else d for d in s.as_list()]) if s.rank is not None
                  else s for s in shapes]
    out = []
    for s, p in zip(flat, shapes):
        if s.shape.rank is None:
            raise ValueError(f"padded_batch: component {s!r} has an unknown rank; give its padded_shapes")
        if p.rank is None:
            p = TensorShape([None] * s.shape.rank)
        if p.rank != s.shape.rank:
            raise ValueError(f"padded_batch: the padded shape {p} does not have the rank of the component {s!r}")
        for want, have in zip(p.as_list(), s.shape.as_list()):
            if want is not None and have is not None and have > want:
                raise ValueError(f"padded_batch: the padded shape {p} is smaller than the component {s!r}")
        out.append(p)
    return out


def _padding_values(spec, padding_values):
    flat = nest.flatten(spec)
    if padding_values is None:
        values = [None] * len(flat)
    elif isinstance(padding_values, (Tensor, np.ndarray, int, float, bool, str, bytes, np.generic)):
        values = [padding_values] * len(flat)  # one value for every component
    else:
        values = _up_to(spec, padding_values)
    out = []
    for s, v in zip(flat, values):
        if v is None:
            out.append(np.array(b"" if s.dtype == dtypes.string else 0, s.dtype.np))
            continue
        v = np.asarray(v.numpy() if isinstance(v, Tensor) else v)
        if v.ndim != 0:
            raise ValueError(f"padded_batch: a padding value must be a scalar, got {v!r}")
        out.append(v.astype(s.dtype.np))
    return out


class _PaddedBatchDataset(_Unary):
    def __init__(self, parent, size, padded_shapes, padding_values, drop):
        self._shapes = _padded_shapes(parent.element_spec, padded_shapes)
        self._values = _padding_values(parent.element_spec, padding_values)
        self._size, self._drop = size, drop
        leaves = [TensorSpec([size if drop else None] + p.as_list(), s.dtype)
                  for s, p in zip(nest.flatten(parent.element_spec), self._shapes)]
        super().__init__(parent, nest.pack_sequence_as(parent.element_spec, leaves))
        self._user = (padded_shapes, padding_values)

    def _cardinality(self):
        return batched_cardinality(self._parent._cardinality(), self._size, self._drop)

    def _gen(self):
        rows = []
        for flat in self._parent._gen():
            rows.append(flat)
            if len(rows) == self._size:
                yield self._pad(rows)
                rows = []
        if rows and not self._drop:
            yield self._pad(rows)

    def _pad(self, rows):
        out = []
        for i, (column, shape, value) in enumerate(zip(zip(*rows), self._shapes, self._values)):
            dims = []
            for d, want in enumerate(shape.as_list()):
                largest = max(a.shape[d] for a in column)
                if want is not None and largest > want:
                    raise InvalidArgumentError(
                        f"Attempted to pad to a smaller size than the input element: component {i} has "
                        f"{largest} along dim {d}, padded to {want}")
                dims.append(largest if want is None else want)
            batch = np.full([len(column)] + dims, value, dtype=value.dtype)
            for j, a in enumerate(column):
                batch[(j,) + tuple(slice(0, n) for n in a.shape)] = a
            out.append(batch)
        return tuple(out)

    def _rebuild(self, tensors):
        return _PaddedBatchDataset(self._parent._rebuild(tensors), self._size, *self._user, self._drop)


# --- scan, take_while, unique, shard ---------------------------------------------------------------------------

class _ScanDataset(_Unary):
    """`(state, out) = scan_func(state, element)` over the elements from `initial_state`; yields each out."""

    def __init__(self, parent, initial_state, fn):
        state = structure.to_tensors(initial_state)
        self._state_spec = structure.spec_of(state)
        self._initial = structure.flat_arrays(self._state_spec, state, "Dataset.scan's initial_state")
        self._user_fn, self._initial_state = fn, initial_state
        compiled, out, _ = _compiled(fn, (self._state_spec, parent.element_spec), "Dataset.scan")
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"Dataset.scan: scan_func must return a pair (new_state, output_element), it returns "
                            f"{out!r}")
        new_state, element = out
        try:
            nest.assert_same_structure(self._state_spec, new_state)
        except (TypeError, ValueError):
            raise TypeError(f"Dataset.scan: the new state {new_state!r} does not have the structure of the initial "
                            f"state {self._state_spec!r}") from None
        for old, new in zip(nest.flatten(self._state_spec), nest.flatten(new_state)):
            if not isinstance(new, TensorSpec) or not old.is_compatible_with(new):
                raise TypeError(f"Dataset.scan: the new state {new_state!r} must have the dtypes and shapes of the "
                                f"initial state {self._state_spec!r}")
        self._fn = compiled
        super().__init__(parent, element)

    def _gen(self):
        state = self._initial
        pspec = self._parent.element_spec
        for flat in self._parent._gen():
            new_state, out = self._fn(structure.pack(self._state_spec, state), structure.pack(pspec, flat))
            state = structure.flat_arrays(self._state_spec, new_state, "Dataset.scan's scan_func")
            yield structure.flat_arrays(self._spec, out, "Dataset.scan's scan_func")

    def _rebuild(self, tensors):
        return _ScanDataset(self._parent._rebuild(tensors), self._initial_state, self._user_fn)


class _TakeWhileDataset(_Unary):
    def __init__(self, parent, predicate):
        super().__init__(parent)
        self._user_fn = predicate
        self._fn, out, _ = _compiled(predicate, parent.element_spec, "Dataset.take_while")
        if not isinstance(out, TensorSpec) or out.dtype != dtypes.bool or out.shape.rank != 0:
            raise ValueError(f"Dataset.take_while: the predicate must return a scalar bool tensor, it returns {out!r}")

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        for flat in self._parent._gen():
            if not bool(self._fn(*structure.as_args(structure.pack(self._spec, flat))).numpy()):
                return
            yield flat

    def _rebuild(self, tensors):
        return _TakeWhileDataset(self._parent._rebuild(tensors), self._user_fn)


class _UniqueDataset(_Unary):
    def __init__(self, parent):
        spec = parent.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or \
                spec.dtype not in (dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError(f"Dataset.unique: elements must be scalars of type int32, int64 or string, got {spec!r}")
        super().__init__(parent)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        seen = set()
        for flat in self._parent._gen():
            key = flat[0].item()
            if key not in seen:
                seen.add(key)
                yield flat

    def _rebuild(self, tensors):
        return _UniqueDataset(self._parent._rebuild(tensors))


class _ShardDataset(_Unary):
    def __init__(self, parent, num_shards, index):
        super().__init__(parent)
        self._n, self._index = num_shards, index

    def _cardinality(self):
        n = self._parent._cardinality()
        return n if n < 0 else max(0, -(-(n - self._index) // self._n))

    def _gen(self):
        return itertools.islice(self._parent._gen(), self._index, None, self._n)

    def _rebuild(self, tensors):
        return _ShardDataset(self._parent._rebuild(tensors), self._n, self._index)


def _shard(dataset, num_shards, index):
    num_shards, index = _int(num_shards, "num_shards"), _int(index, "index")
    if num_shards <= 0:
        raise InvalidArgumentError(f"num_shards must be > 0, got {num_shards}")
    if not 0 <= index < num_shards:
        raise InvalidArgumentError(f"index must be in [0, num_shards), got index {index} with {num_shards} shards")
    return _ShardDataset(dataset, num_shards, index)


def _int(value, what):
    value = value.numpy() if isinstance(value, Tensor) else value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) and \
            not (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu"):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _get_single_element(dataset):
    dataset._check_eager("get_single_element")
    items = list(itertools.islice(dataset._gen(), 2))
    if not items:
        raise InvalidArgumentError("Dataset was empty.")
    if len(items) > 1:
        raise InvalidArgumentError("Dataset had more than one element.")
    return structure.pack(dataset.element_spec, items[0])


# --- sources: random, sampling and choosing among datasets --------------------------------------------------------

class _RandomDataset(Dataset):
    """Dataset.random: int64 values uniform in [0, 2**63), forever; the same sequence for the same seed."""

    def __init__(self, seed, rerandomize):
        super().__init__(TensorSpec([], dtypes.int64))
        self._user_seed, self._rerandomize = seed, rerandomize
        self._seed = int(np.random.SeedSequence().entropy % (1 << 63)) if seed is None else int(seed)
        self._epoch = 0

    def _cardinality(self):
        return INFINITE_CARDINALITY

    def _gen(self):
        epoch = self._epoch
        if self._rerandomize:
            self._epoch += 1
        rng = np.random.default_rng([self._seed, epoch])
        while True:
            for v in rng.integers(0, _INT64_LIMIT, size=256, dtype=np.int64, endpoint=True):
                yield (np.asarray(v),)

    def _rebuild(self, tensors):
        return _RandomDataset(self._user_seed, self._rerandomize)


class _SampleDataset(_Many):
    """sample_from_datasets: each element from dataset i with probability weights[i] (renormalised over the
    datasets not yet exhausted; or stopping at the first exhausted one, with stop_on_empty_dataset)."""

    def __init__(self, datasets, weights, seed, stop_on_empty):
        super().__init__(common_spec([d.element_spec for d in datasets], "Dataset.sample_from_datasets"),
                         datasets)
        self._weights, self._user_seed, self._stop = weights, seed, stop_on_empty
        self._seed = int(np.random.SeedSequence().entropy % (1 << 63)) if seed is None else int(seed)
        self._epoch = 0

    def _cardinality(self):
        ns = [c._cardinality() for c in self._children]
        if all(n == INFINITE_CARDINALITY for n in ns):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY

    def _gen(self):
        rng = np.random.default_rng([self._seed, self._epoch])
        self._epoch += 1
        sources = [c._gen() for c in self._children]
        weights = np.array(self._weights, np.float64)
        while weights.sum() > 0:
            i = int(rng.choice(len(sources), p=weights / weights.sum()))
            flat = next(sources[i], None)
            if flat is None:
                if self._stop:
                    return
                weights[i] = 0.0
                continue
            yield flat

    def _rebuild(self, tensors):
        return _SampleDataset([c._rebuild(tensors) for c in self._children], self._weights, self._user_seed,
                              self._stop)


def _sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset):
    datasets = list(datasets)
    if not datasets or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"sample_from_datasets: datasets must be a non-empty list of datasets, got {datasets!r}")
    if weights is None:
        weights = [1.0 / len(datasets)] * len(datasets)
    weights = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, np.float64)
    if weights.shape != (len(datasets),):
        raise ValueError(f"sample_from_datasets: weights must hold one value per dataset ({len(datasets)}), got "
                         f"shape {list(weights.shape)}")
    if (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
        raise InvalidArgumentError(f"sample_from_datasets: weights must be finite, >= 0 and not all 0, got "
                                   f"{weights.tolist()}")
    return _SampleDataset(datasets, weights.tolist(), seed, bool(stop_on_empty_dataset))


class _ChooseDataset(_Many):
    """choose_from_datasets: the next element of datasets[c] for each c of choice_dataset."""

    def __init__(self, datasets, choices, stop_on_empty):
        super().__init__(common_spec([d.element_spec for d in datasets], "Dataset.choose_from_datasets"),
                         (*datasets, choices))
        self._n, self._stop = len(datasets), stop_on_empty

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        sources = [c._gen() for c in self._children[:self._n]]
        done = [False] * self._n
        for (choice,) in self._children[-1]._gen():
            i = int(choice)
            if not 0 <= i < self._n:
                raise InvalidArgumentError(f"Selector index out of range: {i} not in [0, {self._n})")
            if done[i]:
                continue
            flat = next(sources[i], None)
            if flat is None:
                if self._stop:
                    return
                done[i] = True
                continue
            yield flat

    def _rebuild(self, tensors):
        children = [c._rebuild(tensors) for c in self._children]
        return _ChooseDataset(children[:-1], children[-1], self._stop)


def _choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset):
    datasets = list(datasets)
    if not datasets or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"choose_from_datasets: datasets must be a non-empty list of datasets, got {datasets!r}")
    spec = getattr(choice_dataset, "element_spec", None)
    if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.int64 or spec.shape.rank != 0:
        raise TypeError(f"choose_from_datasets: choice_dataset must be a dataset of scalar int64 values, got "
                        f"{choice_dataset!r}")
    return _ChooseDataset(datasets, choice_dataset, bool(stop_on_empty_dataset))


def _interleave(dataset, fn, cycle_length, block_length):
    cycle = os.cpu_count() or 1 if cycle_length is None or cycle_length == -1 else _int(cycle_length, "cycle_length")
    block = 1 if block_length is None or block_length == -1 else _int(block_length, "block_length")
    if cycle <= 0 or block <= 0:
        raise InvalidArgumentError(f"interleave: cycle_length and block_length must be > 0, got {cycle}, {block}")
    return _InterleaveDataset(dataset, fn, cycle, block)


def _padded_batch(dataset, batch_size, padded_shapes, padding_values, drop_remainder):
    size = _int(batch_size, "batch_size")
    if size <= 0:
        raise InvalidArgumentError(f"batch_size must be greater than zero, got {size}")
    return _PaddedBatchDataset(dataset, size, padded_shapes, padding_values, bool(drop_remainder))


class _AssertCardinalityDataset(_Unary):
    def __init__(self, parent, expected):
        super().__init__(parent)
        self._expected = expected

    def _cardinality(self):
        return self._expected

    def _gen(self):
        n = 0
        for flat in self._parent._gen():
            n += 1
            if n > self._expected:
                raise FailedPreconditionError(f"Input dataset was expected to contain {self._expected} elements but "
                                              "contained at least " + f"{n} elements.")
            yield flat
        if n < self._expected:
            raise FailedPreconditionError(f"Input dataset was expected to contain {self._expected} elements but "
                                          f"contained only {n} elements.")

    def _rebuild(self, tensors):
        return _AssertCardinalityDataset(self._parent._rebuild(tensors), self._expected)


def assert_cardinality(dataset, expected):
    expected = _int(expected, "expected_cardinality")
    if expected < 0:
        return dataset
    return _AssertCardinalityDataset(dataset, expected)


class _Methods:
    """Dataset's methods defined here (installed on the class below: dataset.py, which holds the class, cannot
    import this module, which subclasses it)."""

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then `dataset`'s (compatible element specs: same structure and dtypes)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.concatenate expects a dataset, got {dataset!r}")
        return _ConcatenateDataset(self, dataset)

    def flat_map(self, map_func, name=None):
        """The elements of the dataset `map_func` makes from each element, one dataset after another."""
        return _FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """The datasets `map_func` makes from the elements, `cycle_length` at a time (default: the CPU count),
        `block_length` consecutive elements (default 1) from each in turn (TF's order)."""
        return _interleave(self, map_func, cycle_length, block_length)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches whose components are padded (with `padding_values`, default 0 or b"") to `padded_shapes`; a
        None dim there (or no padded_shapes) pads to the batch's longest."""
        self._check_tensors("Dataset.padded_batch")
        return _padded_batch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def scan(self, initial_state, scan_func, name=None):
        """`(state, out) = scan_func(state, element)` from `initial_state` (traced once, compiled); each out."""
        self._check_tensors("Dataset.scan")
        return _ScanDataset(self, initial_state, scan_func)

    def take_while(self, predicate, name=None):
        """The elements up to the first one for which `predicate` (traced once, compiled) is False."""
        self._check_tensors("Dataset.take_while")
        return _TakeWhileDataset(self, predicate)

    def unique(self, name=None):
        """Each distinct element once, in order of first appearance (scalar int32, int64 or string elements)."""
        return _UniqueDataset(self)

    def shard(self, num_shards, index, name=None):
        """Every num_shards-th element from element `index` on."""
        return _shard(self, num_shards, index)

    def apply(self, transformation_func):
        """`transformation_func(self)`, a function from datasets to datasets."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"Dataset.apply: the transformation must return a dataset, it returned {out!r}")
        return out

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements, one starting every `shift` (default: size) elements, taking every `stride`-th;
        each window's components are datasets (flat_map them, e.g. `lambda w: w.batch(size)`)."""
        return _window(self, size, shift, stride, drop_remainder)

    def get_single_element(self, name=None):
        """The dataset's only element (InvalidArgumentError when it has none or more than one)."""
        return _get_single_element(self)

    @staticmethod
    def counter(start=0, step=1, dtype=dtypes.int64, name=None):
        """start, start + step, ... forever."""
        return _RangeDataset(start, None, step, dtypes.as_dtype(dtype))

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """int64 values uniform in [0, 2**63) forever; the same ones for the same seed (a new sequence on each
        iteration with rerandomize_each_iteration)."""
        return _RandomDataset(seed, bool(rerandomize_each_iteration))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Elements drawn from the datasets at random, dataset i with probability weights[i] (default: equal)."""
        return _sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """For each int64 c of choice_dataset, the next element of datasets[c]."""
        return _choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


for _name, _method in vars(_Methods).items():
    if not _name.startswith("__"):
        setattr(Dataset, _name, _method)
