"""Which heap buffers of an LLVM-dialect function are certainly still allocated when a later allocation runs.

tfn-return-on-failed-alloc frees them when that later allocation fails, so that an out-of-memory error leaks
nothing. A buffer is the result of an allocator call j; it is freed by a call of `free` (or `realloc`) whose pointer
traces back to j through the memref descriptor (extractvalue/insertvalue of position 0: the allocated pointer).
Buffer j is live at allocation k when on every path from the function's entry to k, j ran and since then no free
of j ran, nor a free whose pointer cannot be traced (a buffer carried by a block argument: it might be j's) — a
forward must-analysis over the blocks with bit sets. Such a j dominates k, so a block that k's failure branches to
may use its pointer. At most MOST buffers are named per allocation. The answer errs on the safe side only: a buffer
it cannot prove live is left alone (leaked on that error), never freed twice. The function must be flat (LLVM
dialect: one region, no nested regions).
"""
from mlir import ir

FREES = ("free", "realloc")
# At most this many buffers (the latest allocated) are named live at one allocation: the frees emitted grow with the
# product of allocations and live buffers; past it, an out-of-memory error leaks the older ones.
MOST = 16


def _origin(value, allocations):
    """The index (in `allocations`: {Operation: index}) of the allocator call whose result `value` (a pointer) is,
    through descriptors, or None."""
    for _ in range(64):
        owner = value.owner
        if isinstance(owner, ir.Block):
            return None
        found = allocations.get(owner.operation)
        if found is not None:
            return found
        if owner.name != "llvm.extractvalue" or list(owner.attributes["position"]) != [0]:
            return None
        struct = owner.operation.operands[0]
        while True:  # the last insertvalue into position 0 of the descriptor
            inserter = struct.owner
            if isinstance(inserter, ir.Block) or inserter.name != "llvm.insertvalue":
                return None
            if list(inserter.attributes["position"]) == [0]:
                value = inserter.operation.operands[1]
                break
            struct = inserter.operation.operands[0]
    return None


def live_buffers(successors, allocs, frees):
    """{k: [the results of the allocator calls j live at the k-th allocator call]} of an LLVM function, from one
    scan of it: `successors`, per block (entry first) the indices of its successor blocks; `allocs`, its allocator
    calls and `frees`, its calls of FREES, each as (block index, position, op) in block order (a position orders the
    ops of one block)."""
    if len(allocs) < 2:
        return {}
    succs = successors
    numbered = {op.operation: j for j, (_, _, op) in enumerate(allocs)}
    # per block, its events in order: ("alloc", j) or ("free", j or None)
    events = [[] for _ in succs]
    for j, (bi, oi, _) in enumerate(allocs):
        events[bi].append((oi, True, j))
    for bi, oi, op in frees:
        events[bi].append((oi, False, _origin(op.operands[0], numbered)))
    for e in events:
        e.sort()

    def through(bi, state, at=None):
        """The bit set of live buffers after block bi entered with `state` ({k: state at allocation k} into `at`)."""
        for _, is_alloc, j in events[bi]:
            if is_alloc:
                if at is not None:
                    at[j] = state
                state |= 1 << j
            elif j is None:
                state = 0  # a free of a buffer that cannot be traced: it may be any
            else:
                state &= ~(1 << j)
        return state

    preds = [[] for _ in succs]
    order, seen, stack = [], {0}, [0]
    while stack:
        b = stack.pop()
        order.append(b)
        for c in succs[b]:
            preds[c].append(b)
            if c not in seen:
                seen.add(c)
                stack.append(c)
    everything = (1 << len(allocs)) - 1
    out = {b: everything for b in order}
    into = {0: 0}
    changed = True
    while changed:  # must-be-live: every path from the entry allocated it and freed it since on none
        changed = False
        for b in order:
            state = 0 if b == 0 else everything
            for p in preds[b]:
                state &= out[p]
            into[b] = state
            new = through(b, state)
            if new != out[b]:
                out[b], changed = new, True
    at = {}
    for b in order:
        through(b, into[b], at)
    live = {}
    for k, state in at.items():
        found = []
        while state and len(found) < MOST:  # the latest first
            j = state.bit_length() - 1
            found.append(allocs[j][2].results[0])
            state &= ~(1 << j)
        if found:
            live[k] = found
    return live
