"""tfn-copy-strided-results: a function result that bufferization made a memref.cast of a strided view (a slice of
a buffer with dynamic sizes) to the identity layout becomes a fresh contiguous copy of the view.

One-shot bufferization with identity-layout function boundaries casts a view whose strides it cannot prove
(`strided<[?, 1]>`: the row stride is a dynamic size of the sliced buffer) to the identity layout, which asserts
that the view is contiguous; it is not when the slice keeps part of each row (`x[:, :2]` of a computed tensor),
and the caller, which reads results as dense row-major buffers, read the wrong elements. A view whose layout is
static or has an offset is copied by bufferization itself; this pass copies the others.
"""
from mlir import ir
from mlir.dialects import arith, memref

from tfn.passes.registry import register
from tfn.passes.walk import collect, funcs


def _strided(t):
    return isinstance(ir.MemRefType(t).layout, ir.StridedLayoutAttr)


def _copy(view, to_type):
    """A new buffer of `to_type` (identity layout) holding the elements of `view`."""
    t = ir.MemRefType(to_type)
    sizes = [memref.dim(view, arith.constant(ir.IndexType.get(), i)) for i in range(t.rank) if t.is_dynamic_dim(i)]
    buffer = memref.alloc(t, sizes, [], alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64))
    memref.copy(view, buffer)
    return buffer


@register("tfn-copy-strided-results",
          "Return a contiguous copy of each result that is a memref.cast of a strided view to the identity layout")
def copy_strided_results(module_op):
    for fn in funcs(module_op):
        for ret in collect(fn, lambda op: op.name == "func.return"):
            for i, value in enumerate(list(ret.operands)):
                cast = value.owner
                if not isinstance(cast, ir.Operation) and hasattr(cast, "operation"):
                    cast = cast.operation
                if not isinstance(cast, ir.Operation) or cast.name != "memref.cast":
                    continue
                view = cast.operands[0]
                if not _strided(view.type) or _strided(value.type):
                    continue
                with ir.InsertionPoint(ret), ret.location:
                    ret.operands[i] = _copy(view, value.type)
