"""tfn-gpu-generalize: the ops on tensors that tfn-gpu-tile has no kernel kind for, rewritten as linalg.generic.

Runs just before tfn-gpu-tile in the GPU pipelines (passes/pipelines.py). Each rewrite gives an op tfn-gpu-tile
can tile: an all-parallel linalg.generic (its elementwise kernels) or a linalg.generic with reduction loops (its
"loop" kernels: one thread per point of the parallel loops, the reductions looped over by that thread).

- tensor.pad (a convolution's SAME padding) with static low and high sizes: an all-parallel generic over the padded
  shape whose body reads the source (`tensor.extract` at the index less `low`, clamped into the source) where the
  index falls inside it, and the padding value elsewhere.
- tensor.concat: an all-parallel generic over the result reading each point from the input whose range along the
  concatenated dim holds it (the index less the sizes of the inputs before, clamped into that input).
- tensor.insert_slice (tfn.pad, gradients of padded and strided ops, scans): an all-parallel generic over the
  destination reading the source where the point lies in the slice (offset + k x stride) and the destination
  elsewhere: a new tensor, where the CPU path writes the slice in place.
- the named linalg ops with reduction loops other than linalg.matmul and linalg.reduce (which have kernels of
  their own): convolutions, depthwise convolutions, pooling, batch matmul, matvec, ... generalized
  (`transform.structured.generalize`); so are transposes and broadcasts of rank > 3 (a convolution's gradients)
  and reductions of elements narrower than 32 bits (a bool `all`: the warp-shuffle kernel moves 32/64-bit values).

The gathers read their sources inside the kernels, so on a GPU every read is of device memory by a device thread.
"""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.passes.lowering.common import generic, identity_map, index, parallel
from tfn.passes.registry import PassFailure, register
from tfn.passes.tfn_gpu_tile import narrow_reduction
from tfn.passes.tfn_vectorize_kernels import apply_schedule, named_sequence
from tfn.passes.walk import collect

# linalg ops that stay as they are: tfn-gpu-tile maps them (elementwise, reduce, matmul) or they compute nothing
KEPT = {"linalg.generic", "linalg.fill", "linalg.copy", "linalg.transpose", "linalg.broadcast", "linalg.map",
        "linalg.reduce", "linalg.matmul", "linalg.index", "linalg.yield"}
_ANY = "!transform.any_op"
_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _dims(value):
    """The sizes of a ranked tensor as index values (static ones constant)."""
    t = ir.RankedTensorType(value.type)
    return [tensor.dim(value, index(d)) if s == _DYNAMIC else index(s) for d, s in enumerate(t.shape)]


def _clamp(i, size):
    """i clamped into [0, size - 1] (index values): every read stays inside its tensor."""
    zero = index(0)
    return arith.maxsi(arith.minsi(i, arith.subi(size, index(1))), zero)


def _empty_like(result_type, sizes):
    """A tensor.empty of result_type, its dynamic sizes taken from `sizes` (index values, one per dim)."""
    t = ir.RankedTensorType(result_type)
    dynamic = [s for s, d in zip(sizes, t.shape) if d == _DYNAMIC]
    return tensor.EmptyOp(t.shape, t.element_type, dynamic=dynamic).result if dynamic else \
        tensor.EmptyOp(t.shape, t.element_type).result


def _index_ops(rank):
    return [linalg.IndexOp(d).result for d in range(rank)]


def _pad_value(pad):
    """The value a tensor.pad yields, usable outside its region (a constant made inside it is made again), or None."""
    block = pad.regions[0].blocks[0]
    value = list(block.operations)[-1].operands[0]
    owner = value.owner
    owner = getattr(owner, "operation", owner)
    if not isinstance(owner, ir.Operation):
        return None  # a block argument: a padding value that depends on the index
    if owner.parent != pad:
        return value
    if owner.name == "arith.constant":
        return arith.ConstantOp(value.type, owner.attributes["value"]).result
    return None


def rewrite_pad(pad):
    """tensor.pad with static low/high as a gathering generic; False when it is not one this pass rewrites."""
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if _DYNAMIC in low or _DYNAMIC in high:
        return False
    with ir.InsertionPoint(pad), pad.location:
        value = _pad_value(pad)
        if value is None:
            return False
        source = pad.operands[0]
        src = _dims(source)
        out = [arith.addi(s, index(lo + hi)) if lo + hi else s for s, lo, hi in zip(src, low, high)]
        rank = len(src)

        def body(_out):
            inside, at = None, []
            for i, lo, size in zip(_index_ops(rank), low, src):
                j = arith.subi(i, index(lo)) if lo else i
                ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, j, index(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, j, size))
                inside = ok if inside is None else arith.andi(inside, ok)
                at.append(_clamp(j, size))
            return arith.select(inside, tensor.extract(source, at), value)
        new = generic([], [], [_empty_like(pad.results[0].type, out)], [identity_map(rank)], parallel(rank), body)[0]
    pad.results[0].replace_all_uses_with(new)
    pad.erase()
    return True


def rewrite_concat(concat):
    """tensor.concat as a gathering generic."""
    dim = ir.IntegerAttr(concat.attributes["dim"]).value
    inputs = list(concat.operands)
    with ir.InsertionPoint(concat), concat.location:
        sizes = [_dims(v) for v in inputs]
        starts, total = [], index(0)
        for s in sizes:
            starts.append(total)
            total = arith.addi(total, s[dim])
        out = list(sizes[0])
        out[dim] = total
        rank = len(out)

        def body(_out):
            ids = _index_ops(rank)
            result = None
            for v, s, start in reversed(list(zip(inputs, sizes, starts))):
                at = [_clamp(arith.subi(i, start), s[d]) if d == dim else i for d, i in enumerate(ids)]
                read = tensor.extract(v, at)
                if result is None:  # the last input: whatever lies past the others' ranges
                    result = read
                    continue
                mine = arith.cmpi(arith.CmpIPredicate.slt, ids[dim], arith.addi(start, s[dim]))
                result = arith.select(mine, read, result)
            return result
        new = generic([], [], [_empty_like(concat.results[0].type, out)], [identity_map(rank)], parallel(rank),
                      body)[0]
    concat.results[0].replace_all_uses_with(new)
    concat.erase()


def _mixed(op, name, dynamic_operands):
    """The static_<name> array of a tensor.insert_slice with its dynamic entries taken from `dynamic_operands` in
    order: index values."""
    dynamic = iter(dynamic_operands)
    sentinel = ir.ShapedType.get_dynamic_stride_or_offset() if name != "sizes" else _DYNAMIC
    return [next(dynamic) if v == sentinel else index(v)
            for v in ir.DenseI64ArrayAttr(op.attributes["static_" + name])]


def _source_dims(source_shape, sizes):
    """For each dim of the destination, the source dim it comes from, or None where a rank-reducing insert_slice
    drops it (a unit size the source does not have)."""
    out, k = [], 0
    for size in sizes:
        if k < len(source_shape) and (size == _DYNAMIC or source_shape[k] in (size, _DYNAMIC)):
            out.append(k)
            k += 1
        else:
            out.append(None)
    return out if k == len(source_shape) else None


def rewrite_insert_slice(op):
    """tensor.insert_slice as a generic over the destination reading, at each point, the source where the point lies
    in the slice (offset + stride * k) and the destination elsewhere; False when the dropped dims of a rank-reducing
    insert cannot be told."""
    source, dest = op.operands[0], op.operands[1]
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    rest = list(op.operands)[2:]
    offsets_v, sizes_v = rest[:segments[2]], rest[segments[2]:segments[2] + segments[3]]
    strides_v = rest[segments[2] + segments[3]:]
    static_sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    source_shape = list(ir.RankedTensorType(source.type).shape)
    from_source = _source_dims(source_shape, static_sizes)
    if from_source is None:
        return False
    with ir.InsertionPoint(op), op.location:
        offsets, sizes = _mixed(op, "offsets", offsets_v), _mixed(op, "sizes", sizes_v)
        strides = _mixed(op, "strides", strides_v)
        src = _dims(source)
        rank = len(offsets)

        def body(old, _out):
            inside, at = None, [None] * len(source_shape)
            for i, off, size, stride, k in zip(_index_ops(rank), offsets, sizes, strides, from_source):
                rel = arith.subi(i, off)
                step = arith.divsi(rel, stride)
                ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, rel, index(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, step, size))
                ok = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.eq, arith.remsi(rel, stride), index(0)))
                inside = ok if inside is None else arith.andi(inside, ok)
                if k is not None:
                    at[k] = _clamp(step, src[k])
            return arith.select(inside, tensor.extract(source, at), old)
        t = ir.RankedTensorType(dest.type)
        new = generic([dest], [identity_map(rank)], [_empty_like(t, _dims(dest))], [identity_map(rank)],
                      parallel(rank), body)[0]
    op.results[0].replace_all_uses_with(new)
    op.erase()
    return True


def _high_rank_copy(op):
    """A linalg.transpose or linalg.broadcast of rank > 3: as a generic it is a 'loop' kernel of tfn-gpu-tile (whose
    elementwise kernels map at most three dims to the grid)."""
    if op.name not in ("linalg.transpose", "linalg.broadcast"):
        return False
    return ir.RankedTensorType(op.operands[-1].type).rank > 3


@register("tfn-gpu-generalize", "Rewrite tensor.pad, tensor.concat, tensor.insert_slice and named linalg ops with "
          "reductions (convolutions, pooling) as linalg.generic, for tfn-gpu-tile")
def gpu_generalize(module_op):
    for pad in collect(module_op, lambda o: o.name == "tensor.pad"):
        if not rewrite_pad(pad):
            pad.location.emit_error("tfn-gpu-generalize: a tensor.pad with run-time low/high sizes or an index-"
                                    "dependent padding value has no GPU kernel")
            raise PassFailure()
    for concat in collect(module_op, lambda o: o.name == "tensor.concat"):
        rewrite_concat(concat)
    for insert in collect(module_op, lambda o: o.name == "tensor.insert_slice"):
        if not rewrite_insert_slice(insert):
            insert.location.emit_error("tfn-gpu-generalize: a rank-reducing tensor.insert_slice whose dropped "
                                       "dims cannot be told has no GPU kernel")
            raise PassFailure()
    named = collect(module_op, lambda o: o.name.startswith("linalg.") and o.name not in KEPT
                    and o.name not in ("linalg.pack", "linalg.unpack") or _high_rank_copy(o)
                    or o.name == "linalg.reduce" and narrow_reduction(o))
    if not named:
        return
    for i, op in enumerate(named):
        op.attributes["tfn.generalize"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
    lines = []
    for i in range(len(named)):
        lines += [f"%op{i} = transform.structured.match attributes {{tfn.generalize = {i} : i64}} in %root : "
                  f"({_ANY}) -> {_ANY}",
                  f"%g{i} = transform.structured.generalize %op{i} : ({_ANY}) -> {_ANY}"]
    apply_schedule(module_op, named_sequence(lines))
    for op in collect(module_op, lambda o: "tfn.generalize" in o.attributes):
        del op.attributes["tfn.generalize"]
