"""tfn-cache-large-buffers: the module's malloc and free calls go to tfn's buffer cache when the process has it.

Every `llvm.call @malloc` / `@free` (the LLVM dialect: memref.alloc / memref.dealloc lowered, and the frees
tfn-return-on-failed-alloc adds) calls instead a new internal function, `tfn_cached_malloc` / `tfn_cached_free`,
which calls `tfn_malloc` / `tfn_free` — weak external symbols — where they are bound when the code is loaded, and
malloc / free where they are not. tfn's runtime binds them to its buffer cache (runtime/_buffer_cache.c: a large
block freed is kept for the next call instead of being unmapped and faulted in again; it takes and gives plain
malloc blocks, so a buffer may be freed on either side). Code loaded elsewhere (an AOT export linked into a C
program, a saved model's library) finds no such symbols and keeps malloc and free. Other allocators (the coroutine
frames' aligned_alloc) are left alone. Run after tfn-return-on-failed-alloc (which finds the malloc calls it guards
by name); a module without malloc or free calls is left unchanged.
"""
from mlir import ir

from tfn.passes.registry import register
from tfn.passes.walk import collect

# callee -> (its wrapper, the cache's weak symbol, the LLVM function type both have)
ROUTED = {"malloc": ("tfn_cached_malloc", "tfn_malloc", "!llvm.func<ptr (i64)>"),
          "free": ("tfn_cached_free", "tfn_free", "!llvm.func<void (ptr)>")}


def _wrapper_text(callee, wrapper, symbol):
    if callee == "malloc":
        head, call_plain, call_cached, ret = (
            f"llvm.func linkonce_odr @{wrapper}(%n: i64) -> !llvm.ptr", "%p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr",
            f"%q = llvm.call @{symbol}(%n) : (i64) -> !llvm.ptr", ("llvm.return %p : !llvm.ptr",
                                                                    "llvm.return %q : !llvm.ptr"))
    else:
        head, call_plain, call_cached, ret = (
            f"llvm.func linkonce_odr @{wrapper}(%b: !llvm.ptr)", "llvm.call @free(%b) : (!llvm.ptr) -> ()",
            f"llvm.call @{symbol}(%b) : (!llvm.ptr) -> ()", ("llvm.return", "llvm.return"))
    return (f"{head} {{\n  %f = llvm.mlir.addressof @{symbol} : !llvm.ptr\n  %z = llvm.mlir.zero : !llvm.ptr\n"
            f"  %c = llvm.icmp \"eq\" %f, %z : !llvm.ptr\n  llvm.cond_br %c, ^plain, ^cached\n"
            f"^plain:\n  {call_plain}\n  {ret[0]}\n^cached:\n  {call_cached}\n  {ret[1]}\n}}")


def _callee(op):
    attr = op.attributes["callee"] if "callee" in op.attributes else None
    return ir.FlatSymbolRefAttr(attr).value if attr is not None else None


@register("tfn-cache-large-buffers", "Route malloc and free calls through tfn's buffer cache (weak tfn_malloc / "
          "tfn_free), falling back to malloc and free where the process has no cache")
def run(module_op):
    table = ir.SymbolTable(module_op)
    routed = []
    for callee, (wrapper, symbol, fn_type) in ROUTED.items():
        if callee not in table or wrapper in table or symbol in table:
            continue  # not called, or routed already
        declared = ir.TypeAttr(table[callee].attributes["function_type"]).value
        if str(declared) != fn_type:
            continue  # an unexpected signature (not what finalize-memref-to-llvm declares): left alone
        calls = collect(module_op, lambda op, c=callee: op.name == "llvm.call" and _callee(op) == c)
        if not calls:
            continue
        for call in calls:
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(wrapper)
        routed.append((callee, wrapper, symbol))
    block = module_op.regions[0].blocks[0]
    for callee, wrapper, symbol in routed:
        # parsed in a module of their own, which declares the callee too (a parsed op is verified at once)
        parsed = ir.Module.parse(f"llvm.func @{callee}{_signature(callee)}\n"
                                 f"llvm.func extern_weak @{symbol}{_signature(callee)}\n"
                                 + _wrapper_text(callee, wrapper, symbol))
        for op in list(parsed.body.operations)[1:]:
            ir.InsertionPoint.at_block_begin(block).insert(op.detach_from_parent())


def _signature(callee):
    return "(i64) -> !llvm.ptr" if callee == "malloc" else "(!llvm.ptr)"
