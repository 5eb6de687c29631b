"""The TraceType protocol (`tfn.types.experimental.TraceType`): what tfn.function matches calls by."""
import abc


class PlaceholderContext:
    """Passed to `placeholder_value`: the graph being traced (None outside a trace)."""

    __slots__ = ("graph",)

    def __init__(self, graph=None):
        self.graph = graph


class TraceType(metaclass=abc.ABCMeta):
    """The type of a tfn.function argument: calls whose types are subtypes of a trace's reuse that trace.

    A subclass defines `is_subtype_of`, `most_specific_common_supertype`, `placeholder_value`, `__eq__` and
    `__hash__`, as TensorFlow's `tf.types.experimental.TraceType`.
    """

    __slots__ = ()

    @abc.abstractmethod
    def is_subtype_of(self, other):
        """Whether every value of this type is also a value of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """The most specific type that this type and every type in `others` are subtypes of, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context):
        """The value a trace of this type runs the Python function with."""

    def to_tensors(self, value):
        """The tensors a value of this type passes to the compiled function (none for a Python value)."""
        return []

    def flatten(self):
        """The TraceTypes of the tensors `to_tensors` returns."""
        return []

    @abc.abstractmethod
    def __eq__(self, other):
        """Types are equal when they describe the same values."""

    @abc.abstractmethod
    def __hash__(self):
        """Equal types hash alike."""
