"""Which heap buffers of an LLVM-dialect function are certainly still allocated when a later allocation runs.

tfn-return-on-failed-alloc frees them when that later allocation fails, so that an out-of-memory error leaks
nothing. A buffer is the result of an allocator call j; it is freed by a call of `free` (or `realloc`) whose pointer
traces back to j through the memref descriptor (extractvalue/insertvalue of position 0: the allocated pointer).
Buffer j is live at allocation k when
- j dominates k (so its pointer is defined there: a block of the function that ends in `free(j)` may use it), and
- no path from j to k that does not run j again passes a free of j, nor a free whose pointer cannot be traced (a
  buffer carried by a block argument: it might be j's).
The answer errs on the safe side only: a buffer it cannot prove live is left alone (leaked on that error), never
freed twice. The function must be flat (LLVM dialect: one region, no nested regions).
"""
from mlir import ir

FREES = ("free", "realloc")


def _callee(op):
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value if "callee" in op.attributes else None


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


def _dominators(succs):
    """The immediate dominator of each block (index; the entry is 0), None for blocks the entry does not reach."""
    order, seen, stack = [], {0}, [(0, iter(succs[0]))]
    while stack:  # post-order
        b, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            order.append(b)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succs[nxt])))
    rank = {b: i for i, b in enumerate(order)}
    preds = {b: [] for b in order}
    for b in order:
        for s in succs[b]:
            preds[s].append(b)
    idom = {0: 0}
    changed = True
    while changed:  # Cooper, Harvey and Kennedy
        changed = False
        for b in reversed(order):
            if b == 0:
                continue
            new = None
            for p in preds[b]:
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while rank[x] < rank[y]:
                        x = idom[x]
                    while rank[y] < rank[x]:
                        y = idom[y]
                new = x
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    return idom


def _dominates(idom, a, b):
    """Whether block a dominates block b."""
    if b not in idom:
        return False
    while True:
        if b == a:
            return True
        if b == 0:
            return False
        b = idom[b]


def _reach(starts, stop, succs, lengths):
    """{block: [(lo, hi)]}: the op positions some path reaches from a point of `starts` ((block, position): the
    positions after it) without running past point `stop` (it may reach `stop` itself)."""
    reached = {}
    work = []

    def enter(b, lo):
        if b == stop[0] and lo <= stop[1]:
            reached.setdefault(b, []).append((lo, stop[1]))
            return
        reached.setdefault(b, []).append((lo, lengths[b] - 1))
        work.extend(succs[b])

    for b, i in starts:
        enter(b, i + 1)
    entered = set()
    while work:
        b = work.pop()
        if b not in entered:
            entered.add(b)
            enter(b, 0)
    return reached


def live_buffers(fn, is_allocation):
    """{k: [the results of the allocator calls j live at the k-th allocator call]} (calls numbered in block order,
    those that is_allocation(op) accepts) of LLVM function `fn`."""
    blocks = list(fn.regions[0].blocks)
    index = {b: i for i, b in enumerate(blocks)}
    succs, lengths, allocs, frees = [], [], [], []
    for bi, block in enumerate(blocks):
        ops = list(block.operations)
        lengths.append(len(ops))
        succs.append([index[s] for s in ops[-1].successors] if ops else [])
        for oi, op in enumerate(ops):
            if is_allocation(op):
                allocs.append((bi, oi, op))
            elif op.name == "llvm.call" and _callee(op) in FREES and len(op.operands):
                frees.append((bi, oi, op))
    if len(allocs) < 2:
        return {}
    numbered = {op.operation: j for j, (_, _, op) in enumerate(allocs)}
    freed = [(bi, oi, _origin(op.operands[0], numbered)) for bi, oi, op in frees]
    idom = _dominators(succs)
    live = {}
    for j, (bj, ij, call) in enumerate(allocs):
        later = [(k, bk, ik) for k, (bk, ik, _) in enumerate(allocs)
                 if k != j and (ij < ik if bk == bj else _dominates(idom, bj, bk))]
        if not later:
            continue
        after = _reach([(bj, ij)], (bj, ij), succs, lengths)
        freeing = [(bf, i) for bf, i, origin in freed if origin in (j, None)
                   and any(lo <= i <= hi for lo, hi in after.get(bf, ()))]
        tainted = _reach(freeing, (bj, ij), succs, lengths) if freeing else {}
        for k, bk, ik in later:
            if not any(lo <= ik <= hi for lo, hi in tainted.get(bk, ())):
                live.setdefault(k, []).append(call.results[0])
    return live
