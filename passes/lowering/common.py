"""Builders shared by the lowering patterns: the rewrite context, dims, empty tensors, linalg.generic."""
from mlir import ir
from mlir.dialects import arith, tensor

from tfn.dialects import optable
from tfn.dialects import types as ttypes

PATTERNS = {}  # OpDef -> its lowering pattern


def lowering(*opdefs, table=PATTERNS):
    """Register a lowering pattern `fn(rw) -> list[Value]` for each OpDef given (`tfn.dialects.ops.<name>`)."""
    optable.require(opdefs, "a lowering pattern")

    def deco(fn):
        for op in opdefs:
            if op in table:
                raise ValueError(f"two lowering patterns for {op.full_name}")
            table[op] = fn
        return fn
    return deco


class Rewrite:
    """What a pattern sees of the op it replaces: current operands, the op's original tfn types, attrs (decoded
    from the op on first use when not given: most patterns never read them, and decoding a constant's value into
    NumPy costs more than lowering it)."""

    __slots__ = ("op", "opdef", "name", "operands", "in_types", "out_types", "_attrs", "error_code")

    def __init__(self, op, in_types, out_types, attrs=None, opdef=None):
        self.op = op
        self.opdef = opdef if opdef is not None else optable.lookup(op.name)
        self.name = op.name
        self.operands = list(op.operands)
        self.in_types = in_types
        self.out_types = out_types
        self._attrs = attrs
        self.error_code = 0  # this op's code in the run-time error channel (lowering/runtime_errors.py)

    @property
    def attrs(self):
        if self._attrs is None:
            self._attrs = optable.decode_attrs(self.opdef, self.op)
        return self._attrs

    @property
    def out(self):
        return self.out_types[0]


# Attributes and types the patterns build again and again (iterator types, indexing maps, lowered tensor types),
# remembered in the shared context, which lives as long as the process (dialects/context.py): a 1,000-op
# function builds the same few thousands of times. Other contexts build them each time.
_SHARED = {}
_SHARED_KEPT = 4096  # entries (keys name shapes: a process tracing ever new shapes must not grow it forever)


def shared(key, make):
    """make(), remembered under `key` while the current context is the shared one."""
    if not ttypes.in_shared_context():
        return make()
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_KEPT:
            _SHARED.clear()
        found = _SHARED[key] = make()
    return found


def lowered_type(tt):
    """ttypes.lowered_tensor_type(tt), remembered in the shared context."""
    return shared(("lowered", tt.shape, tt.dtype), lambda: ttypes.lowered_tensor_type(tt))


def index(i):
    return arith.constant(ir.IndexType.get(), int(i))


def dim(value, i):
    """The size of dimension i of a ranked tensor value, as an index."""
    return tensor.dim(value, index(i))


def dynamic_sizes(out_type, sources):
    """Index values for out_type's dynamic dims, each read from a source (value, tfn type, axis map).

    `sources` is a list of (value, TensorType, axes) where axes[i] is the output dim that the
    source's dim i equals (or None).
    """
    sizes = []
    for d, size in enumerate(out_type.shape):
        if size is not None:
            continue
        for value, tt, axes in sources:
            hit = [i for i, a in enumerate(axes) if a == d and tt.shape[i] is None]
            if hit:
                sizes.append(dim(value, hit[0]))
                break
        else:
            raise ValueError(f"cannot find the size of dynamic dim {d} of {out_type.mlir_str()}")
    return sizes


def empty(out_type, dyn_sizes=()):
    """tensor.empty of a tfn type (unsigned lowered to signless) with the given dynamic sizes."""
    # (ir.Operation.create: the op tensor.EmptyOp builds, its type made once)
    return ir.Operation.create("tensor.empty", results=[lowered_type(out_type)], operands=list(dyn_sizes)).result


def parallel(n):
    return [shared("parallel", lambda: ir.Attribute.parse("#linalg.iterator_type<parallel>"))] * n


def reduction():
    return shared("reduction", lambda: ir.Attribute.parse("#linalg.iterator_type<reduction>"))


def affine_map(rank, exprs):
    return ir.AffineMap.get(rank, 0, exprs)


def identity_map(rank):
    return ir.AffineMap.get_identity(rank)


def generic(inputs, in_maps, outputs, out_maps, iterators, body):
    """A linalg.generic; `body(*block_args)` builds the region and returns the values to yield."""
    maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in list(in_maps) + list(out_maps)])
    arg_types = [ir.RankedTensorType(v.type).element_type for v in list(inputs) + list(outputs)]
    return _generic(list(inputs), list(outputs), maps, ir.ArrayAttr.get(list(iterators)), arg_types, body)


def _generic(inputs, outputs, maps, iterators, arg_types, body):
    """generic() with its attributes and block argument types made: the op linalg.GenericOp builds."""
    n_in, n_out = len(inputs), len(outputs)
    segments = shared(("segments", n_in, n_out), lambda: ir.DenseI32ArrayAttr.get([n_in, n_out]))
    op = ir.Operation.create("linalg.generic", results=[o.type for o in outputs], operands=inputs + outputs,
                             attributes={"indexing_maps": maps, "iterator_types": iterators,
                                         "operandSegmentSizes": segments}, regions=1)
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        yielded = body(*block.arguments)
        # (ir.Operation.create: the op linalg.YieldOp builds)
        ir.Operation.create("linalg.yield", operands=list(yielded) if isinstance(yielded, (list, tuple)) else [yielded])
    return list(op.results)


def broadcast_map(in_type, out_type):
    """The indexing map reading an operand broadcast (NumPy rules) into the output's iteration space."""
    rank = out_type.rank
    off = rank - in_type.rank
    exprs = []
    for i, d in enumerate(in_type.shape):
        if d == 1 and out_type.shape[off + i] != 1:
            exprs.append(ir.AffineConstantExpr.get(0))
        else:
            exprs.append(ir.AffineDimExpr.get(off + i))
    return affine_map(rank, exprs)


def broadcast_sources(values, in_types, out_type):
    """dynamic_sizes sources for operands broadcast into out_type."""
    rank = out_type.rank
    return [(v, t, [rank - t.rank + i for i in range(t.rank)]) for v, t in zip(values, in_types)]


def _i1():
    return shared("i1", lambda: ir.IntegerType.get_signless(1))


def store_bool(value):
    """An i1 result widened to the i8 that bool tensors store."""
    if value.type == _i1():
        return arith.extui(ir.IntegerType.get_signless(8), value)
    return value


def load_bool(value):
    """A stored bool (i8) as an i1 condition."""
    if value.type == _i1():
        return value
    return arith.trunci(ir.IntegerType.get_signless(1), value)


def _element_of(t):
    """The element type of ranked tensor type `t`, remembered in the shared context."""
    return shared(("element", t), lambda: ir.RankedTensorType(t).element_type)


def map_elementwise(values, in_types, out_type, body):
    """A broadcasting elementwise linalg.generic computing `body(*scalars)` into a new out_type tensor."""
    static = None not in out_type.shape
    init = empty(out_type, () if static else dynamic_sizes(out_type, broadcast_sources(values, in_types, out_type)))
    key = ("elementwise", out_type.shape, tuple(t.shape for t in in_types))
    maps = shared(key, lambda: ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [
        broadcast_map(t, out_type) for t in in_types] + [identity_map(out_type.rank)]]))
    iterators = shared(("parallel", out_type.rank), lambda: ir.ArrayAttr.get(parallel(out_type.rank)))
    arg_types = [_element_of(v.type) for v in values]
    arg_types.append(_element_of(init.type))
    return _generic(list(values), [init], maps, iterators, arg_types, lambda *args: store_bool(body(*args[:-1])))[0]
