"""tfn-guard-worker-allocs: a heap allocation inside a parallel loop body that fails reports to the calling thread.

The bodies of scf.forall loops become the functions MLIR's async runtime runs on its worker threads
(tfn-async-parallel: `parallel_compute_fn`), which tfn-return-on-failed-alloc leaves alone: an error it recorded
there would land in the worker thread's copy of the thread-local error channel, which the runtime never reads. Here,
before the loops are outlined, each `memref.alloc` inside a forall body (the k-th memref.alloc of the module in
pre-order: tfn-check-allocs' ordinal) is followed by a null check of its buffer (its aligned pointer is 0 when malloc
returned null): on failure it records ALLOC_FAILED with details [ordinal, dim 0, dim 1, ...] through the error
channel's globals — tfn-hoist-error-slots, which runs next, turns those into the caller's slots, captured by the
outlined body — and the rest of the block (the work that would write the buffer) is skipped by an `scf.if`, except
the block's deallocations of buffers made before the if (freeing a null buffer is harmless), so nothing leaks and
the worker finishes its task normally. The calling thread sees the error after the loop and the call raises
ResourceExhaustedError. An allocation whose block yields values is guarded only inside an scf.for (the skipped
iteration yields its iteration arguments unchanged); a block of another op that yields values (none of tfn's
kernels allocates there) is left unguarded. Run after tfn-check-allocs, before tfn-hoist-error-slots.
"""
from mlir import ir
from mlir.dialects import arith, memref, scf

from tfn.dialects.abi import DETAIL_LEN
from tfn.passes.lowering import runtime_errors
from tfn.passes.registry import register
from tfn.passes.tfn_check_allocs import allocations


def _in_forall(op):
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.forall":
            return True
        parent = parent.parent
    return False


def _guard(alloc, ordinal):
    t = ir.MemRefType(alloc.result.type)
    if any(d == 0 for d in t.shape):
        return  # an empty buffer: nothing to write through
    block = alloc.operation.block
    ops = list(block.operations)
    at = next(i for i, op in enumerate(ops) if op == alloc.operation)
    rest, terminator = ops[at + 1:-1], ops[-1]
    carried = list(terminator.operands)
    parent = block.owner
    if carried and (parent is None or parent.name != "scf.for"):
        return  # documented above: no value to yield for a skipped iteration
    moved = [op.operation for op in rest]

    def made_after(value):  # defined by an op the if takes in (not a block argument, not made before the alloc)
        owner = value.owner
        return not isinstance(owner, ir.Block) and any(owner.operation == m for m in moved)

    keep = [op.name == "memref.dealloc" and not made_after(op.operands[0]) for op in rest]
    kept_after = [op for op, k in zip(rest, keep) if k]
    inside = [op for op, k in zip(rest, keep) if not k]
    index, i1 = ir.IndexType.get(), ir.IntegerType.get_signless(1)
    with ir.InsertionPoint(terminator), alloc.location:
        pointer = memref.extract_aligned_pointer_as_index(alloc.result)
        failed = arith.cmpi(arith.CmpIPredicate.eq, pointer, arith.constant(index, 0))
        dims, k = [], 0
        for d in t.shape:
            if ir.ShapedType.is_dynamic_size(d):
                size = alloc.operands[k]
                k += 1
                failed = arith.andi(failed, arith.cmpi(arith.CmpIPredicate.ne, size, arith.constant(index, 0)))
                dims.append(size)
            else:
                dims.append(d)
        runtime_errors.report_alloc_failure(alloc, failed, [ordinal] + dims[:DETAIL_LEN - 1])
        ok = arith.xori(failed, arith.constant(i1, 1))
        guarded = scf.IfOp(ok, [v.type for v in carried], has_else=bool(carried))
    then = guarded.then_block
    for op in inside:
        then.append(op)
    with ir.InsertionPoint(then), alloc.location:
        scf.YieldOp(carried)
    if carried:
        with ir.InsertionPoint(guarded.else_block), alloc.location:
            scf.YieldOp(list(block.arguments)[1:])  # scf.for: the iteration arguments, unchanged
        for i in range(len(carried)):
            terminator.operands[i] = guarded.results[i]
    for op in kept_after:
        op.move_before(terminator)


@register("tfn-guard-worker-allocs", "Check each heap allocation in a parallel loop body for null; report it to the "
          "calling thread and skip the body's work")
def run(module_op):
    for ordinal, alloc in enumerate(allocations(module_op)):
        if _in_forall(alloc.operation):
            _guard(alloc, ordinal)
