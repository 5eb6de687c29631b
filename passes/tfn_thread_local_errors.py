"""tfn-thread-local-errors: one error channel per calling thread, so calls from several threads run at once.

Makes the error channel's globals (dialects/abi.py, in their LLVM form) thread-local (16-byte aligned) and adds
the exported functions `ptr tfn_error_flag_slot()` and `ptr tfn_error_detail_slot()`, which give the calling
thread's copies: the runtime asks for them on the thread that makes the call, and reads and resets them after it.
In the JIT's object code this is emulated TLS (`__emutls_get_address`, libgcc_s: runtime/toolchain.py). Worker threads
of a parallel kernel write the caller's copies: tfn-hoist-error-slots took every address of the channel once, at
the entry of the function the caller runs, before the parallel bodies were outlined. A module without an error
channel (or one made thread-local already) is left alone.
"""
from mlir import ir
from mlir.dialects import llvm

from tfn.dialects.abi import ERROR_DETAIL, ERROR_FLAG, SLOT_FUNCTIONS
from tfn.passes.registry import register


@register("tfn-thread-local-errors", "Make the error channel thread-local; export functions giving its addresses")
def run(module_op):
    table = ir.SymbolTable(module_op)
    if ERROR_FLAG not in table or SLOT_FUNCTIONS[ERROR_FLAG] in table:  # no channel, or done already
        return
    block = module_op.regions[0].blocks[0]
    ptr = ir.Type.parse("!llvm.ptr")
    for name in (ERROR_FLAG, ERROR_DETAIL):
        table[name].attributes["thread_local_"] = ir.UnitAttr.get()
        # An explicit alignment: emulated TLS allocates each thread's copy with the alignment the global declares,
        # and without one LLVM's code assumes a larger one (16-byte vector stores into the details) than it gets.
        table[name].attributes["alignment"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 16)
        with ir.InsertionPoint(block), table[name].location:
            fn = llvm.LLVMFuncOp(SLOT_FUNCTIONS[name], ir.TypeAttr.get(ir.Type.parse("!llvm.func<ptr ()>")))
            with ir.InsertionPoint(fn.body.blocks.append()):
                llvm.return_(arg=llvm.mlir_addressof(ptr, name))
