"""Lowering of tfn.shape: tensor.dim of each dimension, cast to the result's integer type, gathered by
tensor.from_elements (static dims fold to constants under canonicalize)."""
from mlir import ir
from mlir.dialects import arith, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.passes.lowering.common import dim, lowering


@lowering(ops.shape)
def lower_shape(rw):
    """tfn.shape {out_type} -> tensor.from_elements(index_cast(tensor.dim(x, i)) for each dim i)."""
    x, rank = rw.operands[0], rw.in_types[0].rank
    out = ttypes.lowered_tensor_type(rw.out)
    elem = ttypes.element_type(rw.out.dtype)
    if rank == 0:  # a scalar's shape is the empty vector
        return [arith.constant(out, ir.DenseElementsAttr.get_splat(out, ir.IntegerAttr.get(elem, 0)))]
    return [tensor.from_elements(out, [arith.index_cast(elem, dim(x, i)) for i in range(rank)])]
