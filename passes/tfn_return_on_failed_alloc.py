"""tfn-return-on-failed-alloc: a function whose malloc returned null records the error and returns at once.

After every `llvm.call @malloc` / `@aligned_alloc` of a function (the LLVM dialect, after convert-func-to-llvm), a
null result branches to a new block that records ALLOC_FAILED with details [-1, bytes requested, k] (the k-th call
this pass guards, in `guarded_calls` order: runtime_errors.describe names the op from it) unless an error was
recorded already (tfn-check-allocs records the op's own error first for a size past memory), and returns
`llvm.mlir.zero` of the function's result type: nothing writes through the null pointer, and the runtime, which
reads the error, frees no buffer of a zeroed result descriptor. Before returning, it frees the buffers the function
allocated before that are certainly still allocated there (passes/live_buffers.py: their call dominates this one and
no free of them, or of a buffer it cannot trace, lies between); a buffer it cannot prove so (one freed on some path
only, or carried through a loop) is leaked, never freed twice. Coroutines (the async runtime's tasks, whose frames
are allocated with aligned_alloc) are left alone: they cannot simply return (a null frame is not checked: a few
hundred bytes per task). So are the parallel loop bodies async-parallel-for outlines (WORKER_FUNCTIONS), which
worker threads run: an error recorded here would go to the worker thread's copy of the error channel; tfn-guard-
worker-allocs guarded their allocations before they were outlined, reporting to the calling thread's slots.
In a module tfn-cache-large-buffers has routed, calls of its routing functions count as the malloc and free they
route (`guarded_calls` numbers the stage `llvm` module's calls), and the routing functions are left alone.
"""
from mlir import ir
from mlir.dialects import llvm

from tfn.dialects.abi import ALLOC_FAILED, DETAIL_LEN, ERROR_DETAIL, ERROR_FLAG
from tfn.passes.live_buffers import FREES, live_buffers
from tfn.passes.registry import register
from tfn.passes.tfn_cache_large_buffers import ROUTED
from tfn.passes.walk import callee_of, collect

ALLOCATORS = ("malloc", "aligned_alloc")
# The functions async-parallel-for outlines (upstream names; several loops get suffixes _0, _1, ...).
WORKER_FUNCTIONS = ("parallel_compute_fn", "async_dispatch_fn")


def _functions(root):
    """The llvm.func definitions under `root` (a module: its top level, and the modules nested in it): LLVM-dialect
    functions are never nested in one another, so their bodies are not walked."""
    found = []
    for op in root.regions[0].blocks[0].operations:
        name = op.name
        if name == "llvm.func":
            if op.regions[0].blocks:
                found.append(op.operation)
        elif name != "llvm.mlir.global" and op.operation.regions:
            found += [f for f in collect(op, lambda o: o.name == "llvm.func") if f.regions[0].blocks]
    return found


class _Scan:
    """One walk of an LLVM function (flat: one region), or none for a worker function: whether it is left alone
    (a coroutine or a worker function), its blocks, the indices of each one's successors, its allocator calls and
    frees as (block index, position in the walk, op) in block order, and the type it returns (None: nothing)."""

    def __init__(self, fn):
        self.skipped, self.blocks, self.allocs, self.frees, self.result = False, [], [], [], None
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        if name.startswith(WORKER_FUNCTIONS) or name in ROUTED:
            self.skipped = True
            return
        calls, returns = [], []

        def visit(op):
            name = op.name
            if name == "llvm.call":
                calls.append(op)
            elif name == "llvm.return":
                if not returns:
                    returns.append(op)
            elif name.startswith("llvm.intr.coro."):
                self.skipped = True
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        fn.walk(visit, ir.WalkOrder.PRE_ORDER)
        if self.skipped:
            return
        if returns:
            self.result = returns[0].operands[0].type if len(returns[0].operands) else None
        self.blocks = list(fn.regions[0].blocks)
        index = {b: i for i, b in enumerate(self.blocks)}
        self.successors = [[index[s] for s in b.successors] for b in self.blocks]
        for position, op in enumerate(calls):  # the walk visits a flat function's ops in block order
            callee = callee_of(op)
            callee = ROUTED.get(callee, callee)
            if callee in ALLOCATORS:
                self.allocs.append((index[op.block], position, op))
            elif callee in FREES and len(op.operands):
                self.frees.append((index[op.block], position, op))

    @property
    def calls(self):
        return [op for _, _, op in self.allocs]


def _ensure_globals(module_op):
    """The error channel's globals (dialects/abi.py) in their LLVM form, declared when the module has none yet."""
    table = ir.SymbolTable(module_op)
    if ERROR_FLAG in table:
        return
    block = module_op.regions[0].blocks[0]
    for text in (f"llvm.mlir.global external @{ERROR_FLAG}(0 : i32) {{addr_space = 0 : i32}} : i32",
                 f"llvm.mlir.global external @{ERROR_DETAIL}(dense<0> : tensor<{DETAIL_LEN}xi64>) "
                 f"{{addr_space = 0 : i32}} : !llvm.array<{DETAIL_LEN} x i64>"):
        ir.InsertionPoint.at_block_begin(block).insert(ir.Operation.parse(text))


class _Emitter:
    """What the checks of one run build again and again, built once (the bindings' attribute builders are slow): the
    types, the comparison predicates and a call of `free` that the others are clones of."""

    def __init__(self):
        self.i32, self.i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        self.ptr = ir.Type.parse("!llvm.ptr")
        predicate = ir.AttrBuilder.get("ICmpPredicate")
        ctx = ir.Context.current
        self.eq, self.ne = predicate(llvm.ICmpPredicate.eq, ctx), predicate(llvm.ICmpPredicate.ne, ctx)
        self.free = None

    def call_free(self, pointer):
        """`llvm.call @free(pointer)` at the current insertion point."""
        if self.free is None:
            self.free = llvm.call(None, [pointer], [], ir.DenseI32ArrayAttr.get([]), callee="free")
            return
        self.free.clone(ir.InsertionPoint.current).operands[0] = pointer


def _failure_block(fn, result_type, loc, e):
    """fn's block `^fail(%bytes: i64, %k: i64)`: record ALLOC_FAILED with details [-1, bytes, k] unless an error is
    recorded already, and return zeros."""
    i32, i64, ptr = e.i32, e.i64, e.ptr
    with loc:
        block = fn.regions[0].blocks.append(i64, i64)
    with ir.InsertionPoint(block), loc:
        flag = llvm.mlir_addressof(ptr, ERROR_FLAG)
        first = llvm.icmp(e.eq, llvm.load(i32, flag), llvm.mlir_constant(ir.IntegerAttr.get(i32, 0)))
        code = llvm.select(first, llvm.mlir_constant(ir.IntegerAttr.get(i32, ALLOC_FAILED)), llvm.load(i32, flag))
        llvm.store(code, flag)
        detail = llvm.mlir_addressof(ptr, ERROR_DETAIL)
        for i, v in enumerate((llvm.mlir_constant(ir.IntegerAttr.get(i64, -1)), *block.arguments)):
            slot = llvm.getelementptr(ptr, detail, [], ir.DenseI32ArrayAttr.get([0, i]),
                                      ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{DETAIL_LEN} x i64>")), 0)
            llvm.store(llvm.select(first, v, llvm.load(i64, slot)), slot)
        llvm.return_(arg=llvm.mlir_zero(result_type) if result_type is not None else None)
    return block


def _check(call, k, fail, rest, live, e):
    """Emit at the end of call's block: `cond_br (result == null && size != 0), ^fail(size, k), ^rest`, through a
    block that frees the buffers `live` (pointers) first if there are any; returns the ops emitted in call's block."""
    with ir.InsertionPoint(call.operation.block), call.location:
        null = llvm.mlir_zero(e.ptr)
        size = call.operands[len(call.operands) - 1]  # malloc(size), aligned_alloc(alignment, size)
        zero = llvm.mlir_constant(ir.IntegerAttr.get(size.type, 0))
        is_null = llvm.icmp(e.eq, call.results[0], null)
        nonempty = llvm.icmp(e.ne, size, zero)  # malloc(0) may give null
        failed = llvm.and_(is_null, nonempty)
        which = llvm.mlir_constant(ir.IntegerAttr.get(e.i64, k))
        if live:
            freeing = rest.create_before()
            with ir.InsertionPoint(freeing):
                for pointer in live:
                    e.call_free(pointer)
                llvm.br([size, which], fail)
            branch = llvm.cond_br(failed, [], [], freeing, rest)
        else:
            branch = llvm.cond_br(failed, [size, which], [], fail, rest)
    return [v.owner for v in (null, zero, is_null, nonempty, failed, which)] + [branch]


def _guard_block(block, numbered, fail, live, e):
    """Split `block` after each of its allocator calls (numbered: [(k, call)] in block order), last first, so that
    each op moves once: the ops after a call go to a new block its null check branches to."""
    ops = list(block.operations)
    calls = {call: k for k, call in numbered}
    positions = [(i, calls[op]) for i, op in enumerate(ops) if op.name == "llvm.call" and op.operation in calls]
    emitted, end = [], len(ops)
    for i, k in reversed(positions):
        rest = block.create_after()
        for op in ops[i + 1:end] + emitted:
            rest.append(op)
        call = ops[i]
        emitted, end = _check(call, k, fail, rest, live.get(k, []), e), i + 1


def guarded_calls(module_op):
    """The allocator calls this pass guards, in the order it numbers them: those of every function but coroutines
    and worker functions."""
    calls = []
    for fn in _functions(module_op):
        scan = _Scan(fn)
        calls += [] if scan.skipped else scan.calls
    return calls


@register("tfn-return-on-failed-alloc", "Return zeroed results from a function when its malloc returns null")
def run(module_op):
    k, freeing, e = 0, False, _Emitter()
    for fn in _functions(module_op):
        scan = _Scan(fn)
        if scan.skipped or not scan.allocs:
            continue
        fail = _failure_block(fn, scan.result, fn.location, e)
        first = k
        live = {first + j: buffers for j, buffers in live_buffers(scan.successors, scan.allocs, scan.frees).items()}
        groups = []  # [(block index, [(k, call)])] in order
        for bi, _, call in scan.allocs:
            if not groups or groups[-1][0] != bi:
                groups.append((bi, []))
            groups[-1][1].append((k, call.operation))
            k += 1
        for bi, numbered in groups:
            _guard_block(scan.blocks[bi], numbered, fail, live, e)
            freeing |= any(live.get(n) for n, _ in numbered)
    if k:
        _ensure_globals(module_op)
    if freeing and "free" not in ir.SymbolTable(module_op):
        with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
            llvm.LLVMFuncOp("free", ir.TypeAttr.get(ir.Type.parse("!llvm.func<void (ptr)>")))
