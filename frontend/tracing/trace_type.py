"""Trace types of tfn.function arguments (TF's TraceType): tensors by spec, Python values by value.

Every trace type derives from `tfn.types.experimental.TraceType`: a TensorSpec (tensors, arrays, specs), a
Literal (Python primitives and other hashable objects without weak references), a Weakref (other objects:
the same object, else an equal one, while it lives), a Seq or Mapping of trace types (lists, tuples,
namedtuples, dicts), or whatever an object's `__tf_tracing_type__` returns. An unhashable object has no trace
type (TypeError, as in TF).
"""
import collections
import inspect
import threading
import weakref

import numpy as np

from tfn import nest
from tfn.core import graph as graph_mod
from tfn.core import leaks
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, constant
from tfn.core.tensor_spec import TensorSpec, shape_is_subtype
from tfn.dialects.errors import InvalidArgumentError, StagingError
from tfn.dialects.locations import with_excerpt
from tfn.tracing.trace import PlaceholderContext, TraceType

_CALLER_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_PRIMITIVES = (int, float, bool, str, bytes, complex, type(None))


class _Atom(TraceType):
    """A type with no supertype but itself: a subtype only of an equal type."""

    __slots__ = ()

    def is_subtype_of(self, other):
        return self == other

    def most_specific_common_supertype(self, others):
        return self if all(self == o for o in others) else None


def _is_nan(value):
    """Whether a Python value is a float NaN: equal to no value, not even itself, yet the same argument type."""
    return isinstance(value, float) and value != value


class Literal(_Atom):
    """The type of a hashable Python value: that value only (`Literal[2]`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def placeholder_value(self, placeholder_context=None):
        return self.value

    def __eq__(self, other):
        return type(other) is Literal and type(self.value) is type(other.value) and (
            self.value == other.value or (_is_nan(self.value) and _is_nan(other.value)))

    def __hash__(self):  # (a NaN's hash is its object's: every NaN hashes alike here)
        return hash((type(self.value), "nan" if _is_nan(self.value) else self.value))

    def __repr__(self):
        return f"Literal[{self.value!r}]"


class Weakref(_Atom):
    """The type of an object held by weak reference: that object (or, if hashable, an equal one) while it lives."""

    __slots__ = ("ref", "_hash", "_by_value")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        try:
            self._hash, self._by_value = hash(obj), True
        except TypeError:
            self._hash, self._by_value = id(obj), False

    def placeholder_value(self, placeholder_context=None):
        return self.ref()

    def __eq__(self, other):
        if type(other) is not Weakref:
            return False
        a, b = self.ref(), other.ref()
        if a is None or b is None:  # a dead object matches nothing, not even another dead one
            return self is other
        return a is b or (self._by_value and other._by_value and _equal(a, b))

    def __hash__(self):
        return self._hash

    def __repr__(self):
        obj = self.ref()
        return f"Weakref[{'<deleted object>' if obj is None else repr(obj)}]"


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:  # an object whose == is elementwise or broken: identity only
        return False


class Seq(TraceType):
    """The type of a list, tuple or namedtuple: its class and its elements' types."""

    __slots__ = ("cls", "items")

    def __init__(self, cls, items):
        self.cls = cls
        self.items = tuple(items)

    def is_subtype_of(self, other):
        return (type(other) is Seq and self.cls is other.cls and len(self.items) == len(other.items)
                and all(is_subtype(x, y) for x, y in zip(self.items, other.items)))

    def most_specific_common_supertype(self, others):
        if any(type(o) is not Seq or o.cls is not self.cls or len(o.items) != len(self.items) for o in others):
            return None
        items = [supertype_of_all(x, [o.items[i] for o in others]) for i, x in enumerate(self.items)]
        return None if any(t is None for t in items) else Seq(self.cls, items)

    def placeholder_value(self, placeholder_context=None):
        items = [x.placeholder_value(placeholder_context) for x in self.items]
        return self.cls(*items) if hasattr(self.cls, "_fields") else self.cls(items)

    def __eq__(self, other):
        return type(other) is Seq and self.cls is other.cls and self.items == other.items

    def __hash__(self):
        return hash((self.cls, self.items))

    def __repr__(self):
        name = "List" if issubclass(self.cls, list) else "Tuple" if self.cls is tuple else self.cls.__name__
        return f"{name}[{', '.join(map(repr, self.items))}]"


class Mapping(TraceType):
    """The type of a dict: its keys (in nest order) and their values' types."""

    __slots__ = ("cls", "items")

    def __init__(self, cls, items):
        self.cls = cls
        self.items = tuple(items)

    def _keys(self):
        return [k for k, _ in self.items]

    def is_subtype_of(self, other):
        return (type(other) is Mapping and self.cls is other.cls and self._keys() == other._keys()
                and all(is_subtype(x, y) for (_, x), (_, y) in zip(self.items, other.items)))

    def most_specific_common_supertype(self, others):
        if any(type(o) is not Mapping or o.cls is not self.cls or o._keys() != self._keys() for o in others):
            return None
        items = [supertype_of_all(x, [o.items[i][1] for o in others]) for i, (_, x) in enumerate(self.items)]
        return None if any(t is None for t in items) else Mapping(self.cls, zip(self._keys(), items))

    def placeholder_value(self, placeholder_context=None):
        return nest.mapping_like(self.cls, [(k, x.placeholder_value(placeholder_context)) for k, x in self.items])

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
    if isinstance(x, SymbolicTensor) and x._graph is not graph_mod.current():
        raise leaks.out_of_scope(x)
    if isinstance(x, (Tensor, SymbolicTensor, np.ndarray)):
        return TensorSpec(x.shape, x.dtype)
    if isinstance(x, TensorSpec):
        return x if x.name is None else TensorSpec(x.shape, x.dtype)
    if type(x) in _PRIMITIVES:
        return Literal(x)
    if isinstance(x, dict):
        return Mapping(type(x), ((k, of(x[k])) for k in nest.sorted_keys(x)))
    if isinstance(x, (list, tuple)):
        return Seq(type(x), map(of, x))
    if hasattr(x, "__tf_tracing_type__"):
        return x.__tf_tracing_type__(None)
    return _generic(x)


def _generic(x):
    """Weakref for objects that allow weak references, else Literal; TypeError for an unhashable object (TF)."""
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"Could not generate a generic TraceType for {x!r}. Please verify that it is "
                        "immutable/hashable. Otherwise, consider implementing the Tracing Protocol for it.") from None
    try:
        return Weakref(x)
    except TypeError:
        return Literal(x)


def is_subtype(a, b):
    """Whether every value of type `a` is a value of type `b`."""
    if type(b) is TensorSpec:
        return type(a) is TensorSpec and a.dtype is b.dtype and shape_is_subtype(a.shape._dims, b.shape._dims)
    return bool(a.is_subtype_of(b))


def supertype(a, b):
    """The most specific common supertype of `a` and `b`, or None."""
    return a if a == b else a.most_specific_common_supertype([b])


def supertype_of_all(a, others):
    return a if all(a == o for o in others) else a.most_specific_common_supertype(others)


def is_composite(t):
    """Whether `t` is a type whose values pass tensors of their own (`flatten`: a dataset's, an iterator's)."""
    flatten = getattr(type(t), "flatten", TraceType.flatten)  # duck-typed trace types may lack it
    return flatten is not TraceType.flatten and bool(t.flatten())


def has_composites(t):
    """Whether `t` or a type nested in it is composite."""
    if type(t) is Seq:
        return any(has_composites(x) for x in t.items)
    if type(t) is Mapping:
        return any(has_composites(x) for _, x in t.items)
    return is_composite(t)


def leaves(t):
    """The leaf types of `t` in `nest.flatten` order (a composite type's tensors' types in its place)."""
    if is_composite(t):
        return list(t.flatten())
    if type(t) is Seq:
        return [leaf for item in t.items for leaf in leaves(item)]
    if type(t) is Mapping:
        return [leaf for _, item in t.items for leaf in leaves(item)]
    return [t]


def placeholder(t, make_tensor, graph=None):
    """The value a trace of type `t` sees: `make_tensor(spec)` for tensors, the Python value otherwise."""
    if isinstance(t, TensorSpec):
        return make_tensor(t)
    if type(t) is Seq:
        items = [placeholder(x, make_tensor, graph) for x in t.items]
        return t.cls(*items) if hasattr(t.cls, "_fields") else t.cls(items)
    if type(t) is Mapping:
        return nest.mapping_like(t.cls, [(k, placeholder(x, make_tensor, graph)) for k, x in t.items])
    if is_composite(t):
        return t.from_tensors(iter([make_tensor(s) for s in t.flatten()]))
    return t.placeholder_value(PlaceholderContext(graph))


def map_leaves(t, fn):
    """`t` with each leaf type replaced by `fn(leaf)`, structure kept."""
    if type(t) is Seq:
        return Seq(t.cls, (map_leaves(x, fn) for x in t.items))
    if type(t) is Mapping:
        return Mapping(t.cls, ((k, map_leaves(x, fn)) for k, x in t.items))
    return fn(t)


def is_unranked(t):
    return type(t) is TensorSpec and t.shape.rank is None


_active = threading.local()


class tracing_call:  # noqa: N801  (used like a function: `with tracing_call(fn, ftype):`)
    """Mark `fn` as being traced for `ftype` on this thread; re-entering it with an equal type cannot end."""

    __slots__ = ("entry",)

    def __init__(self, fn, ftype):
        self.entry = (fn, ftype)

    def __enter__(self):
        stack = _active.__dict__.setdefault("stack", [])
        fn, ftype = self.entry
        if any(f is fn and t == ftype for f, t in stack):
            at = graph_mod.user_position()
            raise StagingError(with_excerpt(
                f"the tfn.function '{fn.__name__}' calls itself recursively with the same argument types "
                f"{ftype.inputs_str()} while it is being traced{_where(at)}: a recursion on a tensor value cannot "
                "end at trace time (the Python code runs once per trace, not once per value). Recursive "
                "tfn.functions are not supported: recurse on a Python value (each depth traces once) or use a loop.",
                at))
        stack.append(self.entry)

    def __exit__(self, *exc):
        _active.stack.pop()
        return False


def _where(at):
    return "" if at is None else f" (at {at[0]}:{at[1]})"


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
        if not isinstance(x, dict) or nest.sorted_keys(x) != [k for k, _ in t.items]:
            raise CastError(f"Can not cast {x!r} to {t!r}", False)
        for k, item in t.items:
            cast(item, x[k], arrays)
    elif not is_subtype(of(x), t):
        raise CastError(f"Can not cast {x!r} to {t!r}", False)
    elif is_composite(t):
        arrays.extend(_tensor_array(s, v) for s, v in zip(t.flatten(), t.to_tensors(x)))


def bind_or_fallback(name, ftype, error, args, kwargs):
    """After a call failed to bind to `ftype` (CastError `error`), bind it as TF's flat signature does.

    The flat signature has only the parameters holding tensors (Python-valued ones keep their traced values),
    so `concrete(x)` works for a trace of `f(model, x)`. Returns the arrays, or raises TF's error naming both.
    """
    try:
        return bind_flat(name, ftype.params, args, kwargs)
    except (TypeError, CastError) as flat:
        cls = InvalidArgumentError if error.tensor else TypeError
        raise cls(f"Binding inputs to tfn.function failed due to `{error}`. Received args: {args!r} and kwargs: "
                  f"{kwargs!r} for signature: {ftype}.\nFallback to flat signature also failed due to: {flat}") \
            from None


def bind_flat(name, params, args, kwargs):
    """The arrays of a call bound to the tensor-holding parameters only (positionally, then by keyword)."""
    tensor_params = [(n, t) for n, _, t in params if has_tensors(t)]
    names = [n for n, _ in tensor_params]
    sig = f"{name}({', '.join(names)})"
    specs = [leaf for _, t in tensor_params for leaf in leaves(t) if isinstance(leaf, TensorSpec)]
    nested = any(not isinstance(t, TensorSpec) for _, t in tensor_params)
    if nested and not kwargs and len(args) == len(specs) and all(isinstance(a, TensorBase) for a in args):
        arrays = []  # one tensor per tensor leaf of the parameters, in nest.flatten order (TF's flat inputs)
        for spec, a in zip(specs, args):
            cast(spec, a, arrays)
        return arrays
    if len(args) > len(names):
        raise TypeError(f"{sig} takes {len(names)} positional arguments, got {len(args)}.")
    unexpected = [k for k in kwargs if k not in names]
    if unexpected:
        raise TypeError(f"{sig} got unexpected keyword arguments: {', '.join(unexpected)}.")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in values:
            raise TypeError(f"{sig} got two values for argument '{k}'.")
        values[k] = v
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(f"{sig} missing required arguments: {', '.join(missing)}.")
    arrays = []
    for n, t in tensor_params:
        cast(t, values[n], arrays)
    return arrays


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


class Parameter(collections.namedtuple("Parameter", "name kind type_constraint")):
    """One parameter of a FunctionType: its name, inspect kind and trace type."""


class FunctionType:
    """The type of one trace: its parameters (name, inspect kind, trace type) and its output type."""

    __slots__ = ("params", "output", "captures")

    def __init__(self, params, output=None, captures=None):
        self.params = tuple(params)
        self.output = output
        self.captures = collections.OrderedDict(captures or ())  # id of a captured value -> its trace type

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

    @property
    def parameters(self):
        """name -> Parameter(name, kind, type_constraint), as TF's FunctionType.parameters."""
        return {n: Parameter(n, k, t) for n, k, t in self.params}

    @property
    def flat_inputs(self):
        """The leaf trace types of the parameters, in call order."""
        return [leaf for _, _, t in self.params for leaf in leaves(t)]

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
