"""Lowering of the run-time checks that pass their operand through: check_numerics (a linalg.reduce classifying
every element: 2 for NaN, 1 for an infinity, 0 otherwise, the maximum reported), ensure_shape (each dynamic dim
compared with the expected size, then a tensor.cast to the refined type) and check (the operand itself; a report of
the details when the condition does not hold, the message the op's own with the details put in)."""
import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor
from mlir.dialects import math as math_d

from tfn.dialects import dtypes, ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import DETAIL_LEN
from tfn.dialects.ops_check import INF, NAN, check_message, numerics_message, shape_text
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import affine_map, dim, empty, generic, index, lowered_type, lowering
from tfn.passes.lowering.reduction import fill


def _format_numerics(details, op):
    return numerics_message(ir.StringAttr(op.attributes["message"]).value, details[0])


def _format_shape(details, op):
    want = list(ir.DenseI64ArrayAttr(op.attributes["shape"]))
    return (f"Shape of tensor {shape_text(details[:len(want)])} is not compatible with expected shape "
            f"{shape_text(want)}.")


runtime_errors.may_fail(ops.check_numerics, _format_numerics)
runtime_errors.may_fail(ops.ensure_shape, _format_shape)


def _classify(dt, e):
    """2 (i32) where e is NaN, 1 where it is infinite, else 0."""
    i32 = ir.IntegerType.get_signless(32)
    nan = arith.cmpf(arith.CmpFPredicate.UNO, e, e)
    inf = arith.cmpf(arith.CmpFPredicate.OEQ, math_d.absf(e), s.const(dt, np.inf))
    return arith.select(nan, arith.constant(i32, NAN), arith.select(inf, arith.constant(i32, INF),
                                                                      arith.constant(i32, 0)))


@lowering(ops.check_numerics)
def lower_check_numerics(rw):
    """tfn.check_numerics(x) -> x, after a reduction of every element's class (reported when not 0)."""
    x, tt = rw.operands[0], rw.in_types[0]
    if tt.rank == 0:
        found = _classify(tt.dtype, tensor.extract(x, []))
    else:
        init = fill(dtypes.int32, 0, empty(TensorType((), dtypes.int32)))
        op = linalg.ReduceOp([init.type], [x], [init], ir.DenseI64ArrayAttr.get(list(range(tt.rank))))
        block = op.regions[0].blocks.append(ttypes.element_type(tt.dtype), ir.IntegerType.get_signless(32))
        with ir.InsertionPoint(block):
            e, acc = block.arguments
            linalg.YieldOp([arith.maxsi(acc, _classify(tt.dtype, e))])
        found = tensor.extract(op.results[0], [])
    bad = arith.cmpi(arith.CmpIPredicate.ne, found, arith.constant(ir.IntegerType.get_signless(32), 0))
    runtime_errors.report(rw, bad, [found])
    return [x]


@lowering(ops.ensure_shape)
def lower_ensure_shape(rw):
    """tfn.ensure_shape(x) -> tensor.cast to the refined type, after each dim the type refines is compared with
    its expected size (a mismatch reports x's dims)."""
    x, tt, out = rw.operands[0], rw.in_types[0], rw.out
    dims = [index(d) if d is not None else dim(x, i) for i, d in enumerate(tt.shape)]
    bad = None
    for i, (have, want) in enumerate(zip(tt.shape, out.shape)):
        if have is None and want is not None:
            ne = arith.cmpi(arith.CmpIPredicate.ne, dims[i], index(want))
            bad = ne if bad is None else arith.ori(bad, ne)
    if bad is None:
        return [x]
    runtime_errors.report(rw, bad, dims[:DETAIL_LEN])
    return [tensor.cast(lowered_type(out), x)]


def _format_check(details, op):
    return check_message(ir.StringAttr(op.attributes["message"]).value, details[:len(op.operands) - 2])


runtime_errors.may_fail(ops.check, _format_check)


@lowering(ops.check)
def lower_check(rw):
    """tfn.check(x, ok, details...) -> x; report(not ok, details), made by a rank-0 linalg.generic reading `ok` and
    the details itself (on a GPU they are device memory: the generic becomes a kernel of one thread)."""
    x, ok, *details = rw.operands
    if len(details) > DETAIL_LEN:
        raise ValueError(f"tfn.check shows at most {DETAIL_LEN} details, got {len(details)}")

    def body(held, *values):  # (a bool's lowered element type may be wider than i1)
        failed = arith.cmpi(arith.CmpIPredicate.eq, held, arith.constant(held.type, 0))
        runtime_errors.report(rw, failed, list(values))
        return []
    scalars = [ok, *details]
    generic(scalars, [affine_map(0, [])] * len(scalars), [], [], [], body)
    return [x]
