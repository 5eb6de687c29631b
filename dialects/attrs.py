"""Attribute kinds of the op table and their codec between Python values and MLIR attributes."""
import numpy as np
from mlir import ir

from tfn.dialects import dtypes, string_attrs, types
from tfn.dialects.types import TensorType


def _dense(value):
    return dense_attr(*value)


def dense_attr(arr, tt):
    """The `dense` attribute of NumPy array `arr` as TensorType `tt` (the value of a tfn.constant)."""
    if tt.dtype.is_string:
        return string_attrs.encode(arr, tt)
    shared = types._shared_context  # (in_shared_context(), written out: a trace embeds a constant per literal)
    if arr.size > _SMALL_DENSE or shared is None or ir.Context.current is not shared:
        return _new_dense(arr, tt)
    key = (tt.shape, tt.dtype, arr.dtype.str, arr.tobytes())
    attr = _SHARED_DENSE.get(key)
    if attr is None:
        if len(_SHARED_DENSE) >= _SHARED_DENSE_KEPT:
            _SHARED_DENSE.clear()
        attr = _SHARED_DENSE[key] = _new_dense(arr, tt)
    return attr


def _new_dense(arr, tt):
    t = tt.to_mlir()
    if arr.dtype == np.bool_:
        return ir.DenseElementsAttr.get(np.packbits(arr.reshape(-1), bitorder="little"), type=t)
    if tt.dtype.is_unsigned:
        arr = arr.view(np.int8)
    return ir.DenseElementsAttr.get(np.require(arr, requirements="C"), type=t)


# The attributes of small constants in the shared context (which lives as long as the process), by type and bytes:
# a trace embeds the same few literals again and again, and building the attribute costs a fifth of the op.
_SHARED_DENSE = {}
_SHARED_DENSE_KEPT = 4096
_SMALL_DENSE = 16  # elements


def _undense(attr):
    attr = ir.DenseElementsAttr(attr)
    tt = TensorType.from_mlir(attr.type)
    if tt.dtype.is_string:
        return string_attrs.decode(attr, tt), tt
    if attr.is_splat:
        v = attr.get_splat_value()
        v = ir.FloatAttr(v).value if tt.dtype.is_floating else ir.IntegerAttr(v).value
        return np.full(tt.shape, v, dtype=tt.dtype.np), tt
    if tt.dtype.is_bool:
        ints = ir.DenseIntElementsAttr(attr)
        return np.array([bool(ints[i]) for i in range(len(ints))], np.bool_).reshape(tt.shape), tt
    return np.array(attr).astype(tt.dtype.np).reshape(tt.shape), tt


# kind -> the Python value an attribute of that kind holds, made from what an op is given (a `dense` value is an
# (array, TensorType) pair, written as is)
VALUE = {
    "i64": int,
    "i64s": lambda v: [int(x) for x in v],
    "f64": float,
    "bool": bool,
    "dtype": lambda v: dtypes.as_dtype(v).mlir,
    "str": str,
}


def _codec(kind, build, read):
    value = VALUE[kind]
    return (lambda v: build(value(v))), read


# kind -> (to_mlir(python value), from_mlir(attribute))
CODECS = {
    "i64": _codec("i64", lambda v: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v),
                  lambda a: ir.IntegerAttr(a).value),
    "i64s": _codec("i64s", lambda v: ir.DenseI64ArrayAttr.get(v), lambda a: tuple(ir.DenseI64ArrayAttr(a))),
    "f64": _codec("f64", lambda v: ir.FloatAttr.get_f64(v), lambda a: ir.FloatAttr(a).value),
    "bool": _codec("bool", lambda v: ir.BoolAttr.get(v), lambda a: ir.BoolAttr(a).value),
    "dtype": _codec("dtype", lambda v: ir.TypeAttr.get(ir.Type.parse(v)),
                    lambda a: dtypes.as_dtype(str(ir.TypeAttr(a).value))),
    "dense": (_dense, _undense),
    "str": _codec("str", lambda v: ir.StringAttr.get(v), lambda a: ir.StringAttr(a).value),
}


def key_text(kind, value):
    """The text of an attribute value in a recorded trace's key (frontend/core/record_key.py): two values with one
    text encode as one attribute. An omitted value (None) is `unit`, as to_mlir encodes it; a `dense` value has no
    text here (None): the key writes its bytes' digest."""
    if value is None:
        return "unit"
    value_of = VALUE.get(kind)
    return None if value_of is None else repr(value_of(value))


def to_mlir(kind, value):
    """Encode a Python attribute value; None (an omitted optional attribute) becomes `unit`."""
    if value is None:
        return ir.UnitAttr.get()
    return CODECS[kind][0](value)


def from_mlir(kind, attr):
    if attr.typeid == ir.UnitAttr.static_typeid:
        return None
    try:
        return CODECS[kind][1](attr)
    except (ValueError, TypeError) as e:
        raise ValueError(f"expected a {kind} attribute, got {attr}") from e
