"""`tfn.data.Iterator` (`iter(dataset)`): eagerly a Python iterator; passed to a tfn.function, compiled code
advances it through a run-time callback at every call (the guide's `good_consume_next`)."""
from tfn.core import graph_stack
from tfn.data import structure
from tfn.data.optional import Optional
from tfn.data.spec import IteratorSpec
from tfn.dialects.errors import OperatorNotAllowedInGraphError, OutOfRangeError


class Iterator:
    """An iterator over a dataset's elements: `next(it)` (StopIteration at the end), `get_next()`
    (OutOfRangeError at the end), `get_next_as_optional()`."""

    def __init__(self, dataset):
        dataset._check_eager("iter")
        self._dataset = dataset
        self._flat_iter = dataset._gen()

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        return structure.pack(self.element_spec, next(self._pull()))

    def _pull(self):
        """The Python iterator, when not tracing: a tfn.function that closes over an eager iterator would pull
        one element while it is traced and return that element, as a constant, at every call."""
        if graph_stack.current() is not None:
            raise OperatorNotAllowedInGraphError(
                "next() on an iterator made eagerly (outside the tfn.function) is not supported while tracing: the "
                "element pulled now would be a constant of the trace, the same at every call. Pass the iterator to "
                "the tfn.function as an argument (compiled code then advances it at every call), or call "
                "iter(dataset) inside the function.")
        return self._flat_iter

    def get_next(self, name=None):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None

    def get_next_as_optional(self):
        item = next(self._pull(), None)
        return Optional(None if item is None else structure.pack(self.element_spec, item), self.element_spec)

    def __tf_tracing_type__(self, context):
        return IteratorSpec.of(self)

    def __repr__(self):
        return f"<tfn.data.Iterator element_spec={self.element_spec!r}>"
