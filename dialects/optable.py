"""The op table: one `OpDef` per `tfn` op — operands, attributes, type rule and NumPy reference kernel.

Other layers register against the OpDef objects (`tfn.dialects.ops.add`), not their names: lowerings
(passes/lowering), public functions (frontend/core/api.py), gradient rules. `OPS` maps names to OpDefs for
lookups from MLIR op names."""
import numpy as np

from tfn.dialects import attrs as attr_codec
from tfn.dialects.errors import InvalidArgumentError, OpError
from tfn.dialects.types import TensorType

OPS = {}


class OpDef:
    """One op of the `tfn` dialect (immutable; compared and hashed by identity: OpDefs key other layers'
    registries).

    `operands`: operand names; a leading `*` marks one variadic group whose members share one type.
    `attrs`: attribute name -> kind (see attrs.CODECS); every attribute is present, None encodes as `unit`.
    `infer(types, attrs) -> list[TensorType]`: the result type rule; raises on invalid operands.
    `kernel(arrays, attrs) -> ndarray | list[ndarray]`: reference semantics, run by eager
    execution (tfn does not fold constants with it).
    `results`: number of results, or "*" for a variadic group of one type (count given by `infer`).
    `tf_api`: TF's documented public names of the op, as paths under `tf` ("math.add", "Tensor.__getitem__").
    """

    # A plain class rather than a frozen dataclass: ~300 are made at `import tfn`, and tracing reads full_name
    # and int_attrs once per op.
    __slots__ = ("name", "operands", "infer", "kernel", "attrs", "results", "tf_name", "summary", "differentiable",
                 "tf_api", "full_name", "variadic", "int_attrs")

    def __init__(self, name, operands, infer, kernel, attrs=None, results=1, tf_name="", summary="",
                 differentiable=True, tf_api=()):
        setattr_ = object.__setattr__
        for k, v in (("name", name), ("operands", operands), ("infer", infer), ("kernel", kernel),
                     ("attrs", {} if attrs is None else attrs), ("results", results), ("tf_name", tf_name),
                     ("summary", summary), ("differentiable", differentiable), ("tf_api", tf_api),
                     ("full_name", "tfn." + name), ("variadic", any(o.startswith("*") for o in operands))):
            setattr_(self, k, v)
        # the integer attributes, checked against int64 by infer_types
        setattr_(self, "int_attrs", tuple((n, k) for n, k in self.attrs.items() if k in ("i64", "i64s")))

    def __setattr__(self, name, value):
        raise AttributeError(f"OpDef {self.full_name} is immutable: cannot assign to field '{name}'")

    def __delattr__(self, name):
        raise AttributeError(f"OpDef {self.full_name} is immutable: cannot delete field '{name}'")

    def __repr__(self):
        return f"<OpDef {self.full_name}>"

    def infer_types(self, types, attrs):
        if self.int_attrs:
            _check_int_attrs(self, attrs)
        out = self.infer(list(types), attrs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def run_kernel(self, arrays, attrs):
        out = self.kernel(list(arrays), attrs)
        return list(out) if isinstance(out, (list, tuple)) else [out]


_I64 = (-2 ** 63, 2 ** 63 - 1)


def _check_int_attrs(opdef, attrs):
    """Integer attributes fit in int64 (MLIR's attributes cannot hold more): TF's error otherwise."""
    for name, kind in opdef.int_attrs:
        if attrs.get(name) is None:
            continue
        values = attrs[name] if kind == "i64s" else [attrs[name]]
        for v in values:
            if isinstance(v, int) and not _I64[0] <= v <= _I64[1]:
                raise InvalidArgumentError(f"{opdef.tf_name}: attribute '{name}' value {v} does not fit in int64 "
                                           f"[Op:{opdef.tf_name}]")


def define(name, operands, infer, kernel, attrs=None, **kw):
    """Add an op to the table and return its OpDef; the op's name must be new."""
    if name in OPS:
        raise ValueError(f"op tfn.{name} is defined twice")
    tf_api = kw.pop("tf_api", ())
    op = OpDef(name, tuple(operands), infer, kernel, dict(attrs or {}), tf_name=kw.pop("tf_name", "") or
               "".join(p.capitalize() for p in name.split("_")),
               tf_api=(tf_api,) if isinstance(tf_api, str) else tuple(tf_api), **kw)
    OPS[name] = op
    return op


def require(opdefs, what):
    """Check that each of `opdefs` is an OpDef (registries are keyed by the op objects, not their names)."""
    for op in opdefs:
        if not isinstance(op, OpDef):
            raise TypeError(f"{what} must be registered against an OpDef (tfn.dialects.ops.<name>), got {op!r}")
    return opdefs


def lookup(full_name):
    """The OpDef of `tfn.<name>`, or None."""
    if not full_name.startswith("tfn."):
        return None
    return OPS.get(full_name[4:])


def decode_attrs(opdef, op):
    """The Python values of an MLIR operation's attributes, by the table's kinds."""
    values = {}
    for name, kind in opdef.attrs.items():
        if name not in op.attributes:
            raise ValueError(f"'{opdef.full_name}' op requires attribute '{name}'")
        values[name] = attr_codec.from_mlir(kind, op.attributes[name])
    return values


def encode_attrs(opdef, values):
    return {name: attr_codec.to_mlir(kind, values.get(name)) for name, kind in opdef.attrs.items()}


def _compatible(a, b):
    return a.dtype is b.dtype and a.rank == b.rank and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def verify(op):
    """Check one MLIR op against its table entry; returns an error message or None."""
    opdef = lookup(op.name)
    if opdef is None:
        return None
    try:
        in_types = [TensorType.from_mlir(v.type) for v in op.operands]
        out_types = [TensorType.from_mlir(r.type) for r in op.results]
        values = decode_attrs(opdef, op)
        expected = opdef.infer_types(in_types, values)
    except (ValueError, TypeError, KeyError, OpError) as e:
        return f"'{opdef.full_name}' op {e}"
    if len(expected) != len(out_types):
        return f"'{opdef.full_name}' op expects {len(expected)} results, got {len(out_types)}"
    for i, (want, got) in enumerate(zip(expected, out_types)):
        if not _compatible(want, got):
            return (f"'{opdef.full_name}' op result #{i} has type {got.mlir_str()}, "
                    f"but its operands give {want.mlir_str()}")
    return None


def numpy_result(arr, tt):
    """Cast a kernel's result to the dtype the type rule promises (NumPy promotes more eagerly than TF)."""
    return np.asarray(arr).astype(tt.dtype.np, copy=False)
