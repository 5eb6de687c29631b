"""tfn-return-on-failed-alloc: a function whose malloc returned null records the error and returns at once.

After every `llvm.call @malloc` / `@aligned_alloc` of a function (the LLVM dialect, after convert-func-to-llvm), a
null result branches to a new block that records ALLOC_FAILED with details [-1, bytes requested, k] (the k-th call
this pass guards, in `guarded_calls` order: runtime_errors.describe names the op from it) unless an error was
recorded already (tfn-check-allocs records the op's own error first for a size past memory), and returns
`llvm.mlir.zero` of the function's result type: nothing writes through the null pointer, and the runtime, which
reads the error, frees no buffer of a zeroed result descriptor. Buffers allocated before are not freed (an out-of-
memory error leaks them). Coroutines (the async runtime's parallel bodies, whose frames are allocated with
aligned_alloc) are left alone: they cannot simply return, and their allocations are the small per-worker tiles.
"""
from mlir import ir
from mlir.dialects import llvm

from tfn.dialects.abi import ALLOC_FAILED, DETAIL_LEN, ERROR_DETAIL, ERROR_FLAG
from tfn.passes.registry import register
from tfn.passes.walk import collect

ALLOCATORS = ("malloc", "aligned_alloc")


def _is_coroutine(fn):
    return bool(collect(fn, lambda op: op.name.startswith("llvm.intr.coro.")))


def _callee(op):
    attr = op.attributes["callee"] if "callee" in op.attributes else None
    return ir.FlatSymbolRefAttr(attr).value if attr is not None else None


def _result_type(fn):
    """The type fn returns (that of its llvm.return operands), or None when it returns nothing."""
    for ret in collect(fn, lambda op: op.name == "llvm.return"):
        return ret.operands[0].type if len(ret.operands) else None
    return None


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


def _record(call, ptr, k):
    """Emit: ALLOC_FAILED with details [-1, bytes, k] unless an error is recorded already."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    flag = llvm.mlir_addressof(ptr, ERROR_FLAG)
    first = llvm.icmp(llvm.ICmpPredicate.eq, llvm.load(i32, flag), llvm.mlir_constant(ir.IntegerAttr.get(i32, 0)))
    code = llvm.select(first, llvm.mlir_constant(ir.IntegerAttr.get(i32, ALLOC_FAILED)), llvm.load(i32, flag))
    llvm.store(code, flag)
    detail = llvm.mlir_addressof(ptr, ERROR_DETAIL)
    size = call.operands[len(call.operands) - 1]  # malloc(size), aligned_alloc(alignment, size)
    for i, v in enumerate((llvm.mlir_constant(ir.IntegerAttr.get(i64, -1)), size,
                           llvm.mlir_constant(ir.IntegerAttr.get(i64, k)))):
        slot = llvm.getelementptr(ptr, detail, [], ir.DenseI32ArrayAttr.get([0, i]),
                                  ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{DETAIL_LEN} x i64>")), 0)
        old = llvm.load(i64, slot)
        llvm.store(llvm.select(first, v, old), slot)


def _guard(call, result_type, k):
    """Split call's block after it: null -> a block returning zeros, else the rest of the block."""
    block = call.operation.block
    rest = block.create_after()
    following, seen = [], False
    for op in block.operations:
        if seen:
            following.append(op)
        seen = seen or op == call.operation
    for op in following:
        rest.append(op)
    fail = rest.create_before()
    with ir.InsertionPoint(fail), call.location:
        _record(call, ir.Type.parse("!llvm.ptr"), k)
        llvm.return_(arg=llvm.mlir_zero(result_type) if result_type is not None else None)
    with ir.InsertionPoint(block), call.location:
        null = llvm.mlir_zero(ir.Type.parse("!llvm.ptr"))
        size = call.operands[len(call.operands) - 1]
        zero = llvm.mlir_constant(ir.IntegerAttr.get(size.type, 0))
        failed = llvm.and_(llvm.icmp(llvm.ICmpPredicate.eq, call.results[0], null),
                           llvm.icmp(llvm.ICmpPredicate.ne, size, zero))  # malloc(0) may give null
        llvm.cond_br(failed, [], [], fail, rest)


def guarded_calls(module_op):
    """The allocator calls this pass guards, in the order it numbers them: those of every function but coroutines."""
    calls = []
    for fn in collect(module_op, lambda op: op.name == "llvm.func"):
        if fn.regions[0].blocks and not _is_coroutine(fn):
            calls += collect(fn, lambda op: op.name == "llvm.call" and _callee(op) in ALLOCATORS)
    return calls


@register("tfn-return-on-failed-alloc", "Return zeroed results from a function when its malloc returns null")
def run(module_op):
    calls = guarded_calls(module_op)
    for k, call in enumerate(calls):
        _guard(call, _result_type(call.operation.parent), k)  # (an llvm.func's body is one flat CFG)
    if calls:
        _ensure_globals(module_op)
