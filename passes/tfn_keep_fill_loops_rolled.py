"""tfn-keep-fill-loops-rolled: tell LLVM not to unroll loops that only store constants (the fills of kernels).

A fill of a matmul's accumulator (tfn-vectorize-kernels writes it one MR x NR tile of zeros at a time) is a loop nest
of a few hundred iterations whose body is only stores. LLVM's loop idiom pass turns each row into a memset that
looks cheap, the loop unroller then unrolls the whole nest, and code generation expands every memset back into
vector stores: one basic block of ~1,000 stores per fill, on which the instruction schedulers take quadratic time
(the MLP training step of bench (h): about half of its code generation time). Storing zeros runs at memory speed
either way, so such loops (every op in the body a constant, index arithmetic, a view, a store of a constant or a
loop of the same kind) get the loop annotation `unroll.disable`, which convert-scf-to-cf and convert-cf-to-llvm
carry to the loop's back edge as `!llvm.loop` metadata.
"""
from mlir import ir

from tfn.passes.registry import register
from tfn.passes.walk import collect

_STORES = {"vector.transfer_write", "vector.store", "memref.store"}
_PURE = {"arith.constant", "affine.apply", "memref.subview", "memref.reinterpret_cast", "memref.expand_shape",
         "memref.collapse_shape", "arith.addi", "arith.muli", "arith.subi", "arith.index_cast"}
ANNOTATION = "#llvm.loop_annotation<unroll = <disable = true>>"


def _is_constant(value):
    owner = value.owner
    owner = owner.operation if isinstance(owner, ir.OpView) else owner
    return isinstance(owner, ir.Operation) and owner.name == "arith.constant"


def _only_stores_constants(loop):
    """Whether every op in the body of scf.for `loop` is pure index/view work, a store of a constant, a nested loop
    of the same kind, or an empty scf.yield (the loop carries no values)."""
    if len(loop.results):
        return False
    stores = 0
    for op in loop.regions[0].blocks[0].operations:
        name = op.operation.name
        if name in _STORES:
            if not _is_constant(op.operands[0]):
                return False
            stores += 1
        elif name == "scf.for":
            if not _only_stores_constants(op.operation):
                return False
            stores += 1
        elif name not in _PURE and not (name == "scf.yield" and not len(op.operands)):
            return False
    return stores > 0


@register("tfn-keep-fill-loops-rolled",
          "Annotate loops that only store constants `unroll.disable` for LLVM (fills: no huge unrolled blocks)")
def keep_fill_loops_rolled(module_op):
    loops = collect(module_op, lambda op: op.name == "scf.for")
    if not loops:
        return
    annotation = ir.Attribute.parse(ANNOTATION)
    for loop in loops:
        if _only_stores_constants(loop):
            loop.attributes["loop_annotation"] = annotation
