"""`tfn.data.Dataset`: input pipelines as TF writes them, iterated eagerly in Python or looped over in a trace.

Eagerly, each dataset is a Python generator over elements held as flat tuples of NumPy arrays (the element
spec gives their structure). In a tfn.function, `for x in dataset` becomes one scf.while (frontend/data/staging.py):
in-memory pipelines are indexed by compiled code, the others are pulled through a run-time callback. A dataset
passed to a function is its argument by element spec (frontend/data/spec.py): the compiled loop calls the
pipeline's producer (frontend/data/native.py).
Class names are TensorFlow's, since reprs show them (`<_TensorSliceDataset element_spec=...>`).
"""
import itertools
import os
import queue
import threading

import numpy as np

from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, Tensor, convert_to_tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.data import file_cache, staging, structure
from tfn.data.handles import lookup
from tfn.data.iterator import Iterator
from tfn.data.spec import DatasetSpec
from tfn.data.traced_iterator import TracedIterator
from tfn.dialects.abi import DATASET_HANDLE
from tfn.dialects.errors import InvalidArgumentError
from tfn.tracing import trace_type
from tfn.tracing.polymorphic import PolymorphicFunction, function

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Dataset:
    """A sequence of elements of one structure (`element_spec`), built from sources and transformations."""

    _children = ()

    def __init__(self, spec):
        self._spec = spec

    # --- the element structure, reprs, Python iteration ---

    @property
    def element_spec(self):
        return self._spec

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self._spec!r}>"

    def __iter__(self):
        if graph_mod.current() is not None:  # made by compiled code at every call
            self._check_tensors("A loop in a tfn.function")
            return TracedIterator(self)
        return Iterator(self)

    def _check_tensors(self, what):
        """TypeError when the elements hold datasets (Dataset.window's), which compiled code cannot hold."""
        if structure.has_windows(self._spec):
            raise TypeError(f"{what} needs elements of tensors, but {self._spec!r} holds datasets (Dataset.window's): "
                            "flat_map the windows into tensors first, e.g. `.flat_map(lambda w: w.batch(size))`")

    def __bool__(self):
        return True

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def as_numpy_iterator(self):
        """The elements as NumPy values (0-d components as NumPy scalars)."""
        self._check_eager("as_numpy_iterator")
        return (structure.pack_numpy(self._spec, flat) for flat in self._gen())

    def cardinality(self):
        """The number of elements as an int64 tensor; INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return Tensor(np.int64(self._cardinality()))

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        """A Python generator over the elements as flat tuples of arrays (each call starts over)."""
        raise NotImplementedError(type(self).__name__)

    def _check_eager(self, what):
        if self._symbolic():
            raise TypeError(f"{what}() of {self!r} needs eager values, but the dataset is built on symbolic tensors "
                            "of a tfn.function trace; loop over it with `for` inside the function instead")

    def _symbolic(self):
        """Whether a source of this pipeline holds symbolic tensors (built inside a trace)."""
        return any(c._symbolic() for c in self._children)

    # --- compiled iteration (frontend/data/staging.py) and the trace type (frontend/data/spec.py) ---

    def _indexable(self):
        """Whether compiled code can compute element k directly (in-memory sources and index-preserving ops)."""
        return False

    def _sources(self):
        """The source tensors of an indexable pipeline, in a fixed order."""
        return [t for c in self._children for t in c._sources()]

    def _sliced_sources(self):
        """The sources sliced along their first dimension (a trace lets their row count vary)."""
        return [t for c in self._children for t in c._sliced_sources()]

    def _type_key(self):
        """What, beside its source tensors' types, decides the compiled loop of an indexable pipeline."""
        return (type(self).__name__, tuple(c._type_key() for c in self._children))

    def _rebuild(self, tensors):
        """This pipeline with its source tensors taken in order from the iterator `tensors`."""
        raise NotImplementedError(type(self).__name__)

    def __tf_tracing_type__(self, context):
        self._check_tensors("A tfn.function argument")
        return DatasetSpec.of(self)

    def _tfn_staged_iteration(self):
        """(initial loop counter, has_next(k), advance(k) -> (element, next k)) for a loop in the current trace."""
        self._check_tensors("A loop in a tfn.function")
        return staging.iteration(self)

    def _tfn_pull_source(self, g):
        """(callback inputs, make(arrays) -> Python iterator, example) for an iterator made in a trace."""
        return staging.pipeline_source(g, self)

    # --- sources ---

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of the tensors (sliced along their first dimension)."""
        return _TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        """One element: the tensors."""
        return _TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """The values a Python generator yields, for each iteration a new call of `generator(*args)`."""
        return _FlatMapDataset(generator, _generator_spec(output_types, output_shapes, output_signature), args)

    @staticmethod
    def range(*args, output_type=None, name=None):
        """`range(stop)`, `range(start, stop[, step])` as int64 scalars (or `output_type`)."""
        r = range(*args)
        return _RangeDataset(r.start, r.stop, r.step, dtypes.as_dtype(output_type or dtypes.int64))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side (a tuple or dict of datasets, or datasets as arguments)."""
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        for d in nest.flatten(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip() expects datasets, got {d!r}")
        return _ZipDataset(datasets)

    # --- transformations ---

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Apply `map_func` to each element (traced once as a tfn.function, and compiled)."""
        self._check_tensors("Dataset.map")
        return _MapDataset(self, map_func)

    def filter(self, predicate, name=None):
        """The elements for which `predicate` (traced once, compiled) is True."""
        self._check_tensors("Dataset.filter")
        return _FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Consecutive elements stacked in batches of `batch_size` (the last one smaller unless dropped)."""
        self._check_tensors("Dataset.batch")
        return _BatchDataset(self, _positive(batch_size, "batch_size"), bool(drop_remainder))

    def unbatch(self, name=None):
        """Each element's rows as elements (the inverse of batch)."""
        self._check_tensors("Dataset.unbatch")
        return _UnbatchDataset(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Elements in random order, drawn from a buffer of `buffer_size` elements (TF's algorithm)."""
        return _ShuffleDataset(self, _positive(buffer_size, "buffer_size"), seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        """The elements `count` times over (forever when None or -1)."""
        return _RepeatDataset(self, -1 if count is None else int(count))

    def take(self, count, name=None):
        """The first `count` elements (all when -1)."""
        return _TakeDataset(self, int(count))

    def skip(self, count, name=None):
        """All but the first `count` elements (none when -1)."""
        return _SkipDataset(self, int(count))

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index an int64 counting from `start`."""
        return Dataset.zip((_RangeDataset(start, None, 1, dtypes.int64), self))

    def cache(self, filename="", name=None):
        """The elements, computed by the first full iteration and read from memory (or from files under the
        prefix `filename`, frontend/data/file_cache.py) afterwards."""
        self._check_tensors("Dataset.cache")
        if isinstance(filename, Tensor):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode()
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"Dataset.cache: filename must be a string, got {filename!r}")
        filename = os.fspath(filename)
        return _FileCacheDataset(self, filename) if filename else _CacheDataset(self)

    def prefetch(self, buffer_size, name=None):
        """The elements, produced ahead on a background thread into a buffer of `buffer_size` (AUTOTUNE: 2)."""
        return _PrefetchDataset(self, 2 if buffer_size == AUTOTUNE else _positive(buffer_size, "buffer_size"))

    def reduce(self, initial_state, reduce_func, name=None):
        """`state = reduce_func(state, element)` over all elements, from `initial_state`; the final state."""
        return staging.reduce(self, initial_state, reduce_func)

    # (more transformations and sources: frontend/data/combinators.py installs them)




def _positive(n, what):
    n = int(n.numpy()) if isinstance(n, Tensor) else int(n)
    if n <= 0:
        raise InvalidArgumentError(f"{what} must be greater than zero, got {n}")
    return n


def _generator_spec(output_types, output_shapes, output_signature):
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator: give either output_signature or output_types (and output_shapes)")
        for s in nest.flatten(output_signature):
            if not isinstance(s, TensorSpec):
                raise TypeError(f"from_generator: output_signature must hold tfn.TensorSpec values, got {s!r}")
        return output_signature
    if output_types is None:
        raise TypeError("from_generator: output_signature (or output_types) is required")
    if output_shapes is None:
        return nest.map_structure(lambda t: TensorSpec(None, dtypes.as_dtype(t)), output_types)
    shapes = nest.flatten(output_shapes) if nest.is_nested(output_types) else [output_shapes]
    return nest.pack_sequence_as(output_types, [TensorSpec(s, dtypes.as_dtype(t)) for t, s in
                                                zip(nest.flatten(output_types), shapes)])


# --- sources ------------------------------------------------------------------------------------------------------

class _Source(Dataset):
    """A dataset over tensors (eager, or symbolic when built in a trace)."""

    def __init__(self, spec, tensors):
        super().__init__(spec)
        self._tensors = tensors
        self._flat = nest.flatten(tensors)

    def _symbolic(self):
        return any(isinstance(t, SymbolicTensor) for t in self._flat)

    def _sliced_sources(self):
        return list(self._flat) if isinstance(self, _TensorSliceDataset) else []

    def _arrays(self):
        self._check_eager("iteration")
        return [t._value for t in self._flat]

    def _indexable(self):
        return True

    def _sources(self):
        return list(self._flat)

    def _type_key(self):
        return (type(self).__name__, repr(self._spec), nest.structure_key(self._tensors))

    def _rebuild(self, tensors):
        return type(self)(nest.pack_sequence_as(self._tensors, [next(tensors) for _ in self._flat]))


class _TensorSliceDataset(_Source):
    _index_kind = "slices"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, tensors):
        tensors = structure.to_tensors(tensors)
        flat = nest.flatten(tensors)
        if not flat:
            raise ValueError("from_tensor_slices: no tensors given")
        for t in flat:
            if t.shape.rank == 0:
                raise ValueError(f"from_tensor_slices: cannot slice a scalar tensor {t!r}")
        dims = {t.shape[0] for t in flat} - {None}
        if len(dims) > 1:
            raise ValueError(f"from_tensor_slices: all tensors must have the same first dimension, got "
                             f"{[t.shape[0] for t in flat]}")
        spec = nest.map_structure(lambda t: TensorSpec(list(t.shape)[1:], t.dtype), tensors)
        super().__init__(spec, tensors)

    def _rows(self):
        n = self._flat[0].shape[0]
        return n

    def _cardinality(self):
        n = self._rows()
        return UNKNOWN_CARDINALITY if n is None else n

    def _gen(self):
        arrays = self._arrays()
        for i in range(len(arrays[0])):
            yield tuple(a[i] for a in arrays)

    def _gen_batches(self, size, drop):
        """What `batch(size, drop)` yields, each batch sliced at once rather than stacked row by row (read-only views
        of the sources, as the rows are)."""
        arrays = self._arrays()
        n = len(arrays[0])
        for i in range(0, n - n % size if drop else n, size):
            yield tuple(a[i:i + size] for a in arrays)


class _TensorDataset(_Source):
    _index_kind = "tensors"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, tensors):
        tensors = structure.to_tensors(tensors)
        super().__init__(structure.spec_of(tensors), tensors)

    def _cardinality(self):
        return 1

    def _gen(self):
        yield tuple(self._arrays())


class _RangeDataset(Dataset):
    """start, start + step, ... up to stop (forever when stop is None: enumerate's counter)."""
    _index_kind = "range"  # how compiled code indexes it (frontend/data/staging.py)


    def __init__(self, start, stop, step, dtype):
        super().__init__(TensorSpec((), dtype))
        if step == 0:
            raise InvalidArgumentError("Dataset.range: step must not be 0")
        self._range = (int(start), None if stop is None else int(stop), int(step))
        self._dtype = dtype

    def _len(self):
        start, stop, step = self._range
        return None if stop is None else len(range(start, stop, step))

    def _cardinality(self):
        n = self._len()
        return INFINITE_CARDINALITY if n is None else n

    def _gen(self):
        start, stop, step = self._range
        values = itertools.count(start, step) if stop is None else range(start, stop, step)
        t = self._dtype.np
        for v in values:
            yield (np.asarray(v, t),)

    def _indexable(self):
        return True

    def _type_key(self):
        return ("range", self._range, self._dtype.name)

    def _rebuild(self, tensors):
        return self


class _FlatMapDataset(Dataset):
    """from_generator (TF builds it as a flat_map over the generator's calls, hence the name)."""

    def __init__(self, generator, spec, args):
        super().__init__(spec)
        if not callable(generator):
            raise TypeError(f"from_generator: generator must be callable, got {generator!r}")
        self._generator = generator
        self._args = tuple(args or ())

    def _gen(self):
        what = f"the generator {getattr(self._generator, '__name__', self._generator)!r}"
        for value in self._generator(*self._args):
            yield structure.flat_arrays(self._spec, value, what)

    def _rebuild(self, tensors):
        return self


# --- transformations ------------------------------------------------------------------------------------------

class _ZipDataset(Dataset):
    _index_kind = "zip"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, datasets):
        super().__init__(nest.map_structure(lambda d: d.element_spec, datasets))
        self._datasets = datasets
        self._children = tuple(nest.flatten(datasets))

    def _cardinality(self):
        ns = [c._cardinality() for c in self._children]
        known = [n for n in ns if n >= 0]
        if known:
            return min(known) if UNKNOWN_CARDINALITY not in ns else UNKNOWN_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in ns else INFINITE_CARDINALITY

    def _gen(self):
        for items in zip(*(c._gen() for c in self._children)):
            yield tuple(a for item in items for a in item)

    def _indexable(self):
        return all(c._indexable() for c in self._children)

    def _rebuild(self, tensors):
        return _ZipDataset(nest.pack_sequence_as(self._datasets, [c._rebuild(tensors) for c in self._children]))


class _Unary(Dataset):
    """A transformation of one input dataset."""

    def __init__(self, parent, spec=None):
        super().__init__(parent.element_spec if spec is None else spec)
        self._parent = parent
        self._children = (parent,)

    def _cardinality(self):
        return self._parent._cardinality()


def _compiled(fn, spec, what):
    """(fn as a tfn.function, its output spec, None or (what, the enclosing function's tensor it uses)) for
    elements of `spec`. A function using a tensor of the enclosing trace cannot be traced on its own: its output spec
    comes from a trial trace in the enclosing function, where compiled code runs it (frontend/data/staging.py)."""
    if any(s.shape.rank is None for s in nest.flatten(spec)):
        raise ValueError(f"{what}: the input elements have components of unknown rank ({spec!r}); give "
                         "from_generator an output_signature with shapes")
    compiled = fn if isinstance(fn, PolymorphicFunction) else function(fn)
    try:
        concrete = compiled.get_concrete_function(*structure.as_args(spec))
    except TypeError as e:
        leaked = getattr(e, "leaked", None)
        if leaked is None or graph_mod.current() is None or leaked.graph is not graph_mod.current():
            raise
        out = staging.inline_outputs(compiled, spec)
        return compiled, nest.map_structure(_leaf_spec, out), (what, leaked)
    out = trace_type.placeholder(concrete.function_type.output, lambda s: s)
    return compiled, nest.map_structure(_leaf_spec, out), None


def _leaf_spec(v):
    if isinstance(v, TensorSpec):
        return v
    t = convert_to_tensor(v)
    return TensorSpec(t.shape, t.dtype)


class _MapDataset(_Unary):
    _index_kind = "map"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, fn):
        compiled, spec, captured = _compiled(fn, parent.element_spec, "Dataset.map")
        super().__init__(parent, spec)
        self._fn, self._user_fn = compiled, fn
        self._captured = captured  # (what, a tensor of the enclosing trace the function uses) or None

    def _gen(self):
        pspec = self._parent.element_spec
        for flat in self._parent._gen():
            out = self._fn(*structure.as_args(structure.pack(pspec, flat)))
            yield structure.flat_arrays(self._spec, out, "the map function")

    def _indexable(self):
        return self._parent._indexable()

    def _type_key(self):
        return ("map", self._user_fn, self._parent._type_key())

    def _rebuild(self, tensors):
        m = _Unary.__new__(_MapDataset)
        _Unary.__init__(m, self._parent._rebuild(tensors), self._spec)
        m._fn, m._user_fn, m._captured = self._fn, self._user_fn, self._captured
        return m


class _FilterDataset(_Unary):
    _index_kind = "filter"  # how compiled code scans it (frontend/data/staging.py)

    def __init__(self, parent, predicate):
        super().__init__(parent)
        self._fn, out, self._captured = _compiled(predicate, parent.element_spec, "Dataset.filter")
        if not isinstance(out, TensorSpec) or out.dtype.name != "bool" or out.shape.rank != 0:
            raise ValueError(f"Dataset.filter: the predicate must return a scalar bool tensor, it returns {out!r}")

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        spec = self._spec
        for flat in self._parent._gen():
            if bool(self._fn(*structure.as_args(structure.pack(spec, flat))).numpy()):
                yield flat

    def _rebuild(self, tensors):
        f = _Unary.__new__(_FilterDataset)
        _Unary.__init__(f, self._parent._rebuild(tensors))
        f._fn, f._captured = self._fn, self._captured
        return f


class _BatchDataset(_Unary):
    _index_kind = "batch"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, size, drop):
        super().__init__(parent, structure.batched(parent.element_spec, size if drop else None))
        self._size, self._drop = size, drop

    def _cardinality(self):
        return batched_cardinality(self._parent._cardinality(), self._size, self._drop)

    def _gen(self):
        if isinstance(self._parent, _TensorSliceDataset):  # the common input pipeline: no per-row Python work
            yield from self._parent._gen_batches(self._size, self._drop)
            return
        buf = []
        for flat in self._parent._gen():
            buf.append(flat)
            if len(buf) == self._size:
                yield _stack(buf)
                buf = []
        if buf and not self._drop:
            yield _stack(buf)

    def _indexable(self):
        return self._parent._indexable()

    def _type_key(self):
        return ("batch", self._size, self._drop, self._parent._type_key())

    def _rebuild(self, tensors):
        return _BatchDataset(self._parent._rebuild(tensors), self._size, self._drop)


def batched_cardinality(n, size, drop):
    """Batches of `size` from n elements (the last smaller unless dropped); n itself when unknown or infinite."""
    if n < 0:
        return n
    return n // size if drop else -(-n // size)


def _stack(rows):
    out = []
    for i, column in enumerate(zip(*rows)):
        first = column[0].shape
        for j, a in enumerate(column):
            if a.shape != first:
                raise InvalidArgumentError(
                    f"Cannot batch tensors with different shapes in component {i}. First element had shape "
                    f"{list(first)} and element {j} had shape {list(a.shape)}.")
        out.append(np.stack(column))
    return tuple(out)


class _UnbatchDataset(_Unary):
    def __init__(self, parent):
        super().__init__(parent, structure.unbatched(parent.element_spec, "Dataset.unbatch"))

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _gen(self):
        for flat in self._parent._gen():
            n = {len(a) for a in flat}
            if len(n) > 1:
                raise InvalidArgumentError(f"Dataset.unbatch: the components' first dimensions differ: "
                                           f"{[len(a) for a in flat]}")
            for i in range(n.pop() if n else 0):
                yield tuple(a[i] for a in flat)

    def _rebuild(self, tensors):
        return _UnbatchDataset(self._parent._rebuild(tensors))


class _ShuffleDataset(_Unary):
    def __init__(self, parent, buffer_size, seed, reshuffle):
        super().__init__(parent)
        self._buffer_size = buffer_size
        self._user_seed = seed
        # Without a seed a random one; fixed for all iterations unless each iteration reshuffles.
        self._seed = int(np.random.SeedSequence().entropy % (1 << 63)) if seed is None else int(seed)
        self._reshuffle = True if reshuffle is None else bool(reshuffle)
        self._epoch = 0

    def _gen(self):
        epoch = self._epoch
        if self._reshuffle:
            self._epoch += 1
        rng = np.random.default_rng([self._seed, epoch])
        source = self._parent._gen()
        buf = list(itertools.islice(source, self._buffer_size))
        while buf:
            i = int(rng.integers(len(buf)))
            out = buf[i]
            nxt = next(source, None)
            if nxt is None:
                buf[i] = buf[-1]
                buf.pop()
            else:
                buf[i] = nxt
            yield out

    def _rebuild(self, tensors):
        """Rebuilt at a call of the function that made it: a new random seed unless the user gave one (TF makes
        the dataset anew at each call, so a seeded one gives the same order every call)."""
        return _ShuffleDataset(self._parent._rebuild(tensors), self._buffer_size, self._user_seed, self._reshuffle)


class _RepeatDataset(_Unary):
    _index_kind = "repeat"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, count):
        super().__init__(parent)
        self._count = count

    def _cardinality(self):
        n = self._parent._cardinality()
        if n == 0 or self._count == 0:
            return 0
        if self._count < 0:
            return INFINITE_CARDINALITY if n != UNKNOWN_CARDINALITY else UNKNOWN_CARDINALITY
        return n * self._count if n >= 0 else n

    def _gen(self):
        for _ in itertools.count() if self._count < 0 else range(self._count):
            seen = False
            for flat in self._parent._gen():
                seen = True
                yield flat
            if not seen:  # an empty input repeats to nothing, not to an endless loop
                return

    def _indexable(self):
        return self._parent._indexable()

    def _type_key(self):
        return ("repeat", self._count, self._parent._type_key())

    def _rebuild(self, tensors):
        return _RepeatDataset(self._parent._rebuild(tensors), self._count)


class _TakeDataset(_Unary):
    _index_kind = "take"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, count):
        super().__init__(parent)
        self._count = count

    def _cardinality(self):
        n = self._parent._cardinality()
        if self._count < 0:
            return n
        return self._count if n == INFINITE_CARDINALITY else n if n == UNKNOWN_CARDINALITY else min(n, self._count)

    def _gen(self):
        src = self._parent._gen()
        return src if self._count < 0 else itertools.islice(src, self._count)

    def _indexable(self):
        return self._parent._indexable()

    def _type_key(self):
        return ("take", self._count, self._parent._type_key())

    def _rebuild(self, tensors):
        return _TakeDataset(self._parent._rebuild(tensors), self._count)


class _SkipDataset(_Unary):
    _index_kind = "skip"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, count):
        super().__init__(parent)
        self._count = count

    def _cardinality(self):
        n = self._parent._cardinality()
        if n < 0:
            return n if self._count >= 0 or n == UNKNOWN_CARDINALITY else 0
        return 0 if self._count < 0 else max(n - self._count, 0)

    def _gen(self):
        if self._count < 0:
            for _ in self._parent._gen():
                pass
            return iter(())
        return itertools.islice(self._parent._gen(), self._count, None)

    def _indexable(self):
        return self._parent._indexable() and self._count >= 0

    def _type_key(self):
        return ("skip", self._count, self._parent._type_key())

    def _rebuild(self, tensors):
        return _SkipDataset(self._parent._rebuild(tensors), self._count)


class _CacheDataset(_Unary):
    _index_kind = "same"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent):
        super().__init__(parent)
        self._cache = None
        self._lock = threading.Lock()

    def _gen(self):
        with self._lock:
            cached = self._cache
        if cached is not None:
            yield from cached
            return
        rows = []
        for flat in self._parent._gen():
            rows.append(flat)
            yield flat
        with self._lock:  # only a complete pass fills the cache
            self._cache = rows

    def _indexable(self):
        return self._parent._indexable()

    def _rebuild(self, tensors):
        return _CacheDataset(self._parent._rebuild(tensors))


class _FileCacheDataset(_Unary):
    """cache(filename): the first full iteration writes the elements to files, later ones read them."""

    def __init__(self, parent, filename):
        super().__init__(parent)
        self._filename = filename

    def _gen(self):
        spec_key = repr(self._spec)
        cached = file_cache.read(self._filename, spec_key)
        if cached is not None:
            yield from cached
            return
        writer = file_cache.Writer(self._filename)
        cached = file_cache.read(self._filename, spec_key)  # finished by another iterator before the lock was taken
        if cached is not None:
            writer.abandon(early=False)
            yield from cached
            return
        finished = False
        try:
            for flat in self._parent._gen():
                writer.add(flat)
                yield flat
            writer.finish(spec_key, len(nest.flatten(self._spec)))
            finished = True
        except GeneratorExit:
            writer.abandon(early=True)
            finished = True
            raise
        finally:
            if not finished:
                writer.abandon(early=False)

    def _rebuild(self, tensors):
        return _FileCacheDataset(self._parent._rebuild(tensors), self._filename)


_END = object()


class _PrefetchDataset(_Unary):
    _index_kind = "same"  # how compiled code indexes it (frontend/data/staging.py)

    def __init__(self, parent, buffer_size):
        super().__init__(parent)
        self._buffer_size = buffer_size

    def _gen(self):
        """Elements produced on a background thread; its error, if any, after the elements made before it."""
        q = queue.Queue(self._buffer_size)
        stop = threading.Event()
        worker = threading.Thread(target=_produce, args=(self._parent._gen(), q, stop), daemon=True,
                                  name="tfn.data.prefetch")
        worker.start()
        try:
            while True:
                item = q.get()
                if item is _END:
                    return
                if isinstance(item, _Raised):
                    raise item.error
                yield item
        finally:
            stop.set()
            while worker.is_alive():  # unblock a producer waiting on a full queue
                try:
                    q.get_nowait()
                except queue.Empty:
                    worker.join(0.01)

    def _indexable(self):
        return self._parent._indexable()

    def _type_key(self):
        return ("prefetch", self._parent._type_key())

    def _rebuild(self, tensors):
        return _PrefetchDataset(self._parent._rebuild(tensors), self._buffer_size)


class _VariantDataset(Dataset):
    """A dataset argument inside a trace (TF's name for it), passed as the call's state words
    (frontend/data/native.py): `for x in ds` asks the call's producer for each element; any other use (iter,
    transformations) rebuilds on the dataset the state words name and pulls through Python."""

    def __init__(self, spec, state):
        super().__init__(spec)
        self._state = state

    def _symbolic(self):
        return True

    def _sources(self):
        return [self._state]

    def _rebuild(self, tensors):
        return lookup(int(np.asarray(next(tensors)._value)[DATASET_HANDLE])).dataset

    def _tfn_staged_iteration(self):
        return staging.state_iteration(graph_mod.current(), self._state, self._spec)


Dataset._argument_class = _VariantDataset


class _Raised:
    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def _produce(source, q, stop):
    try:
        for item in source:
            if stop.is_set():
                return
            q.put(item)
        q.put(_END)
    except BaseException as e:  # noqa: BLE001  (handed to the consumer, raised on its thread)
        q.put(_Raised(e))
