"""Datasets and iterators as tfn.function arguments: their trace types, and the handles compiled code holds.

An indexable dataset (frontend/data/staging.py) passes its source tensors, with the first dimension of sliced
ones unknown: datasets of the same pipeline over data of any length reuse one trace. Any other dataset, and
every iterator, passes one int64 handle naming the Python object for the call; equal element specs reuse a trace.
An indexable dataset's type is a subtype of the handle type of its element spec: when a function traced for one
pipeline is called with another pipeline of the same element spec, it traces once for the handle type, which
every later pipeline of that spec reuses (TF's one trace per element spec), while the first pipeline keeps its
compiled indexing.
"""
import weakref

import numpy as np

from tfn.core import graph as graph_mod
from tfn.core.tensor import Tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.data import staging, structure
from tfn.data.handles import register
from tfn.data.optional import Optional
from tfn.data.traced_iterator import TracedIterator
from tfn.tracing.trace import TraceType

_HANDLE_SPEC = TensorSpec((), "int64")


class _HandleType(TraceType):
    """A type passing a handle; equal when the key is (the element spec's)."""

    __slots__ = ("_key", "_spec", "_example")

    def __init__(self, key, element_spec, example):
        self._key = key
        self._spec = element_spec
        # What a trace learns unknown ranks from; not part of the type.
        self._example = weakref.ref(example) if example is not None else (lambda: None)

    def is_subtype_of(self, other):
        return self == other

    def most_specific_common_supertype(self, others):
        return self if all(self == o for o in others) else None

    def placeholder_value(self, placeholder_context=None):
        raise ValueError(f"{self!r} is made of tensors: trace it with from_tensors")

    def flatten(self):
        return [_HANDLE_SPEC]

    def to_tensors(self, value):
        return [Tensor(np.int64(register(value)))]

    def __eq__(self, other):
        return type(other) is type(self) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


class DatasetSpec(_HandleType):
    """The trace type of a dataset (`tf.data.DatasetSpec`)."""

    __slots__ = ("_sources",)

    def __init__(self, key, element_spec, example, sources):
        super().__init__(key, element_spec, example)
        self._sources = sources  # the source tensors' types of an indexable dataset, else None

    @classmethod
    def of(cls, ds):
        if ds._indexable():
            sliced = {id(t) for t in ds._sliced_sources()}
            sources = [TensorSpec([None] + list(t.shape)[1:] if id(t) in sliced else t.shape, t.dtype)
                       for t in ds._sources()]
            return cls(("indexed", ds._type_key(), tuple(sources)), ds.element_spec, ds, sources)
        return cls(("handle", repr(ds.element_spec)), ds.element_spec, ds, None)

    def flatten(self):
        return list(self._sources) if self._sources is not None else [_HANDLE_SPEC]

    def _handle_type(self):
        return DatasetSpec(("handle", repr(self._spec)), self._spec, self._example(), None)

    def _same_elements(self, other):
        return type(other) is DatasetSpec and repr(other._spec) == repr(self._spec)

    def is_subtype_of(self, other):
        """Equal types; and an indexable dataset passes as a handle to a trace for any dataset of its elements."""
        return self == other or (self._same_elements(other) and other._sources is None)

    def most_specific_common_supertype(self, others):
        if all(self == o for o in others):
            return self
        if all(self._same_elements(o) for o in others):
            return self._handle_type()
        return None

    def tfn_shared_supertype(self, other):
        """The type a new trace takes when a trace for `other` exists (trace_type.FunctionType.shared_with):
        the handle type when `other` is another pipeline of the same elements, so that pipelines share a trace."""
        if self != other and self._same_elements(other):
            return self._handle_type()
        return None

    def to_tensors(self, value):
        if self._sources is not None:
            return value._sources()
        return super().to_tensors(value)

    def placeholder_value(self, placeholder_context=None):
        """A dataset without source tensors (range) is its own value in the trace."""
        if self.flatten():
            return super().placeholder_value(placeholder_context)
        return self.from_tensors(iter(()))

    def from_tensors(self, tensors):
        example = self._example()
        if self._sources is not None:
            return example._rebuild(tensors)
        return _HandleDataset(self._spec, next(tensors), example)

    def __repr__(self):
        return f"DatasetSpec({self._spec!r}, TensorShape([]))"


class IteratorSpec(_HandleType):
    """The trace type of an iterator (`tf.data.IteratorSpec`)."""

    __slots__ = ()

    @classmethod
    def of(cls, it):
        return cls(("iterator", repr(it.element_spec)), it.element_spec, it._dataset)

    def from_tensors(self, tensors):
        return SymbolicIterator(self._spec, next(tensors), self._example())

    def __repr__(self):
        return f"IteratorSpec({self._spec!r})"


class _HandleDataset:
    """A dataset argument inside a trace that compiled code iterates through callbacks (`for x in ds`)."""

    def __init__(self, spec, handle, example):
        self._spec = spec
        self._handle = handle
        self._example = example

    @property
    def element_spec(self):
        return self._spec

    def _tfn_staged_iteration(self):
        return staging.callback_iteration(graph_mod.current(), self, self._handle, self._example)

    def _tfn_pull_source(self, g):
        return staging.handle_source(self._handle, self._example)

    def __iter__(self):
        return TracedIterator(self)

    def __repr__(self):
        return repr(self._example) if self._example is not None else f"<Dataset element_spec={self._spec!r}>"


class SymbolicIterator:
    """An Iterator argument inside a trace: each `next` is a call back into the Iterator of the current call."""

    def __init__(self, spec, handle, example):
        self._spec = spec
        self._handle = handle
        self._example = example  # the dataset of the iterator traced with (unknown ranks are learned from it)

    @property
    def element_spec(self):
        return self._spec

    def __iter__(self):
        return self

    def __next__(self):
        out = staging.iterator_next(graph_mod.current(), self._handle, self._spec, self._example)
        return structure.pack_like(self._spec, out)

    get_next = __next__

    def get_next_as_optional(self):
        out = staging.iterator_next(graph_mod.current(), self._handle, self._spec, self._example, optional=True)
        return Optional(structure.pack_like(self._spec, out[1:]), self._spec, out[0])

    def __repr__(self):
        return f"<tfn.data.Iterator element_spec={self._spec!r}>"
