"""`iter(dataset)` inside a tfn.function: an iterator that compiled code makes at every call (as TF makes one per
call of the function), advanced by `next(it)` / `it.get_next()` / `for x in it` through run-time callbacks."""
import threading

from tfn.core import graph as graph_mod
from tfn.data import staging, structure
from tfn.data.optional import Optional
from tfn.dialects.errors import OperatorNotAllowedInGraphError
from tfn.dialects.locations import with_excerpt

# More `next` calls than this on one iterator in one trace: a Python loop over it that will not end.
RUNAWAY_NEXT_CALLS = 1000


class TracedIterator:
    """An iterator made in a trace: its Python iterator is made when the call reaches `iter(dataset)`."""

    def __init__(self, dataset):
        g = graph_mod.current()
        self._spec = dataset.element_spec
        inputs, make, example = dataset._tfn_pull_source(g)
        self._types = staging.component_types(self._spec, example)
        self._state = threading.local()
        self._token = staging.start_site(g, "make_iterator", self._state, make, inputs)
        self._calls = 0

    @property
    def element_spec(self):
        return self._spec

    def __iter__(self):
        return self

    def _next(self, optional):
        self._calls += 1
        if self._calls > RUNAWAY_NEXT_CALLS:
            raise OperatorNotAllowedInGraphError(with_excerpt(
                f"next() was called {self._calls} times while tracing on an iterator made by `iter(dataset)` in a "
                "tfn.function: its end is known only when the function runs, so a Python loop over it that "
                "AutoGraph did not convert never ends. Loop with `for x in dataset` in converted code, or call "
                "next() a fixed number of times.", graph_mod.user_position()))
        state = self._state

        def pull(arrays):
            return state.it
        return staging.next_site(graph_mod.current(), self._types, [self._token], pull, optional)

    def __next__(self):
        return structure.pack_like(self._spec, self._next(False))

    def get_next(self, name=None):
        return next(self)

    def get_next_as_optional(self):
        out = self._next(True)
        return Optional(structure.pack_like(self._spec, out[1:]), self._spec, out[0])

    def _tfn_staged_iteration(self):
        """`for x in it`: the elements it has left."""
        return staging.pulled_loop(graph_mod.current(), self._spec, self._types, self._state, self._token)

    def __repr__(self):
        return f"<tfn.data.Iterator element_spec={self._spec!r}>"
