"""tfn-cache-large-buffers: the module's malloc and free calls go to tfn's buffer cache when the runtime gives one.

Each `llvm.call @malloc` / `@free` (the LLVM dialect: memref.alloc / memref.dealloc lowered, and the frees
tfn-return-on-failed-alloc adds) is made conditional: a block branches on the function a module global holds —
`tfn_malloc_hook` / `tfn_free_hook` (weak definitions, null at load) — to an indirect call of it, or, while it is
null, to the direct call of malloc / free, which stays in place (the k-th malloc call stays the k-th:
runtime_errors names the op of a failed one by tfn-return-on-failed-alloc's count).
tfn's runtime sets both when it loads the code (runtime/executable.py) to its buffer cache's tfn_malloc / tfn_free
(runtime/_buffer_cache.c: a large block freed is kept for the next call instead of being unmapped and faulted in
again; it takes and gives plain malloc blocks, so a buffer may be freed on either side). Code loaded elsewhere (an
AOT export linked into a C program) keeps malloc and free. Globals rather than symbols the loader binds: the JIT
that generates the code resolves every symbol a module names, in a process that may have no buffer cache. Other
allocators (the coroutine frames' aligned_alloc) are left alone, and so are the frees tfn-return-on-failed-alloc
adds on the way out of a failed allocation (marked `tfn.failure_path`: five in six of a training step's frees; the
buffer cache's blocks are plain malloc blocks, so free() takes them, uncached). Run after
tfn-return-on-failed-alloc (which finds the malloc calls it guards by name); a module without malloc or free calls
is left unchanged.

A malloc whose block an in-place all-reduce helper takes (passes/lowering/collective.py: the allocated pointer of the
memref descriptor passed to it is the malloc's result) goes to `tfn_shared_malloc_hook` instead: in a job whose
replicas share one machine, the runtime points it at the arena of an MPI-3 shared window (runtime/_shared_allreduce.c),
where the other replicas can read and write the buffer, so the all-reduce copies nothing. An arena block is not a
malloc block: its frees all go through `tfn_free_hook` (tfn_free hands arena blocks back to the arena), those on a
failed allocation's way out included. While the hook is null (one process, replicas on several machines, AOT code)
the block is malloc's, as before.
"""
import itertools

from mlir import ir
from mlir.dialects import llvm

from tfn.passes.lowering.collective import INPLACE_HELPER
from tfn.passes.registry import register
from tfn.passes.tfn_return_on_failed_alloc import FAILURE_PATH
from tfn.passes.walk import callee_of, collect

# callee -> (the global holding its replacement, the LLVM function type of both)
HOOKS = {"malloc": ("tfn_malloc_hook", "!llvm.func<ptr (i64)>"), "free": ("tfn_free_hook", "!llvm.func<void (ptr)>")}
# The malloc of a buffer that an in-place all-reduce helper takes goes to this one instead (the shared-memory arena
# of runtime/_shared_allreduce.c in a job on one machine; tfn_free takes its blocks back).
SHARED_MALLOC_HOOK = "tfn_shared_malloc_hook"


def _allocated_pointer_source(value):
    """The op defining the allocated pointer (field 0) of the memref descriptor `value` was extracted from, when
    it is `llvm.extractvalue [0]` of a chain of `llvm.insertvalue`s; else None."""
    op = value.owner
    if not isinstance(op, ir.Operation) and not isinstance(op, ir.OpView):
        return None
    op = op.operation if isinstance(op, ir.OpView) else op
    if op.name != "llvm.extractvalue" or list(ir.DenseI64ArrayAttr(op.attributes["position"])) != [0]:
        return None
    desc = op.operands[0]
    while True:
        owner = desc.owner
        if isinstance(owner, ir.Block):
            return None
        owner = owner.operation if isinstance(owner, ir.OpView) else owner
        if owner.name != "llvm.insertvalue":
            return None
        if list(ir.DenseI64ArrayAttr(owner.attributes["position"])) == [0]:
            source = owner.operands[1].owner
            return None if isinstance(source, ir.Block) else source
        desc = owner.operands[0]


def _shared_mallocs(calls):
    """The malloc calls among `calls` whose block an in-place all-reduce helper takes as it is (its memref's
    allocated pointer is the malloc's result)."""
    found = []
    for op in calls:
        if not (callee_of(op) or "").startswith(INPLACE_HELPER) or not len(op.operands):
            continue
        source = _allocated_pointer_source(op.operands[0])
        if source is not None and source.name == "llvm.call" and callee_of(source) == "malloc":
            found.append(source)
    return found


def _declare_hook(module_op, hook):
    text = (f"llvm.mlir.global weak @{hook}() {{addr_space = 0 : i32}} : !llvm.ptr {{\n"
            f"  %0 = llvm.mlir.zero : !llvm.ptr\n  llvm.return %0 : !llvm.ptr\n}}")
    ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]).insert(ir.Operation.parse(text))


def _route(call, hook, tail):
    """Split call's block: branch on the hook to a block calling it or one keeping the direct call (so that the
    k-th malloc call stays the k-th: runtime_errors finds a failed one by tfn-return-on-failed-alloc's count).
    `tail` are the ops after the call in its block, which move to the join block; returns the ops this adds to the
    end of the call's block (the branch on the hook)."""
    ptr = ir.Type.parse("!llvm.ptr")
    block = call.operation.block
    results = [r.type for r in call.results]
    with call.location:
        join = block.create_after(*results)
        cached = block.create_after()
        plain = block.create_after()
    for op in tail:
        join.append(op)
    for old, new in zip(call.results, join.arguments):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(block), call.location:
        address = llvm.mlir_addressof(ptr, hook)
        held = llvm.load(ptr, address)
        zero = llvm.mlir_zero(ptr)
        unset = llvm.icmp(llvm.ICmpPredicate.eq, held, zero)
        branch = llvm.cond_br(unset, [], [], plain, cached)
    plain.append(call.operation)
    with ir.InsertionPoint(plain), call.location:
        llvm.br(list(call.results), join)
    with ir.InsertionPoint(cached), call.location:
        routed = llvm.CallOp(results[0] if results else None, [held, *call.operands], [],
                             ir.DenseI32ArrayAttr.get([]))
        llvm.br(list(routed.results), join)
    return [address.owner, held.owner, zero.owner, unset.owner, branch]


def _route_block(block, calls):
    """Route the calls of one block (in its order) from the last to the first: each op after a call moves once."""
    ops = list(block.operations)
    at, positions = 0, []
    for call, _ in calls:
        while ops[at] != call.operation:
            at += 1
        positions.append(at)
    end, added = len(ops), []
    for (call, hook), at in zip(reversed(calls), reversed(positions)):
        added = _route(call, hook, ops[at + 1:end] + added)
        end = at


@register("tfn-cache-large-buffers", "Call malloc and free through module globals the runtime may set to its buffer "
          "cache's functions (null: malloc and free)")
def run(module_op):
    table = ir.SymbolTable(module_op)
    hooks = {}  # callee -> its hook, for the callees routed
    for callee, (hook, fn_type) in HOOKS.items():
        if callee not in table or hook in table:
            continue  # not called, or routed already
        if str(ir.TypeAttr(table[callee].attributes["function_type"]).value) != fn_type:
            continue  # an unexpected signature (not what finalize-memref-to-llvm declares): left alone
        hooks[callee] = hook
    if not hooks:
        return
    every = collect(module_op, lambda op: op.name == "llvm.call")
    shared = _shared_mallocs(every) if "malloc" in hooks and "free" in hooks else []
    # a shared block is not a malloc block: every free of it goes through the hook, failure paths' too
    shared_pointers = {op.results[0] for op in shared}
    calls = [(op, SHARED_MALLOC_HOOK if op in shared else hooks[callee_of(op)]) for op in every
             if callee_of(op) in hooks and (FAILURE_PATH not in op.attributes or
                                            (callee_of(op) == "free" and op.operands[0] in shared_pointers))]
    for hook in [*hooks.values(), SHARED_MALLOC_HOOK]:  # (in HOOKS' order)
        if any(h == hook for _, h in calls):
            _declare_hook(module_op, hook)
    # (LLVM-dialect function bodies are flat blocks: a walk meets each block's calls one after another)
    for block, group in itertools.groupby(calls, key=lambda item: item[0].operation.block):
        _route_block(block, list(group))
