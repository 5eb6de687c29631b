"""Lowering of shape ops to linalg.transpose/broadcast and tensor reshapes, slices and concat.

Sizes known only at run time are checked there: a mismatch TF would reject is reported through the run-time
error channel (runtime_errors.py) and the op goes on with a fresh tensor of safe sizes, never reading out of
bounds.
"""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import ops, ops_shape
from tfn.dialects.types import TensorType, lowered_tensor_type
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import dim, dynamic_sizes, empty, generic, identity_map, index, lowering, parallel

DYN = ir.ShapedType.get_dynamic_size()


def _result(op_or_value):
    """The single result of a builder that returns either its value or its op."""
    return op_or_value if isinstance(op_or_value, ir.Value) else op_or_value.results[0]


def _ne(a, b):
    return arith.cmpi(arith.CmpIPredicate.ne, a, b)


def _empty_like(value, sizes):
    """A tensor.empty of value's type; `sizes` maps each dynamic dim to an index value."""
    t = ir.RankedTensorType(value.type)
    shape = [sizes[i] if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)]
    return tensor.EmptyOp(shape, t.element_type).result


def _checked(rw, value, checks, safe_sizes):
    """`value`, or a tensor.empty with `safe_sizes` (dim -> index value for its dynamic dims) where one of the
    run-time `checks` [(bad i1, details)] fails; each check is reported."""
    if not checks:
        return value
    bad = None
    for cond, details in checks:
        runtime_errors.report(rw, cond, details)
        bad = cond if bad is None else arith.ori(bad, cond)
    return arith.select(bad, _empty_like(value, safe_sizes), value)


def _reassociation(groups):
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def _cast(value, tt):
    """tensor.cast to the lowered `tt` (a no-op at run time; refines or forgets static sizes)."""
    want = lowered_tensor_type(tt)
    return value if value.type == want else tensor.cast(want, value)


def _collapse(value, groups, out):
    return tensor.collapse_shape(lowered_tensor_type(out), value, _reassociation(groups))


def _expand(value, groups, out, dyn_sizes):
    static = [DYN if d is None else d for d in out.shape]
    return tensor.expand_shape(lowered_tensor_type(out), value, _reassociation(groups), list(dyn_sizes), static)


def _squeeze_groups(rank, drop):
    """Reassociation that collapses the dims in `drop` (all size 1) into their kept neighbours."""
    groups, pending = [], []
    for i in range(rank):
        if i not in drop:
            groups.append(pending + [i])
            pending = []
        elif groups:
            groups[-1].append(i)
        else:
            pending.append(i)
    return groups


def _drop_dims(value, tt, drop):
    """The value with the size-1 dims `drop` removed; returns (value, its tfn type)."""
    if not drop:
        return value, tt
    ones = TensorType([1 if i in drop else d for i, d in enumerate(tt.shape)], tt.dtype)
    out = TensorType([d for i, d in enumerate(tt.shape) if i not in drop], tt.dtype)
    return _collapse(_cast(value, ones), _squeeze_groups(tt.rank, set(drop)), out), out


@lowering(ops.transpose)
def lower_transpose(rw):
    """tfn.transpose {perm} -> linalg.transpose into a tensor.empty (nothing for the identity perm)."""
    x, perm = rw.operands[0], list(rw.attrs["perm"])
    if perm == sorted(perm):
        return [x]
    sizes = dynamic_sizes(rw.out, [(x, rw.in_types[0], [perm.index(i) for i in range(len(perm))])])
    return [_result(linalg.transpose(x, outs=[empty(rw.out, sizes)], permutation=perm))]


def _flatten(x, tt):
    """x as a rank-1 tensor (static size when tt is static)."""
    flat = TensorType([ops_shape.num_elements(tt.shape)], tt.dtype)
    if tt.rank == 1:
        return x
    if tt.rank == 0:
        return _expand(x, [], flat, [])
    return _collapse(x, [list(range(tt.rank))], flat)


@lowering(ops.reshape)
def lower_reshape(rw):
    """tfn.reshape -> tensor.collapse_shape to 1-D, then tensor.expand_shape to the requested shape."""
    x, src, out = rw.operands[0], rw.in_types[0], rw.out
    if src.shape == out.shape:
        return [x]
    flat = _flatten(x, src)
    count = dim(flat, 0) if None in src.shape else None
    if None not in out.shape:
        n = ops_shape.num_elements(out.shape)
        if count is not None:
            flat = _checked(rw, flat, [(_ne(count, index(n)), [0, count, n])], {0: index(n)})
        flat = _cast(flat, TensorType([n], out.dtype))
        if out.rank <= 1:
            return [flat if out.rank else _collapse(flat, [], out)]
        return [_expand(flat, [list(range(out.rank))], out, [])]
    known = ops_shape.num_elements([d for d in out.shape if d is not None])
    if out.rank == 1:
        return [flat]
    if ops_shape.num_elements([d for d in src.shape if d is not None]) % known == 0:
        return [_expand(flat, [list(range(out.rank))], out, [arith.divui(count, index(known))])]
    runtime_errors.report(rw, _ne(arith.remui(count, index(known)), index(0)), [1, count, known])
    size = arith.divui(count, index(known))
    # A count that is no multiple of `known` is reported; the whole multiples are reshaped.
    flat = tensor.extract_slice(flat.type, flat, [], [arith.muli(size, index(known))], [], [0], [DYN], [1])
    return [_expand(flat, [list(range(out.rank))], out, [size])]


def _format_reshape(details, op):
    kind, count, known = details[:3]
    want = "has" if kind == 0 else "requires a multiple of"
    return f"Input to reshape is a tensor with {count} values, but the requested shape {want} {known}"


runtime_errors.may_fail(ops.reshape, _format_reshape)


@lowering(ops.expand_dims)
def lower_expand_dims(rw):
    """tfn.expand_dims -> tensor.expand_shape, the new unit dim joining a neighbour's group."""
    x, src = rw.operands[0], rw.in_types[0]
    a = ops_shape.expand_axis(src.rank, rw.attrs["axis"])
    groups = [[i if i < a else i + 1] for i in range(src.rank)]
    if groups:
        groups[min(a, src.rank - 1)] = sorted(groups[min(a, src.rank - 1)] + [a])
    dyn = [dim(x, i) for i, d in enumerate(src.shape) if d is None]
    return [_expand(x, groups, rw.out, dyn)]


@lowering(ops.squeeze)
def lower_squeeze(rw):
    """tfn.squeeze -> tensor.collapse_shape (squeezed dynamic dims are first cast to 1)."""
    x, src = rw.operands[0], rw.in_types[0]
    drop = ops_shape.squeeze_axes(src.shape, rw.attrs["axis"])
    sizes = {i: index(1) if i in drop else dim(x, i) for i, d in enumerate(src.shape) if d is None}
    checks = []
    for i in drop:
        if src.shape[i] is None:
            n = dim(x, i)
            checks.append((_ne(n, index(1)), [i, n]))
    return [_drop_dims(_checked(rw, x, checks, sizes), src, drop)[0]]


runtime_errors.may_fail(ops.squeeze, lambda d, op: f"Can not squeeze dim[{d[0]}], expected a dimension of 1, "
                                                 f"got {d[1]}")


def _broadcast_dynamic(x, src, out):
    """A linalg.generic reading x at clamped indices: a dynamic input dim may be 1 or the output's size."""
    off = out.rank - src.rank
    last = {i: arith.maxsi(arith.subi(dim(x, i), index(1)), index(0))
            for i, d in enumerate(src.shape) if d is None and out.shape[off + i] != 1}

    def body(_):
        idx = []
        for i, d in enumerate(src.shape):
            if d == 1 and out.shape[off + i] != 1:
                idx.append(index(0))
            elif i in last:
                idx.append(arith.minsi(linalg.IndexOp(off + i).result, last[i]))
            else:
                idx.append(linalg.IndexOp(off + i).result)
        return tensor.extract(x, idx)
    return generic([], [], [empty(out)], [identity_map(out.rank)], parallel(out.rank), body)[0]


def _broadcast_checks(x, src, out):
    """Run-time checks that each dynamic input dim is 1 or the output's size."""
    off = out.rank - src.rank
    checks = []
    for i, d in enumerate(src.shape):
        if d is None:
            n, target = dim(x, i), out.shape[off + i]
            bad = _ne(n, index(1))
            if target != 1:
                bad = arith.andi(bad, _ne(n, index(target)))
            checks.append((bad, [off + i, n, target]))
    return checks


runtime_errors.may_fail(ops.broadcast_to, lambda d, op: f"Incompatible shapes: dimension {d[0]} of the input is "
                                                      f"{d[1]} at run time, which cannot broadcast to {d[2]}")


@lowering(ops.broadcast_to)
def lower_broadcast_to(rw):
    """tfn.broadcast_to -> collapse the broadcast unit dims, then linalg.broadcast into a tensor.empty
    (a linalg.generic with clamped reads when a dynamic input dim may be broadcast)."""
    x, src, out = rw.operands[0], rw.in_types[0], rw.out
    off = out.rank - src.rank
    x = _checked(rw, x, _broadcast_checks(x, src, out), {i: index(1) for i, d in enumerate(src.shape) if d is None})
    if any(d is None and out.shape[off + i] != 1 for i, d in enumerate(src.shape)):
        return [_broadcast_dynamic(x, src, out)]
    static = TensorType([out.shape[off + i] if d is None else d for i, d in enumerate(src.shape)], src.dtype)
    x = _cast(x, static)
    drop = [i for i, d in enumerate(static.shape) if d == 1 and out.shape[off + i] != 1]
    x, _ = _drop_dims(x, static, drop)
    added = list(range(off)) + [off + i for i in drop]
    if not added:
        return [x]
    return [_result(linalg.broadcast(x, outs=[empty(out)], dimensions=added))]


@lowering(ops.tile)
def lower_tile(rw):
    """tfn.tile -> linalg.broadcast of x into [m0, d0, m1, d1, ...] (no new dim where a multiple is 1), then
    tensor.collapse_shape to [m0 * d0, m1 * d1, ...]: one vectorisable copy, the collapse is free."""
    x, src, out = rw.operands[0], rw.in_types[0], rw.out
    multiples = list(rw.attrs["multiples"])
    if all(m == 1 for m in multiples):
        return [x]
    shape, groups, added, dyn = [], [], [], []
    for i, (d, m) in enumerate(zip(src.shape, multiples)):
        group = []
        if m != 1:
            added.append(len(shape))
            group.append(len(shape))
            shape.append(m)
        group.append(len(shape))
        shape.append(d)
        groups.append(group)
        if d is None:
            dyn.append(dim(x, i))
    wide = TensorType(shape, src.dtype)
    spread = _result(linalg.broadcast(x, outs=[empty(wide, dyn)], dimensions=added))
    return [_collapse(spread, groups, out)]


def _concat_sizes(values, in_types, out, axis):
    """Index values for the dynamic dims of a concat result: the operands' sum along the axis."""
    sizes = []
    for d, size in enumerate(out.shape):
        if size is not None:
            continue
        if d != axis:
            sizes.append(next(dim(v, d) for v, t in zip(values, in_types) if t.shape[d] is None))
            continue
        terms = [dim(v, d) if t.shape[d] is None else index(t.shape[d]) for v, t in zip(values, in_types)]
        total = terms[0]
        for term in terms[1:]:
            total = arith.addi(total, term)
        sizes.append(total)
    return sizes


def _concat_inputs(values, axis):
    """The operands, with a single-use tensor.concat along the same axis replaced by its own operands
    (tfn.concat is binary: a list becomes a chain that should copy each element once)."""
    flat = []
    for v in values:
        owner = v.owner
        if (isinstance(owner, (ir.Operation, ir.OpView)) and owner.name == "tensor.concat"
                and ir.IntegerAttr(owner.attributes["dim"]).value == axis and len(list(v.uses)) == 1):
            flat.extend(owner.operands)
        else:
            flat.append(v)
    return flat


def _concat_checked(rw, v, first, out, axis):
    """A concat piece whose dynamic dims off the axis are checked against the result's (or the first piece's)."""
    t = ir.RankedTensorType(v.type)
    checks, sizes = [], {}
    for d in range(t.rank):
        if not t.is_dynamic_dim(d):
            continue
        n = dim(v, d)
        if d == axis:
            sizes[d] = n
            continue
        sizes[d] = want = index(out.shape[d]) if out.shape[d] is not None else dim(first, d)
        checks.append((_ne(n, want), [d, want, n]))
    return _checked(rw, v, checks, sizes)


runtime_errors.may_fail(ops.concat, lambda d, op: f"ConcatOp : Dimension {d[0]} in both shapes must be equal: "
                                                f"{d[1]} vs. {d[2]} at run time")


@lowering(ops.concat)
def lower_concat(rw):
    """tfn.concat {axis} -> tensor.concat (a chain of them becomes one; empty pieces need no copy)."""
    out = rw.out
    axis = rw.attrs["axis"] % out.rank
    if 0 in out.shape:
        return [empty(out, _concat_sizes(rw.operands, rw.in_types, out, axis))]
    values = []
    pieces = _concat_inputs(rw.operands, axis)
    for v in pieces:
        v = _concat_checked(rw, v, pieces[0], out, axis)
        t = ir.RankedTensorType(v.type)
        size = None if t.is_dynamic_dim(axis) else t.get_dim_size(axis)
        if size == 0:
            continue  # MLIR rejects a slice offset at the end of a dimension
        # Each piece takes the result's static sizes off the axis: no copy can overrun the result at run time.
        values.append(_cast(v, TensorType(out.shape[:axis] + (size,) + out.shape[axis + 1:], out.dtype)))
    if len(values) == 1:
        return [_cast(values[0], out)]
    return [tensor.concat(lowered_tensor_type(out), axis, values)]


def _slice_sizes(value, tt, axis):
    """(dynamic size values, static sizes) of a unit slice along `axis` of the rank+1 tensor around tt."""
    dyn, static = [], []
    for i, d in enumerate(tt.shape[:axis] + (1,) + tt.shape[axis:]):
        static.append(DYN if d is None else d)
        if d is None:
            dyn.append(dim(value, i))
    return dyn, static


runtime_errors.may_fail(ops.stack, lambda d, op: f"Shapes of all inputs must match: values[0].shape[{d[1]}] = "
                                               f"{d[2]} != values[{d[0]}].shape[{d[1]}] = {d[3]} at run time")


@lowering(ops.stack)
def lower_stack(rw):
    """tfn.stack -> one rank-reducing tensor.insert_slice per value into a tensor.empty."""
    first, out = rw.in_types[0], rw.out
    a = ops_shape.stack_axis(first.rank, rw.attrs["axis"])
    v0 = rw.operands[0]
    acc = empty(out, dynamic_sizes(out, [(v0, first, [i if i < a else i + 1 for i in range(first.rank)])]))
    if 0 in out.shape:
        return [acc]
    dyn, static = _slice_sizes(acc, first, a)
    sizes = {d: dim(v0, d) for d, n in enumerate(first.shape) if n is None}
    for i, v in enumerate(rw.operands):
        if i:
            v = _checked(rw, v, [(_ne(dim(v, d), n), [i, d, n, dim(v, d)]) for d, n in sizes.items()], sizes)
        offsets = [i if d == a else 0 for d in range(out.rank)]
        acc = tensor.insert_slice(v, acc, [], dyn, [], offsets, static, [1] * out.rank)
    return [acc]


runtime_errors.may_fail(ops.unstack, lambda d, op: f"Input shape axis {d[0]} must equal {d[1]}, got a dimension "
                                                 f"of {d[2]} at run time")


@lowering(ops.unstack)
def lower_unstack(rw):
    """tfn.unstack -> one rank-reducing tensor.extract_slice per result."""
    x, src = rw.operands[0], rw.in_types[0]
    a = rw.attrs["axis"] % src.rank
    item = TensorType(src.shape[:a] + src.shape[a + 1:], src.dtype)
    if 0 in item.shape:
        axes = [i if i < a else (None if i == a else i - 1) for i in range(src.rank)]
        return [empty(item, dynamic_sizes(item, [(x, src, axes)])) for _ in rw.out_types]
    if src.shape[a] is None:
        n = dim(x, a)
        sizes = {i: index(len(rw.out_types)) if i == a else dim(x, i) for i, d in enumerate(src.shape) if d is None}
        x = _checked(rw, x, [(_ne(n, index(len(rw.out_types))), [a, len(rw.out_types), n])], sizes)
    dyn, static = _slice_sizes(x, item, a)
    results = []
    for i, tt in enumerate(rw.out_types):
        offsets = [i if d == a else 0 for d in range(src.rank)]
        results.append(tensor.extract_slice(lowered_tensor_type(tt), x, [], dyn, [], offsets, static, [1] * src.rank))
    return results
