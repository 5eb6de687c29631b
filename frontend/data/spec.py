"""Datasets and iterators as tfn.function arguments: their trace types, and what compiled code holds of them.

A dataset's trace type is its element spec (TF's DatasetSpec): every dataset of one element spec reuses one trace.
Where every component has a known rank and is not a string, the dataset passes as state words naming its producer
(frontend/data/native.py): the pipeline's own compiled code for in-memory pipelines, a Python one otherwise. Any
other dataset, and every iterator, passes one int64 handle naming the Python object for the call, through which
compiled code pulls its elements (runtime callbacks).
"""
import weakref

import numpy as np

from tfn import dtypes
from tfn.core import graph as graph_mod
from tfn.core.tensor import Tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.data import native, staging, structure
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
    """The trace type of a dataset (`tf.data.DatasetSpec`): its element spec."""

    __slots__ = ("_native", "_argument")

    def __init__(self, key, element_spec, example, argument):
        super().__init__(key, element_spec, example)
        self._native = native.fits(element_spec)
        self._argument = argument  # the class of the dataset a trace sees (dataset.py's _VariantDataset)

    @classmethod
    def of(cls, ds):
        return cls(("dataset", repr(ds.element_spec)), ds.element_spec, ds, ds._argument_class)

    def flatten(self):
        return [native.STATE_SPEC] if self._native else [_HANDLE_SPEC]

    def to_tensors(self, value):
        if self._native:
            return [Tensor._trusted(native.state(value), dtypes.int64)]
        return super().to_tensors(value)

    def from_tensors(self, tensors):
        if self._native:
            return self._argument(self._spec, next(tensors))
        return _HandleDataset(self._spec, next(tensors), self._example())

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
