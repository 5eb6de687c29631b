"""Trace types of tfn.function arguments (TF's TraceType): tensors by spec, Python values by value.

A trace type is a TensorSpec (tensors, arrays, specs), a Literal (hashable Python values), an Opaque
(other objects, by identity), a Seq or Mapping of trace types (lists, tuples, namedtuples, dicts), or
whatever an object's `__tf_tracing_type__` returns (a user TraceType with is_subtype_of,
most_specific_common_supertype and placeholder_value).
"""
import inspect

import numpy as np

from tfn import nest
from tfn.dialects.errors import InvalidArgumentError
from tfn.tensor import SymbolicTensor, Tensor, constant
from tfn.tensor_spec import TensorSpec

_CALLER_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class Literal:
    """The type of a hashable Python value: that value only (`Literal[2]`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is Literal and type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self):
        return hash((type(self.value), self.value))

    def __repr__(self):
        return f"Literal[{self.value!r}]"


class Opaque:
    """The type of an unhashable Python object: that very object."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is Opaque and self.value is other.value

    def __hash__(self):
        return id(self.value)

    def __repr__(self):
        return f"Opaque[{self.value!r}]"


class Seq:
    """The type of a list, tuple or namedtuple: its class and its elements' types."""

    __slots__ = ("cls", "items")

    def __init__(self, cls, items):
        self.cls = cls
        self.items = tuple(items)

    def __eq__(self, other):
        return type(other) is Seq and self.cls is other.cls and self.items == other.items

    def __hash__(self):
        return hash((self.cls, self.items))

    def __repr__(self):
        name = "List" if issubclass(self.cls, list) else "Tuple" if self.cls is tuple else self.cls.__name__
        return f"{name}[{', '.join(map(repr, self.items))}]"


class Mapping:
    """The type of a dict: its keys (in nest order) and their values' types."""

    __slots__ = ("cls", "items")

    def __init__(self, cls, items):
        self.cls = cls
        self.items = tuple(items)

    def __eq__(self, other):
        return type(other) is Mapping and self.cls is other.cls and self.items == other.items

    def __hash__(self):
        return hash((self.cls, self.items))

    def __repr__(self):
        return "Dict[" + ", ".join(f"[{k!r}, {t!r}]" for k, t in self.items) + "]"


class CastError(Exception):
    """A value does not fit a trace type; `tensor` tells a tensor mismatch from a Python value mismatch."""

    def __init__(self, message, tensor):
        super().__init__(message)
        self.tensor = tensor


def of(x):
    """The trace type of a value."""
    if isinstance(x, (Tensor, SymbolicTensor, np.ndarray, TensorSpec)):
        return TensorSpec(x.shape, x.dtype)
    if isinstance(x, dict):
        return Mapping(type(x), ((k, of(x[k])) for k in sorted(x, key=nest._key_order)))
    if isinstance(x, (list, tuple)):
        return Seq(type(x), map(of, x))
    if hasattr(x, "__tf_tracing_type__"):
        return x.__tf_tracing_type__(None)
    try:
        hash(x)
    except TypeError:
        return Opaque(x)
    return Literal(x)


def is_subtype(a, b):
    """Whether every value of type `a` is a value of type `b`."""
    if isinstance(b, TensorSpec):
        return isinstance(a, TensorSpec) and a.dtype is b.dtype and _shape_is_subtype(a.shape._dims, b.shape._dims)
    if type(a) in (Seq, Mapping):
        return (type(b) is type(a) and a.cls is b.cls and len(a.items) == len(b.items)
                and all(_item_is_subtype(x, y, type(a) is Mapping) for x, y in zip(a.items, b.items)))
    if type(a) in (Literal, Opaque, TensorSpec):
        return a == b
    return bool(a.is_subtype_of(b))


def _item_is_subtype(x, y, keyed):
    return x[0] == y[0] and is_subtype(x[1], y[1]) if keyed else is_subtype(x, y)


def _shape_is_subtype(a, b):
    if b is None:
        return True
    return a is not None and len(a) == len(b) and all(d is None or c == d for c, d in zip(a, b))


def supertype(a, b):
    """The most specific common supertype of `a` and `b` of known rank, or None."""
    if a == b:
        return a
    if isinstance(a, TensorSpec):
        if not isinstance(b, TensorSpec) or a.dtype is not b.dtype or a.shape.rank is None \
                or a.shape.rank != b.shape.rank:
            return None
        return TensorSpec([c if c == d else None for c, d in zip(a.shape, b.shape)], a.dtype)
    if type(a) in (Seq, Mapping):
        if type(b) is not type(a) or a.cls is not b.cls or len(a.items) != len(b.items):
            return None
        keyed = type(a) is Mapping
        if keyed and [k for k, _ in a.items] != [k for k, _ in b.items]:
            return None
        items = [supertype(x[1], y[1]) if keyed else supertype(x, y) for x, y in zip(a.items, b.items)]
        if any(t is None for t in items):
            return None
        return type(a)(a.cls, zip((k for k, _ in a.items), items) if keyed else items)
    if type(a) in (Literal, Opaque):
        return None
    return a.most_specific_common_supertype([b])


def leaves(t):
    """The leaf types of `t` in `nest.flatten` order."""
    if type(t) is Seq:
        return [leaf for item in t.items for leaf in leaves(item)]
    if type(t) is Mapping:
        return [leaf for _, item in t.items for leaf in leaves(item)]
    return [t]


def placeholder(t, make_tensor):
    """The value a trace of type `t` sees: `make_tensor(spec)` for tensors, the Python value otherwise."""
    if isinstance(t, TensorSpec):
        return make_tensor(t)
    if type(t) is Seq:
        items = [placeholder(x, make_tensor) for x in t.items]
        return t.cls(*items) if hasattr(t.cls, "_fields") else t.cls(items)
    if type(t) is Mapping:
        return t.cls((k, placeholder(x, make_tensor)) for k, x in t.items)
    if type(t) in (Literal, Opaque):
        return t.value
    return t.placeholder_value(None)


def has_tensors(t):
    return any(isinstance(leaf, TensorSpec) for leaf in leaves(t))


def cast(t, x, arrays):
    """Check that value `x` fits type `t` and append its tensor leaves' arrays to `arrays` (CastError if not)."""
    if isinstance(t, TensorSpec):
        arrays.append(_tensor_array(t, x))
    elif type(t) is Seq:
        if not isinstance(x, (list, tuple)) or len(x) != len(t.items):
            raise CastError(f"Can not cast {x!r} to {t!r}", False)
        for item, v in zip(t.items, x):
            cast(item, v, arrays)
    elif type(t) is Mapping:
        if not isinstance(x, dict) or sorted(x, key=nest._key_order) != [k for k, _ in t.items]:
            raise CastError(f"Can not cast {x!r} to {t!r}", False)
        for k, item in t.items:
            cast(item, x[k], arrays)
    elif not is_subtype(of(x), t):
        raise CastError(f"Can not cast {x!r} to {t!r}", False)


def _tensor_array(spec, x):
    if isinstance(x, Tensor):
        arr = x._value
    elif isinstance(x, TensorSpec):
        raise CastError(f"Can not cast {x!r} to {spec!r}: a TensorSpec has no value", True)
    else:
        try:
            arr = constant(x, spec.dtype if not isinstance(x, np.ndarray) else None)._value
        except (TypeError, ValueError, InvalidArgumentError) as e:
            raise CastError(f"Can not cast {x!r} to {spec!r}: {e}", False) from None
    got = TensorSpec(arr.shape, arr.dtype)
    if not is_subtype(got, spec):
        raise CastError(f"Can not cast {got!r} to {spec!r}", True)
    return arr


class FunctionType:
    """The type of one trace: its parameters (name, inspect kind, trace type) and its output type."""

    __slots__ = ("params", "output")

    def __init__(self, params, output=None):
        self.params = tuple(params)
        self.output = output

    def __eq__(self, other):
        return isinstance(other, FunctionType) and self.params == other.params

    def __hash__(self):
        return hash(self.params)

    def is_subtype_of(self, other):
        return len(self.params) == len(other.params) and all(
            n == m and k == j and is_subtype(t, u) for (n, k, t), (m, j, u) in zip(self.params, other.params))

    def supertype(self, other):
        """The most specific FunctionType both are subtypes of, or None."""
        if [(n, k) for n, k, _ in self.params] != [(n, k) for n, k, _ in other.params]:
            return None
        types = [supertype(t, u) for (_, _, t), (_, _, u) in zip(self.params, other.params)]
        if any(t is None for t in types):
            return None
        return FunctionType((n, k, t) for (n, k, _), t in zip(self.params, types))

    def inputs_str(self):
        return "(" + ", ".join(f"{n}: {t!r}" for n, _, t in self.params) + ")"

    def __str__(self):
        return f"{self.inputs_str()} -> {format_output(self.output)}"

    __repr__ = __str__


def format_output(t):
    return "None" if t is None else repr(t)


def describe_changes(old, new):
    """Which arguments' trace types differ between two FunctionTypes, in words."""
    if [n for n, _, _ in old.params] != [n for n, _, _ in new.params]:
        return f"the arguments changed from {old.inputs_str()} to {new.inputs_str()}"
    changes = [f"argument '{n}' changed from {t!r} to {u!r}"
               for (n, _, t), (_, _, u) in zip(old.params, new.params) if t != u]
    return "; ".join(changes) or "no argument type changed"
