"""tfn-expand-strided-copies: a memref.copy between buffers that are not both contiguous becomes a linalg.copy.

memref.copy between two identity-layout buffers lowers to a memcpy; any other (a strided subview, as the padded
panels tfn-pack-matmul makes) lowers to a call of `memrefCopy` in MLIR's C runner utils, whose library loads
libMLIR and libLLVM (~70 ms of a new process's first call, and of loading a saved model). As a linalg.copy it
becomes loops (convert-linalg-to-loops) that LLVM vectorises, and the compiled code needs no runner utils."""
from mlir import ir
from mlir.dialects import linalg

from tfn.passes.registry import register
from tfn.passes.walk import collect


def _contiguous(t):
    """Whether memref type t has the identity layout (its copy lowers to a memcpy); unranked: treated as so."""
    if not isinstance(t, ir.MemRefType):
        return True
    layout = t.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(t.rank)


@register("tfn-expand-strided-copies",
          "Rewrite memref.copy ops with a non-identity layout as linalg.copy (loops, no runner-utils call)")
def expand_strided_copies(module_op):
    copies = collect(module_op, lambda op: op.name == "memref.copy")
    for op in copies:
        src, dst = op.operands
        if _contiguous(src.type) and _contiguous(dst.type):
            continue
        if not (isinstance(src.type, ir.MemRefType) and isinstance(dst.type, ir.MemRefType)):
            continue  # unranked: left to memrefCopy
        with ir.InsertionPoint(op), op.location:
            linalg.copy(src, outs=[dst])
        op.erase()
