"""tfn-check-allocs: a heap allocation of a run-time size that cannot succeed reports, and fails without harm.

Before each `memref.alloc` with dynamic sizes (the k-th memref.alloc in pre-order: its ordinal) this pass emits its
byte count, multiplied out with overflow checks; a count that overflows int64 or exceeds the machine's physical
memory (sysconf) records ALLOC_FAILED with details [ordinal, dim 0, dim 1, ...] (the requested dims:
runtime_errors.describe names the tfn op and the user's line from the ordinal) and replaces the sizes by ones whose
buffer malloc cannot give (about 2**62 bytes). tfn-return-on-failed-alloc then returns from the function as soon
as malloc gives null (recording ALLOC_FAILED with the byte count where nothing was recorded yet), so nothing ever
writes through it. Static sizes were checked when the function was traced. Run on the bufferized module, before
scf is lowered (the checks use scf.if), first in tfn-lower-to-llvm: the ordinals count the allocations of stage
`bufferized`.
"""
from mlir import ir
from mlir.dialects import arith

from tfn.dialects.abi import DETAIL_LEN
from tfn.passes.lowering import runtime_errors
from tfn.passes.registry import register
from tfn.passes.walk import collect

POISON_BYTES = 1 << 62  # what a rejected allocation asks malloc for: more than any address space holds


def _item_bytes(element_type):
    if isinstance(element_type, ir.IndexType):
        return 8
    width = getattr(element_type, "width", None)
    if width is None and isinstance(element_type, ir.ComplexType):
        width = 2 * ir.ComplexType(element_type).element_type.width
    return max((width or 64) // 8, 1)


def _checked_bytes(static_bytes, dynamic):
    """(bytes as i64, overflowed as i1): static_bytes times every dynamic size (index values), unsigned-checked."""
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    n, over = arith.constant(i64, static_bytes), arith.constant(i1, 0)
    zero = arith.constant(i64, 0)
    for d in dynamic:
        wide = arith.index_cast(i64, d)
        product = arith.MulUIExtendedOp(n, wide)
        over = arith.ori(over, arith.cmpi(arith.CmpIPredicate.ne, product.high, zero))
        n = product.low
    return n, arith.ori(over, arith.cmpi(arith.CmpIPredicate.slt, n, zero))


def _check(alloc, ordinal):
    t = ir.MemRefType(alloc.result.type)
    static_bytes = _item_bytes(t.element_type)
    for d in t.shape:
        if not ir.ShapedType.is_dynamic_size(d):
            static_bytes *= d
    if static_bytes == 0:
        return  # an empty buffer, whatever its dynamic sizes
    dynamic = list(alloc.operands)
    index = ir.IndexType.get()
    if not dynamic:
        return  # static sizes were checked when the function was traced (types.check_size, check_memory)
    with ir.InsertionPoint(alloc), alloc.location:
        dims, k = [], 0
        for d in t.shape:
            if ir.ShapedType.is_dynamic_size(d):
                dims.append(dynamic[k])
                k += 1
            else:
                dims.append(d)
        details = [ordinal] + dims[:DETAIL_LEN - 1]
        n, over = _checked_bytes(static_bytes, dynamic)
        too_big = arith.ori(over, runtime_errors.exceeds_memory(alloc, arith.index_cast(index, n), 1))
        runtime_errors.report_alloc_failure(alloc, too_big, details)
        poison = [arith.constant(index, max(POISON_BYTES // static_bytes, 1))] + \
            [arith.constant(index, 1)] * (len(dynamic) - 1)
        for i, (d, p) in enumerate(zip(dynamic, poison)):
            alloc.operands[i] = arith.select(too_big, p, d)


def allocations(module_op):
    """The module's heap allocations in the order this pass numbers them."""
    return collect(module_op, lambda op: op.name == "memref.alloc")


@register("tfn-check-allocs", "Record ALLOC_FAILED for a run-time allocation size past memory; make its malloc fail")
def run(module_op):
    for ordinal, alloc in enumerate(allocations(module_op)):
        _check(alloc, ordinal)
