"""JSON forms of what a saved function's manifest entry describes: trace types of parameters, tensor types of the
compiled code's flat inputs and results, and the structure of its outputs."""
from tfn import nest
from tfn.core.tensor import constant
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.types import TensorType
from tfn.tracing import trace_type

_LITERALS = (bool, int, float, str, type(None))


class NotSaveable(ValueError):
    """A value a saved model cannot describe (the caller names the function and parameter)."""


def tensor_type(t):
    return {"shape": list(t.shape), "dtype": t.dtype.name}


def from_tensor_type(d):
    return TensorType(tuple(d["shape"]), d["dtype"])


def param_type(t):
    """The JSON form of one parameter's trace type: tensors, lists, tuples, dicts and Python literals."""
    if isinstance(t, TensorSpec):
        return {"tensor": {"shape": None if t.shape.rank is None else t.shape.as_list(), "dtype": t.dtype.name,
                           "name": t.name}}
    if type(t) is trace_type.Seq and t.cls in (list, tuple):
        return {t.cls.__name__: [param_type(x) for x in t.items]}
    if type(t) is trace_type.Mapping and t.cls is dict and all(isinstance(k, str) for k, _ in t.items):
        return {"dict": [[k, param_type(x)] for k, x in t.items]}
    if type(t) is trace_type.Literal and type(t.value) in _LITERALS:
        return {"literal": t.value}
    raise NotSaveable(f"its type {t!r} cannot be saved (tensors, lists, tuples, dicts with string keys and "
                      "bool/int/float/str/None values can)")


def from_param_type(d):
    (kind, v), = d.items()
    if kind == "tensor":
        return TensorSpec(v["shape"], v["dtype"], v.get("name"))
    if kind in ("list", "tuple"):
        return trace_type.Seq(list if kind == "list" else tuple, [from_param_type(x) for x in v])
    if kind == "dict":
        return trace_type.Mapping(dict, [(k, from_param_type(x)) for k, x in v])
    if kind == "literal":
        return trace_type.Literal(v)
    raise ValueError(f"unknown parameter type {kind!r}")


def structure(s):
    """The JSON form of an output structure (its leaves as 0): nests of lists, tuples and string-keyed dicts."""
    if type(s) is dict:
        if not all(isinstance(k, str) for k in s):
            raise NotSaveable("it returns a dict with non-string keys")
        return {"dict": [[k, structure(s[k])] for k in nest.sorted_keys(s)]}
    if type(s) in (list, tuple):
        return {type(s).__name__: [structure(x) for x in s]}
    if nest.is_nested(s):
        raise NotSaveable(f"it returns a {type(s).__name__}; saved functions return tensors in lists, tuples and "
                          "dicts")
    return 0


def from_structure(d):
    if d == 0:
        return 0
    (kind, v), = d.items()
    if kind == "dict":
        return {k: from_structure(x) for k, x in v}
    items = [from_structure(x) for x in v]
    return items if kind == "list" else tuple(items)


def output_leaf(kind, value):
    """The JSON form of one output leaf: a result of the compiled code, or a constant the trace returned."""
    if kind == "result":
        return {"result": value}
    if value is None:
        return {"none": True}
    arr = value._value
    if arr.dtype.kind in "SUO":
        raise NotSaveable("it returns a constant string tensor")
    return {"const": {"value": arr.tolist(), "dtype": value.dtype.name}}


def from_output_leaf(d):
    if "result" in d:
        return ("result", d["result"])
    if "none" in d:
        return ("const", None)
    c = d["const"]
    return ("const", constant(c["value"], c["dtype"]))
