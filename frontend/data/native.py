"""Dataset arguments as compiled code sees them: per call, state words naming the pipeline's producer (their
layout: dialects/abi.py; the code that reads them: passes/lowering/dataset_calls.py).

An in-memory pipeline (from_tensor_slices, from_tensors, range, zip, map, batch, take, skip, repeat, cache,
prefetch) has a compiled producer: the tfn.function `dataset_element(k, *sources)` made of staging's compiled
indexing (a map function traced once into it), traced and compiled once per pipeline structure. Compiled code calls
it through a pointer with the pipeline's own source tensors, so one trace of a function serves every pipeline of an
element spec while each pipeline's elements still come from its own compiled code, as TF's dataset kernels do
behind its variant tensor. Any other pipeline (a generator, filter, shuffle, unbatch), and one whose producer
would call back into Python, gets a Python producer that pulls from the pipeline's Python iterator (one per loop
of the trace, started anew when the loop asks for element 0).
"""
import ctypes

import numpy as np

from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core.graph_stack import TRACE_LOCK
from tfn.core.tensor_spec import TensorSpec
from tfn.data import staging
from tfn.data.handles import lookup, register
from tfn.dialects.abi import (
    DATASET_ARGS,
    DATASET_COPY,
    DATASET_ENDLESS,
    DATASET_FN,
    DATASET_FREE,
    DATASET_HANDLE,
    DATASET_HEADER,
    DATASET_K,
    DATASET_LENGTH,
    DATASET_LOOP,
    DATASET_PENDING,
    DATASET_RESULTS,
    DATASET_SENTINEL,
    DATASET_SLOT,
    DATASET_STATUS,
    DETAIL_LEN,
)
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.types import TensorType
from tfn.tracing.polymorphic import function

STATE_SPEC = TensorSpec((None,), dtypes.int64)

_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None
_FREE = ctypes.cast(_libc.free, ctypes.c_void_p).value
_COPY = ctypes.cast(_libc.memcpy, ctypes.c_void_p).value

# (pipeline structure, source specs) -> the _Compiled producer, or None when it cannot be called natively
_PRODUCERS = {}



def fits(spec):
    """Whether datasets of this element spec pass as state words: every component of known rank, none a string
    (a string tensor is a handle into a per-call table of the calling function's runtime)."""
    return all(s.shape.rank is not None and not s.dtype.is_string for s in nest.flatten(spec))


def component_types(spec):
    return [TensorType(tuple(s.shape), s.dtype) for s in nest.flatten(spec)]


def state(dataset):
    """The int64 array of state words for one call with `dataset` (it keeps what they point to alive)."""
    return np.asarray(_Call(dataset, _compiled(dataset)))


def _result_words(types):
    return sum(3 + 2 * t.rank for t in types)


class _Call:
    """One call's state words, and the Python side of its producer: the iterators of a Python producer, the error
    a producer reported. The array handed to compiled code is a view of this object, which keeps it alive."""

    def __init__(self, dataset, compiled):
        self.dataset = dataset
        self.compiled = compiled
        self.types = component_types(dataset.element_spec)
        self.iterators = {}  # loop -> the Python iterator a Python producer pulls from
        self.error = None
        if compiled is not None:
            words = compiled.words(dataset)
        else:
            words = np.zeros(DATASET_HEADER + _result_words(self.types), np.int64)
            base = words.ctypes.data
            words[DATASET_FN] = _PULL_ADDRESS
            words[DATASET_ARGS] = base  # the Python producer reads the words themselves
            words[DATASET_LENGTH] = DATASET_ENDLESS
            words[DATASET_RESULTS] = base + 8 * DATASET_HEADER
        words[DATASET_STATUS] = 1
        words[DATASET_HANDLE] = register(self)
        words[DATASET_FREE] = _FREE
        words[DATASET_COPY] = _COPY
        self._words = words
        self.__array_interface__ = words.__array_interface__

    def __del__(self):
        """Free the results of an element no compiled take copied (its loop was left by `break`)."""
        words = getattr(self, "_words", None)
        if words is None or not words[DATASET_PENDING]:
            return
        freed, pos = set(), DATASET_HEADER if self.compiled is None else self.compiled.results_at
        for t in self.types:
            allocated = int(words[pos])
            if allocated not in freed and allocated != DATASET_SENTINEL:
                freed.add(allocated)
                _libc.free(allocated)
            pos += 3 + 2 * t.rank

    def pull(self, words):
        """The Python producer: element `words[K]` of the loop `words[LOOP]` into malloc'ed result buffers."""
        loop, k = words[DATASET_LOOP], words[DATASET_K]
        it = self.iterators.get(loop)
        if it is None or k == 0:
            it = self.iterators[loop] = iter(self.dataset._gen())
        item = next(it, None)
        if item is None:
            self.iterators.pop(loop, None)  # let the pipeline go now (a file cache's lock, a generator's resources)
            words[DATASET_STATUS] = 0
            return
        if len(item) != len(self.types):
            raise InvalidArgumentError(f"a dataset element has {len(item)} components, but its element spec "
                                       f"{self.dataset.element_spec!r} has {len(self.types)}")
        arrays = [_checked(a, t, i) for i, (a, t) in enumerate(zip(item, self.types))]
        out = (ctypes.c_int64 * _result_words(self.types)).from_address(words[DATASET_RESULTS])
        pos = 0
        for a in arrays:
            ptr = _libc.malloc(max(a.nbytes, 1))
            if not ptr:
                raise MemoryError(f"could not allocate {a.nbytes} bytes for a dataset element")
            if a.nbytes:
                ctypes.memmove(ptr, a.ctypes.data, a.nbytes)
            r = a.ndim
            out[pos:pos + 3] = [ptr, ptr, 0]
            out[pos + 3:pos + 3 + r] = a.shape
            out[pos + 3 + r:pos + 3 + 2 * r] = _strides(a.shape)
            pos += 3 + 2 * r
        words[DATASET_STATUS] = 1

    def raise_error(self):
        """Raise the error the producer reported (called back by the compiled loop that found it)."""
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        self.compiled.raise_error()


def _checked(value, t, index):
    store = np.int8 if t.dtype.is_bool else t.dtype.np
    a = np.asarray(value).astype(t.dtype.np, copy=False)
    if not a.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        a = a.copy()
    a = a.view(store)
    if a.ndim != t.rank or any(d is not None and d != s for d, s in zip(t.shape, a.shape)):
        raise InvalidArgumentError(f"component {index} of a dataset element has shape {a.shape}, but its element "
                                   f"spec says {tuple(t.shape)}")
    return a


def _strides(shape):
    out, stride = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = stride
        stride *= max(shape[i], 1)
    return out


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _pull(address):
    words = (ctypes.c_int64 * DATASET_HEADER).from_address(address)
    try:
        call = lookup(words[DATASET_HANDLE])
    except BaseException:  # noqa: BLE001  (never into C; the loop stops as at an end)
        words[DATASET_STATUS] = 0
        return
    try:
        call.pull(words)
    except BaseException as e:  # noqa: BLE001  (raised by the call: the compiled loop calls back raise_error)
        call.error = e
        words[DATASET_STATUS] = -1


_PULL_ADDRESS = ctypes.cast(_pull, ctypes.c_void_p).value


# --- compiled producers ---------------------------------------------------------------------------------------

class _Compiled:
    """A pipeline structure's compiled `dataset_element(k, *sources)`: its packed entry point, error channel and the
    layout of the state words that call it."""

    def __init__(self, concrete, source_specs):
        exe = concrete._executable
        self.concrete = concrete
        self.executable = exe
        self.entry = ctypes.cast(getattr(exe.lib, f"_mlir__mlir_ciface_{exe._name}"), ctypes.c_void_p).value
        self.slot = ctypes.cast(exe._slots[0], ctypes.c_void_p).value if exe._slots else 0
        self.out_types = list(exe.out_types)
        self.source_ranks = [s.shape.rank for s in source_specs]
        self.results_at = DATASET_HEADER  # the results struct's first word

    def words(self, dataset):
        """The state words of a call with `dataset`: header, results struct, k's descriptor, the sources'
        descriptors, the argument cells and the argument array the entry point takes."""
        sources = [t._value for t in dataset._sources()]
        res_at = self.results_at
        k_at = res_at + _result_words(self.out_types)
        src_at = k_at + 3
        cells_at = src_at + sum(3 + 2 * r for r in self.source_ranks)
        n_args = 2 + len(sources)
        argv_at = cells_at + n_args
        words = np.zeros(argv_at + n_args, np.int64)
        base = words.ctypes.data
        words[DATASET_FN] = self.entry
        words[DATASET_ARGS] = base + 8 * argv_at
        words[DATASET_LENGTH] = _length(dataset)
        words[DATASET_SLOT] = self.slot
        words[DATASET_RESULTS] = base + 8 * res_at
        words[k_at:k_at + 3] = [DATASET_SENTINEL, base + 8 * DATASET_K, 0]
        if self.slot:  # an error an earlier call left unread (its call had already failed) is not this call's
            ctypes.c_int32.from_address(self.executable._slots[0]()).value = 0
        descriptors, pos = [base + 8 * res_at, base + 8 * k_at], src_at
        for a in sources:
            r = a.ndim
            words[pos:pos + 3] = [DATASET_SENTINEL, a.ctypes.data, 0]  # never freed by anyone
            words[pos + 3:pos + 3 + r] = a.shape
            words[pos + 3 + r:pos + 3 + 2 * r] = _strides(a.shape)
            descriptors.append(base + 8 * pos)
            pos += 3 + 2 * r
        words[cells_at:cells_at + n_args] = descriptors
        words[argv_at:argv_at + n_args] = base + 8 * np.arange(cells_at, cells_at + n_args, dtype=np.int64)
        return words

    def raise_error(self):
        """Raise the error this thread's call of the producer recorded (and clear it)."""
        exe = self.executable
        flag = ctypes.c_int32.from_address(exe._slots[0]())
        detail = (ctypes.c_int64 * DETAIL_LEN).from_address(exe._slots[1]())
        code, details = flag.value, list(detail)
        flag.value = 0
        exe._raise_error(code, details)


def _length(dataset):
    n = dataset._cardinality()
    return DATASET_ENDLESS if n < 0 else min(n, DATASET_ENDLESS)


def _compiled(dataset):
    """The compiled producer of an in-memory pipeline, or None (then a Python producer)."""
    if not dataset._indexable() or dataset._symbolic():
        return None
    sliced = {id(t) for t in dataset._sliced_sources()}
    specs = [TensorSpec([None] + list(t.shape)[1:] if id(t) in sliced else t.shape, t.dtype)
             for t in dataset._sources()]
    key = (dataset._type_key(), tuple(specs))
    with TRACE_LOCK:
        if key not in _PRODUCERS:
            _PRODUCERS[key] = _compile(dataset, specs)
        return _PRODUCERS[key]


def _compile(dataset, specs):
    skeleton = [dataset]  # what the one trace rebuilds on its symbolic sources (then let go)

    def dataset_element(k, *sources):
        pipeline = skeleton[0]._rebuild(iter(sources))
        _, get, _ = staging.index(graph_mod.current(), pipeline)
        return tuple(get(k))
    fn = function(dataset_element, input_signature=[TensorSpec((), dtypes.int64)] + list(specs))
    try:
        concrete = fn.get_concrete_function()
    finally:
        skeleton.clear()
    types = component_types(dataset.element_spec)
    if concrete.graph.callbacks or concrete._stateful or concrete.placement is not None or \
            [tuple(kind_v) for kind_v in concrete._out_leaves] != [("result", i) for i in range(len(types))]:
        return None
    concrete._compile()
    exe = concrete._executable
    if exe.framed or concrete.placement is not None or len(exe.in_types) != 1 + len(specs) or \
            any(t.rank != u.rank or any(d is not None and d != e for d, e in zip(u.shape, t.shape))
                for t, u in zip(exe.out_types, types)) or \
            not hasattr(exe.lib, f"_mlir__mlir_ciface_{exe._name}"):
        return None
    return _Compiled(concrete, specs)
