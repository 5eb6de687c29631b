"""tfn-widen-bool-memrefs: store every memref of i1 as i8 (loads truncate, stores extend).

Bool tensors are i8 after tfn-to-linalg, but buffer-deallocation-pipeline makes its own i1 buffers: deallocating
several memrefs at once (an scf.if yielding more than one buffer) lowers to a `dealloc_helper` function taking
`memref<?xi1>` ownership arrays, and finalize-memref-to-llvm aborts the process on a load/store of i1 (it
asserts element widths >= 8 bits). Run after convert-bufferization-to-memref.
"""
from mlir import ir
from mlir.dialects import arith, memref

from tfn.passes.registry import register
from tfn.passes.walk import collect


def _is_i1(t):
    return isinstance(t, ir.IntegerType) and t.width == 1


def _widened(t):
    """memref<...xi1> -> memref<...xi8> (same shape, layout, memory space); other types unchanged."""
    if not isinstance(t, ir.MemRefType) or not _is_i1(t.element_type):
        return t
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), layout=t.layout, memory_space=t.memory_space,
                             loc=ir.Location.unknown())


def _retype_values(op):
    for r in op.results:
        new = _widened(r.type)
        if new != r.type:
            r.set_type(new)
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                new = _widened(arg.type)
                if new != arg.type:
                    arg.set_type(new)


def _retype_function(fn):
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    new = ir.FunctionType.get([_widened(t) for t in ftype.inputs], [_widened(t) for t in ftype.results])
    if new != ftype:
        fn.attributes["function_type"] = ir.TypeAttr.get(new)


def _fix_load(op):
    """A load of an i1 result from a (now i8) memref becomes an i8 load and arith.trunci."""
    if not _is_i1(op.results[0].type):
        return
    with ir.InsertionPoint(op), op.location:
        wide = memref.load(op.operands[0], list(op.operands[1:]))
        narrow = arith.trunci(ir.IntegerType.get_signless(1), wide)
    op.results[0].replace_all_uses_with(narrow)
    op.erase()


def _fix_store(op):
    """A store of an i1 value into a (now i8) memref stores its arith.extui."""
    if not _is_i1(op.operands[0].type):
        return
    with ir.InsertionPoint(op), op.location:
        op.operands[0] = arith.extui(ir.IntegerType.get_signless(8), op.operands[0])


@register("tfn-widen-bool-memrefs", "Store i1 memrefs as i8 (finalize-memref-to-llvm cannot lower i1 loads/stores)")
def widen_bool_memrefs(module_op):
    ops = collect(module_op, lambda op: op.name != "builtin.module")
    for op in ops:
        if op.name == "func.func":
            _retype_function(op)
        _retype_values(op)
    for op in ops:
        if op.name == "memref.load":
            _fix_load(op)
        elif op.name == "memref.store":
            _fix_store(op)
