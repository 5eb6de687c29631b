"""tfn-hoist-error-slots: take each address of the error channel once, at the entry of its function.

Every `memref.get_global` of the error channel's globals (dialects/abi.py) inside a func.func, nested regions
included, is replaced by one get_global at the start of the function's entry block. The channel is thread-local
(tfn-thread-local-errors): that one address is the calling thread's copy, and the bodies of parallel loops, which
tfn-async-parallel outlines into functions the worker threads run, receive it as a captured value, so an error found
on a worker thread is reported to the thread that made the call. Run before tfn-async-parallel, after every pass
that reports errors (tfn-check-allocs, tfn-guard-worker-allocs).
"""
from mlir import ir
from mlir.dialects import memref

from tfn.dialects.abi import ERROR_DETAIL, ERROR_FLAG
from tfn.passes.registry import register
from tfn.passes.walk import collect, funcs


def _channel_global(op):
    return op.name == "memref.get_global" and ir.FlatSymbolRefAttr(op.attributes["name"]).value in (ERROR_FLAG,
                                                                                                     ERROR_DETAIL)


@register("tfn-hoist-error-slots", "Take the error channel's addresses once per function, at its entry")
def run(module_op):
    for fn in funcs(module_op):
        if not fn.regions[0].blocks:
            continue
        entry = fn.regions[0].blocks[0]
        hoisted = {}
        for op in collect(fn, _channel_global):
            name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
            if name not in hoisted:
                with ir.InsertionPoint.at_block_begin(entry), op.location:
                    hoisted[name] = memref.get_global(op.results[0].type, name)
            op.results[0].replace_all_uses_with(hoisted[name])
            op.erase()
