"""Lowering of tensor-making ops: fill/fill_like (linalg.fill), range, one_hot and eye (linalg.generic over
linalg.index), pad (linalg.fill, then tensor.insert_slice of x). A bad range (delta 0, or limit on the wrong side
of start) gives an empty tensor and reports through the run-time error channel (runtime_errors.py)."""
import struct

from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.errors import ResourceExhaustedError
from tfn.dialects.ops_fill import RANGE_ERRORS, one_hot_axis, pad_pairs
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


def _fill(value, init):
    out = linalg.fill(value, outs=[init])
    return out if isinstance(out, ir.Value) else out.results[0]


@lowering(ops.fill)
def lower_fill(rw):
    """tfn.fill {shape} -> linalg.fill of the extracted scalar into a tensor.empty."""
    return [_fill(tensor.extract(rw.operands[0], []), empty(rw.out))]


@lowering(ops.fill_like)
def lower_fill_like(rw):
    """tfn.fill_like -> linalg.fill into a tensor.empty sized like x (tensor.dim for its dynamic dims)."""
    x, xt = rw.operands[0], rw.in_types[0]
    init = empty(rw.out, dynamic_sizes(rw.out, [(x, xt, list(range(xt.rank)))]))
    return [_fill(tensor.extract(rw.operands[1], []), init)]


# range -------------------------------------------------------------------------------------------------

_OUT_OF_MEMORY = len(RANGE_ERRORS)


def _format_range(details, op):
    kind, start, limit, delta = details[:4]
    dtype = TensorType.from_mlir(op.operands[0].type).dtype
    if kind == _OUT_OF_MEMORY:
        return ResourceExhaustedError, ttypes.oom_message([start], dtype)
    if dtype.is_floating:  # the lowering stores float arguments as the bits of an f64
        start, limit, delta = (struct.unpack("<d", struct.pack("<q", v))[0] for v in (start, limit, delta))
    return RANGE_ERRORS[kind].format(start, limit, delta)


runtime_errors.may_fail(ops.range, _format_range)


def _as_detail(dtype, v):
    """A scalar argument as an i64 detail: integers sign-extended, floats as the bits of an f64."""
    if not dtype.is_floating:
        return v
    f64 = ir.F64Type.get()
    wide = v if v.type == f64 else arith.extf(f64, v)
    return arith.bitcast(ir.IntegerType.get_signless(64), wide)


def _range_size(dt, start, limit, delta):
    """(size as an index, error kind as an index with -1 for none) of TF's Range, never trapping."""
    zero, cmp = s.const(dt, 0), (lambda p, a, b: s.cmp(dt, p, a, b))
    up, down = cmp("gt", delta, zero), cmp("lt", delta, zero)
    kinds = [(cmp("eq", delta, zero), 0), (arith.andi(up, cmp("gt", start, limit)), 1),
             (arith.andi(down, cmp("lt", start, limit)), 2)]
    i64 = ir.IntegerType.get_signless(64)
    if dt.is_integer:
        lo, hi, step = [v if ir.IntegerType(v.type).width == 64 else arith.extsi(i64, v) for v in (start, limit, delta)]
        # the distance and step in the range's direction, unsigned: |limit - start| reaches 2**64 - 1 (int64 would
        # wrap: range(-2**63, 2**63 - 1, 2**62) counted 0 elements), |INT64_MIN| is 2**63; a delta of 0 (an
        # error) divides by 1. A count past INT64_MAX is INT64_MAX: more than memory holds.
        up64 = arith.cmpi(arith.CmpIPredicate.sgt, step, arith.constant(i64, 0))
        distance = arith.select(up64, arith.subi(hi, lo), arith.subi(lo, hi))
        stride = arith.select(up64, step, arith.subi(arith.constant(i64, 0), step))
        safe = arith.select(kinds[0][0], arith.constant(i64, 1), stride)
        count = arith.minui(arith.ceildivui(distance, safe), arith.constant(i64, 2 ** 63 - 1))
    else:
        q = math.ceil(math.absf(arith.divf(arith.subf(limit, start), delta)))
        finite = arith.andi(cmp("ge", q, zero), cmp("lt", q, s.const(dt, 2.0 ** 62)))
        kinds.append((arith.xori(finite, arith.constant(ir.IntegerType.get_signless(1), 1)), 3))
        count = arith.fptosi(i64, arith.select(finite, q, zero))
    kind = index(-1)
    for cond, k in reversed(kinds):
        kind = arith.select(cond, index(k), kind)
    bad = arith.cmpi(arith.CmpIPredicate.sge, kind, index(0))
    count = arith.select(bad, arith.constant(i64, 0), arith.maxsi(count, arith.constant(i64, 0)))
    return arith.index_cast(ir.IndexType.get(), count), kind, bad


@lowering(ops.range)
def lower_range(rw):
    """tfn.range -> out[i] = start + i * delta over a tensor.empty of ceil((limit - start) / delta) elements."""
    dt = rw.out.dtype
    start, limit, delta = (tensor.extract(v, []) for v in rw.operands)
    size, kind, bad = _range_size(dt, start, limit, delta)
    runtime_errors.report(rw, bad, [kind] + [_as_detail(dt, v) for v in (start, limit, delta)])
    too_big = runtime_errors.exceeds_memory(rw.op, size, dt.np.itemsize)
    runtime_errors.report(rw, too_big, [_OUT_OF_MEMORY, size, 0, 0])
    size = arith.select(too_big, index(0), size)
    elem = ttypes.element_type(dt)

    def body(_):
        i = arith.index_cast(ir.IntegerType.get_signless(64), linalg.IndexOp(0).result)
        if dt.is_floating:
            return arith.addf(start, arith.mulf(arith.sitofp(elem, i), delta))
        return arith.addi(start, arith.muli(arith.trunci(elem, i) if elem.width < 64 else i, delta))
    return generic([], [], [empty(rw.out, [size])], [identity_map(1)], parallel(1), body)


# one_hot -----------------------------------------------------------------------------------------------

@lowering(ops.one_hot)
def lower_one_hot(rw):
    """tfn.one_hot -> linalg.generic: select(indices[...] == linalg.index(axis), on_value, off_value)."""
    indices, on, off = rw.operands
    it, out = rw.in_types[0], rw.out
    a = one_hot_axis(it.rank, rw.attrs["axis"])
    i_axes = [k if k < a else k + 1 for k in range(it.rank)]
    init = empty(out, dynamic_sizes(out, [(indices, it, i_axes)]))
    scalar_map = affine_map(out.rank, [])
    i_map = affine_map(out.rank, [ir.AffineDimExpr.get(k) for k in i_axes])
    i64 = ir.IntegerType.get_signless(64)

    def body(idx, on_v, off_v, _):
        wide = idx if ir.IntegerType(idx.type).width == 64 else (
            arith.extui(i64, idx) if it.dtype.is_unsigned else arith.extsi(i64, idx))
        pos = arith.index_cast(i64, linalg.IndexOp(a).result)
        return arith.select(arith.cmpi(arith.CmpIPredicate.eq, wide, pos), on_v, off_v)
    return generic([indices, on, off], [i_map, scalar_map, scalar_map], [init], [identity_map(out.rank)],
                   parallel(out.rank), body)


# pad ---------------------------------------------------------------------------------------------------

@lowering(ops.pad)
def lower_pad(rw):
    """tfn.pad {paddings} -> linalg.fill of the value into a tensor.empty of the padded shape, then x inserted at
    offsets `before` (dynamic sizes: x's dim plus both paddings)."""
    (x, value), xt, out = rw.operands, rw.in_types[0], rw.out
    pairs = pad_pairs(xt.rank, rw.attrs["paddings"])
    grown = [arith.addi(dim(x, i), index(a + b)) for i, (d, (a, b)) in enumerate(zip(xt.shape, pairs)) if d is None]
    filled = _fill(tensor.extract(value, []), empty(out, grown))
    if 0 in xt.shape:
        return [filled]  # nothing to insert (MLIR rejects a slice offset at the end of a dimension)
    dyn = [dim(x, i) for i, d in enumerate(xt.shape) if d is None]
    static = [DYN if d is None else d for d in xt.shape]
    return [tensor.insert_slice(x, filled, [], dyn, [], [a for a, _ in pairs], static, [1] * xt.rank)]



# eye ---------------------------------------------------------------------------------------------------

@lowering(ops.eye)
def lower_eye(rw):
    """tfn.eye {shape} -> linalg.generic: select(linalg.index(rows) == linalg.index(columns), 1, 0)."""
    out = rw.out
    r = out.rank

    def body(_):
        same = arith.cmpi(arith.CmpIPredicate.eq, linalg.IndexOp(r - 2).result, linalg.IndexOp(r - 1).result)
        return arith.select(same, s.const(out.dtype, 1), s.const(out.dtype, 0))
    return generic([], [], [empty(out)], [identity_map(r)], parallel(r), body)
