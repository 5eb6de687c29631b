"""tfn-cache-large-buffers: the module's malloc and free calls go to tfn's buffer cache when the runtime gives one.

Every `llvm.call @malloc` / `@free` (the LLVM dialect: memref.alloc / memref.dealloc lowered, and the frees
tfn-return-on-failed-alloc adds) is made a call of a small function of the module, `tfn_malloc_routed` /
`tfn_free_routed` (ROUTED), which branches on the function a module global holds — `tfn_malloc_hook` /
`tfn_free_hook` (weak definitions, null at load) — to an indirect call of it, or, while it is null, to a direct call
of malloc / free. The calls are renamed where they are, so the k-th malloc call stays the k-th: runtime_errors names
the op of a failed one by tfn-return-on-failed-alloc's count, which counts calls of `tfn_malloc_routed` as mallocs
(`guarded_calls`); the routing functions come last in the module.
tfn's runtime sets both hooks when it loads the code (runtime/executable.py) to its buffer cache's tfn_malloc /
tfn_free (runtime/_buffer_cache.c: a large block freed is kept for the next call instead of being unmapped and
faulted in again; it takes and gives plain malloc blocks, so a buffer may be freed on either side). Code loaded
elsewhere (an AOT export linked into a C program) keeps malloc and free. Globals rather than symbols the loader
binds: the JIT that generates the code resolves every symbol a module names, in a process that may have no buffer
cache. Other allocators (the coroutine frames' aligned_alloc) are left alone. Run after tfn-return-on-failed-alloc
(which finds the malloc calls it guards by name); a module that declares neither malloc nor free is left unchanged.

The calls are renamed by MLIR's symbol-use replacement (C++), not found by a walk in Python: branching at every call
site instead took ~17 ms of bench (h)'s training step (a Python walk of its ~13,000 LLVM-dialect ops and a block split
per call); a call more per allocation costs nothing measurable (LLVM inlines it at O3). The routing functions are
hidden (not exported: called directly, never interposed), not internal: MLIR's ExecutionEngine (the fallback code
generator) cannot build a module with an internal function (it looks up a packed wrapper of every one defined).

A malloc whose block an in-place all-reduce helper takes (passes/lowering/collective.py: the allocated pointer of the
memref descriptor passed to it is the malloc's result) is routed through `tfn_shared_malloc_routed`, which branches on
`tfn_shared_malloc_hook`: in a job whose replicas share one machine, the runtime points it at the arena of an MPI-3
shared window (runtime/_shared_allreduce.c), where the other replicas can read and write the buffer, so the
all-reduce copies nothing. An arena block is not a malloc block: its frees go through `tfn_free_hook` as every free
here does (tfn_free hands arena blocks back to the arena). While the hook is null (one process, replicas on several
machines, AOT code) the block is malloc's. Only a module that declares such a helper is walked to find those mallocs.
"""
from mlir import ir

from tfn.passes.lowering.collective import INPLACE_HELPER
from tfn.passes.registry import register
from tfn.passes.walk import callee_of, collect

# callee -> (the global holding its replacement, the LLVM function type of both, the function routing its calls)
HOOKS = {"malloc": ("tfn_malloc_hook", "!llvm.func<ptr (i64)>", "tfn_malloc_routed"),
         "free": ("tfn_free_hook", "!llvm.func<void (ptr)>", "tfn_free_routed")}
# The malloc of a buffer an in-place all-reduce helper takes: (its hook, its routing function).
SHARED_MALLOC = ("tfn_shared_malloc_hook", "tfn_shared_malloc_routed")
ROUTED = {routed: callee for callee, (_, _, routed) in HOOKS.items()}  # routing function -> the callee it routes
ROUTED[SHARED_MALLOC[1]] = "malloc"


_ROUTING = {
    "malloc": """llvm.func hidden @{routed}(%size: i64) -> !llvm.ptr {{
  %address = llvm.mlir.addressof @{hook} : !llvm.ptr
  %held = llvm.load %address : !llvm.ptr -> !llvm.ptr
  %zero = llvm.mlir.zero : !llvm.ptr
  %unset = llvm.icmp "eq" %held, %zero : !llvm.ptr
  llvm.cond_br %unset, ^plain, ^cached
^plain:
  %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
^cached:
  %q = llvm.call %held(%size) : !llvm.ptr, (i64) -> !llvm.ptr
  llvm.return %q : !llvm.ptr
}}""",
    "free": """llvm.func hidden @{routed}(%pointer: !llvm.ptr) {{
  %address = llvm.mlir.addressof @{hook} : !llvm.ptr
  %held = llvm.load %address : !llvm.ptr -> !llvm.ptr
  %zero = llvm.mlir.zero : !llvm.ptr
  %unset = llvm.icmp "eq" %held, %zero : !llvm.ptr
  llvm.cond_br %unset, ^plain, ^cached
^plain:
  llvm.call @free(%pointer) : (!llvm.ptr) -> ()
  llvm.return
^cached:
  llvm.call %held(%pointer) : !llvm.ptr, (!llvm.ptr) -> ()
  llvm.return
}}"""}


# the callees as finalize-memref-to-llvm declares them (the routing functions are parsed beside them, to verify)
_DECLARATIONS = {"malloc": "llvm.func @malloc(i64) -> !llvm.ptr", "free": "llvm.func @free(!llvm.ptr)"}


def _routing_ops(module_op, callee, hook, routing):
    """(the hook's global, the routing function) of `callee`, parsed in module_op's context."""
    text = (f"llvm.mlir.global weak @{hook}() {{addr_space = 0 : i32}} : !llvm.ptr {{\n"
            f"  %0 = llvm.mlir.zero : !llvm.ptr\n  llvm.return %0 : !llvm.ptr\n}}\n{_DECLARATIONS[callee]}\n"
            + _ROUTING[callee].format(routed=routing, hook=hook))
    parsed = ir.Module.parse(text, context=module_op.context)
    ops = [o.operation for o in parsed.body.operations]
    return ops[0].detach_from_parent(), ops[2].detach_from_parent()


@register("tfn-cache-large-buffers", "Call malloc and free through module globals the runtime may set to its buffer "
          "cache's functions (null: malloc and free)")
def run(module_op):
    table = ir.SymbolTable(module_op)
    routed = []  # (callee, hook, routing function), in HOOKS' order
    for callee, (hook, fn_type, routing) in HOOKS.items():
        if callee not in table or hook in table:
            continue  # not declared, or routed already
        if str(ir.TypeAttr(table[callee].attributes["function_type"]).value) != fn_type:
            continue  # an unexpected signature (not what finalize-memref-to-llvm declares): left alone
        routed.append((callee, hook, routing))
    body = module_op.regions[0].blocks[0]
    for callee, _, routing in routed:
        ir.SymbolTable.replace_all_symbol_uses(callee, routing, module_op)  # (before the routing functions exist)
    if any(callee == "malloc" for callee, _, _ in routed) and _shared_mallocs(module_op, body):
        routed.append(("malloc", *SHARED_MALLOC))
    for callee, hook, routing in routed:
        hook_global, function = _routing_ops(module_op, callee, hook, routing)
        ir.InsertionPoint.at_block_begin(body).insert(hook_global)
        body.append(function)


def _shared_mallocs(module_op, body):
    """Route the mallocs whose blocks an in-place all-reduce helper takes through SHARED_MALLOC; whether any is."""
    if not any(op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value.startswith(INPLACE_HELPER)
               for op in body.operations):
        return False
    malloc_routed = HOOKS["malloc"][2]
    found = False
    for op in collect(module_op, lambda o: o.name == "llvm.call" and (callee_of(o) or "").startswith(INPLACE_HELPER)):
        if not len(op.operands):
            continue
        source = _allocated_pointer_source(op.operands[0])
        if source is not None and source.name == "llvm.call" and callee_of(source) == malloc_routed:
            source.attributes["callee"] = ir.FlatSymbolRefAttr.get(SHARED_MALLOC[1])
            found = True
    return found


def _allocated_pointer_source(value):
    """The op defining the allocated pointer (field 0) of the memref descriptor `value` was extracted from, when
    it is `llvm.extractvalue [0]` of a chain of `llvm.insertvalue`s; else None."""
    op = value.owner
    if isinstance(op, ir.Block):
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
