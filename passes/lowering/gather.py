"""Lowering of gather (a linalg.generic reading params with tensor.extract) and strided_slice
(tensor.extract_slice, a reversing linalg.generic for negative strides, tensor.expand_shape for new axes).

Bad run-time indices never read out of bounds: the op yields zeros there and reports through the run-time
error channel (runtime_errors.py), which the runtime turns into InvalidArgumentError.
"""
from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import DETAIL_LEN
from tfn.dialects.ops_gather import gather_axes
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import (
    affine_map,
    dim,
    dynamic_sizes,
    empty,
    generic,
    identity_map,
    index,
    lowering,
    parallel,
)

DYN = ir.ShapedType.get_dynamic_size()
MAX_COORDS = DETAIL_LEN - 3


def _or(a, b):
    return b if a is None else arith.ori(a, b)


def _out_of_range(i, n):
    """i < 0 or i >= n, on index values."""
    return arith.ori(arith.cmpi(arith.CmpIPredicate.slt, i, index(0)), arith.cmpi(arith.CmpIPredicate.sge, i, n))


# gather ------------------------------------------------------------------------------------------------

def _format_gather(details, op):
    kind, rest = details[0], details[1:]
    if kind == 1:
        return f"params.shape[{rest[0]}]: {rest[1]} should be equal to indices.shape[{rest[0]}]: {rest[2]}"
    rank = ir.RankedTensorType(op.operands[1].type).rank
    coords = [str(c) for c in rest[2:2 + min(rank, MAX_COORDS)]] + ["..."] * (rank > MAX_COORDS)
    where = f"[{','.join(coords)}]" if rank else ""
    return f"indices{where} = {rest[0]} is not in [0, {rest[1]})"


runtime_errors.may_fail(ops.gather, _format_gather)


def _batch_mismatch(rw, b):
    """An i1 that holds when a batch dim of params and indices differ at run time (reported), or None."""
    params, indices = rw.operands
    pt, it = rw.in_types
    bad = None
    for k in range(b):
        if pt.shape[k] is None or it.shape[k] is None:
            p, q = dim(params, k), dim(indices, k)
            ne = arith.cmpi(arith.CmpIPredicate.ne, p, q)
            runtime_errors.report(rw, ne, [1, k, p, q])
            bad = _or(bad, ne)
    return bad


def _pick(cond, dtype, read):
    """scf.if cond: 0 of dtype, else read() (built in the else region, so it never runs when cond holds)."""
    op = scf.IfOp(cond, [ttypes.element_type(dtype)], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp([s.const(dtype, 0)])
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp([read()])
    return op.results[0]


@lowering(ops.gather)
def lower_gather(rw):
    """tfn.gather -> linalg.generic over the result reading params[..., indices[...], ...] by tensor.extract;
    an out-of-range index yields 0 and reports (kind 0, value, bound, indices position). With batch dims that
    may differ at run time, indices are read in the body too, and nothing is read when they differ (kind 1)."""
    params, indices = rw.operands
    pt, it, out = rw.in_types[0], rw.in_types[1], rw.out
    axis, b = gather_axes(pt, it, rw.attrs["axis"], rw.attrs["batch_dims"])
    r = it.rank
    p_axes = [d if d < axis else None if d == axis else d - 1 + r - b for d in range(pt.rank)]
    i_axes = [k if k < b else axis + k - b for k in range(r)]
    init = empty(out, dynamic_sizes(out, [(params, pt, p_axes), (indices, it, i_axes)]))
    n = dim(params, axis)
    mismatch = _batch_mismatch(rw, b)

    def body(*args):
        # (linalg.index must sit directly in the generic's body, not in the scf.if regions below)
        coords = [linalg.IndexOp(a).result for a in i_axes]
        pos = [None if a is None else linalg.IndexOp(a).result for a in p_axes]
        value = args[0] if mismatch is None else _pick(mismatch, it.dtype, lambda: tensor.extract(indices, coords))
        i = arith.index_cast(ir.IndexType.get(), value)
        bad = _out_of_range(i, n)
        runtime_errors.report(rw, bad, [0, value, n] + coords[:MAX_COORDS])
        if mismatch is not None:
            bad = arith.ori(bad, mismatch)
        return _pick(bad, out.dtype, lambda: tensor.extract(params, [i if p is None else p for p in pos]))
    if mismatch is None:
        i_map = affine_map(out.rank, [ir.AffineDimExpr.get(a) for a in i_axes])
        return generic([indices], [i_map], [init], [identity_map(out.rank)], parallel(out.rank), body)
    return generic([], [], [init], [identity_map(out.rank)], parallel(out.rank), body)


# strided_slice -----------------------------------------------------------------------------------------

def _format_slice(details, op):
    return f"slice index {details[0]} of dimension {details[1]} out of bounds."


runtime_errors.may_fail(ops.strided_slice, _format_slice)


def _bound(v, n, lo, hi):
    """Python's normalisation of a slice bound: v + n when negative, then clamped to [lo, hi]."""
    neg = arith.cmpi(arith.CmpIPredicate.slt, v, index(0))
    w = arith.select(neg, arith.addi(v, n), v)
    return arith.minsi(arith.maxsi(w, lo), hi)


def _slice_dim(b, e, step, n):
    """(offset, size) of the elements b:e:step of a dim of size n, the offset being the lowest element read
    (index values; b or e None when omitted)."""
    zero = index(0)
    if step > 0:
        b = zero if b is None else _bound(b, n, zero, n)
        e = n if e is None else _bound(e, n, zero, n)
        size = arith.maxsi(zero, arith.ceildivsi(arith.subi(e, b), index(step)))
        return b, size
    last, before = arith.subi(n, index(1)), index(-1)
    b = last if b is None else _bound(b, n, before, last)
    e = before if e is None else _bound(e, n, before, last)
    size = arith.maxsi(zero, arith.ceildivsi(arith.subi(b, e), index(-step)))
    low = arith.addi(b, arith.muli(arith.subi(size, index(1)), index(step)))
    is_empty = arith.cmpi(arith.CmpIPredicate.eq, size, zero)
    return arith.select(is_empty, zero, low), size


def _bounds(rw):
    """Per input dim: (begin, end) as index values (None when omitted); dynamic ones read from the operands."""
    attrs, values = rw.attrs, iter(rw.operands[1:])
    dyn_begin = {d: arith.index_cast(ir.IndexType.get(), tensor.extract(next(values), []))
                 for d in attrs["dynamic_begin"]}
    dyn_end = {d: arith.index_cast(ir.IndexType.get(), tensor.extract(next(values), []))
               for d in attrs["dynamic_end"]}
    out = []
    for d in range(rw.in_types[0].rank):
        b = dyn_begin[d] if d in dyn_begin else None if d in attrs["begin_mask"] else index(attrs["begin"][d])
        e = dyn_end[d] if d in dyn_end else None if d in attrs["end_mask"] else index(attrs["end"][d])
        out.append((b, e))
    return out


def _plan(rw):
    """(offsets, sizes, strides, kept-dim sizes, reversed kept dims, [(bad, index, dim, size)]) of the slice."""
    x, xt, attrs = rw.operands[0], rw.in_types[0], rw.attrs
    offsets, sizes, strides, kept, rev, checks = [], [], [], [], [], []
    for d, (b, e) in enumerate(_bounds(rw)):
        n = dim(x, d)
        if d in attrs["shrink_axis"]:
            w = arith.select(arith.cmpi(arith.CmpIPredicate.slt, b, index(0)), arith.addi(b, n), b)
            if xt.shape[d] is None or d in attrs["dynamic_begin"]:
                checks.append((_out_of_range(w, n), b, d, n))
            offsets.append(w)
            sizes.append(1)
            strides.append(1)
            continue
        step = attrs["strides"][d]
        off, size = _slice_dim(b, e, step, n)
        if step < 0:
            rev.append(len(kept))
        offsets.append(off)
        sizes.append(size)
        strides.append(abs(step))
        kept.append(size)
    return offsets, sizes, strides, kept, rev, checks


def _reverse(value, tt, dims):
    """value with the given dims reversed: a linalg.generic reading value[..., n-1-i, ...] by tensor.extract."""
    sizes = [dim(value, d) for d in range(tt.rank)]
    dyn = [sz for sz, d in zip(sizes, tt.shape) if d is None]
    last = {d: arith.subi(sizes[d], index(1)) for d in dims}

    def body(_):
        pos = [linalg.IndexOp(d).result for d in range(tt.rank)]
        pos = [arith.subi(last[d], p) if d in last else p for d, p in enumerate(pos)]
        return tensor.extract(value, pos)
    return generic([], [], [empty(tt, dyn)], [identity_map(tt.rank)], parallel(tt.rank), body)[0]


def _new_axes(value, mid, out, new_axis, kept):
    """tensor.expand_shape inserting unit dims at the output positions `new_axis`."""
    if not new_axis:
        return value
    groups, pending = [], []
    for p in range(out.rank):
        if p in new_axis:
            pending.append(p)
        else:
            groups.append(pending + [p])
            pending = []
    if pending and groups:
        groups[-1] += pending
    i64 = ir.IntegerType.get_signless(64)
    reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, p) for p in g]) for g in groups])
    dyn = [sz for sz, d in zip(kept, mid.shape) if d is None]
    static = [DYN if d is None else d for d in out.shape]
    return tensor.expand_shape(ttypes.lowered_tensor_type(out), value, reassociation, dyn, static)


def _slice(rw, mid, plan):
    """The sliced value (before the error check): extract_slice, cast, reverse, expand_shape."""
    offsets, sizes, strides, kept, rev, _ = plan
    x, xt = rw.operands[0], rw.in_types[0]
    loose = TensorType([None] * mid.rank, xt.dtype)
    dyn_sizes = [v for v in sizes if not isinstance(v, int)]
    static_sizes = [v if isinstance(v, int) else DYN for v in sizes]
    value = tensor.extract_slice(ttypes.lowered_tensor_type(loose), x, offsets, dyn_sizes, [],
                                 [DYN] * len(offsets), static_sizes, strides)
    want = ttypes.lowered_tensor_type(mid)
    if value.type != want:
        value = tensor.cast(want, value)
    if rev:
        value = _reverse(value, mid, rev)
    return _new_axes(value, mid, rw.out, set(rw.attrs["new_axis"]), kept)


def _checked_slice(rw, mid, plan, any_bad):
    """The slice as a linalg.generic reading x[first + i * step, ..., index, ...] by tensor.extract, or 0
    everywhere when a shrunk index is out of range (an scf.if yielding tensors would need a dealloc helper
    over i1 memrefs, which the LLVM lowering cannot handle)."""
    offsets, sizes, _, kept, rev, _ = plan
    x, xt, out, attrs = rw.operands[0], rw.in_types[0], rw.out, rw.attrs
    new_axis = set(attrs["new_axis"])
    positions = [p for p in range(out.rank) if p not in new_axis]
    safe = [arith.select(any_bad, index(0), off) for off in offsets]
    first, k = [], 0
    for d in range(xt.rank):
        if d in attrs["shrink_axis"]:
            first.append(None)
            continue
        step = abs(attrs["strides"][d])
        last = arith.addi(offsets[d], arith.muli(arith.subi(sizes[d], index(1)), index(step)))
        first.append((last, -step) if k in rev else (offsets[d], step))
        k += 1
    dyn = [sz for sz, dd in zip(kept, mid.shape) if dd is None]

    def body(_):
        idx = iter([linalg.IndexOp(p).result for p in positions])
        pos = [safe[d] if f is None else arith.addi(f[0], arith.muli(next(idx), index(f[1])))
               for d, f in enumerate(first)]
        return _pick(any_bad, out.dtype, lambda: tensor.extract(x, pos))
    init = _new_axes(empty(mid, dyn), mid, out, new_axis, kept)
    return generic([], [], [init], [identity_map(out.rank)], parallel(out.rank), body)[0]


@lowering(ops.strided_slice)
def lower_strided_slice(rw):
    """tfn.strided_slice -> rank-reducing tensor.extract_slice (|strides|), reversed dims for negative strides,
    tensor.expand_shape for new axes; with a shrunk index checked at run time, a linalg.generic that yields
    zeros (and reports) when the index is out of range."""
    out, new_axis = rw.out, set(rw.attrs["new_axis"])
    mid = TensorType([d for p, d in enumerate(out.shape) if p not in new_axis], out.dtype)
    plan = _plan(rw)
    if not plan[5]:
        return [_slice(rw, mid, plan)]
    any_bad = None
    for bad, value, d, n in plan[5]:
        runtime_errors.report(rw, bad, [value, d, n])
        any_bad = _or(any_bad, bad)
    return [_checked_slice(rw, mid, plan, any_bad)]
