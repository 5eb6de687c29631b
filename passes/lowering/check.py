"""Lowering of tfn.check: the checked tensor itself, and a report through the run-time error channel
(runtime_errors.py) when the condition does not hold; the message is the op's own, with the details put in."""
from mlir import ir
from mlir.dialects import arith, tensor

from tfn.dialects import ops
from tfn.dialects.ops_check import check_message
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import lowering


def _format_check(details, op):
    return check_message(ir.StringAttr(op.attributes["message"]).value, details[:len(op.operands) - 2])


runtime_errors.may_fail(ops.check, _format_check)


@lowering(ops.check)
def lower_check(rw):
    """tfn.check(x, ok, details...) -> x; report(not ok, details)."""
    x, ok, *details = rw.operands
    if len(details) > runtime_errors.DETAIL_LEN:
        raise ValueError(f"tfn.check shows at most {runtime_errors.DETAIL_LEN} details, got {len(details)}")
    held = tensor.extract(ok, [])  # (a bool's lowered element type may be wider than i1)
    failed = arith.cmpi(arith.CmpIPredicate.eq, held, arith.constant(held.type, 0))
    runtime_errors.report(rw, failed, [tensor.extract(d, []) for d in details])
    return [x]
