"""Lowering of tensor-making tfn ops: constant."""
import numpy as np
from mlir import ir
from mlir.dialects import arith

from tfn.dialects import attrs as attr_codec
from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.passes.lowering.common import lowering


@lowering(ops.constant)
def lower_constant(rw):
    """tfn.constant {value} -> arith.constant (unsigned element types become signless)."""
    tt = rw.out
    if not (tt.dtype.is_unsigned or tt.dtype.is_bool or tt.dtype.is_string):
        # The value attribute is already what arith.constant holds (its type is the lowered type): no NumPy
        # round trip (ir.Operation.create: the op arith.constant builds).
        value = rw.op.attributes["value"]
        return [ir.Operation.create("arith.constant", results=[value.type], attributes={"value": value}).result]
    arr, tt = rw.attrs["value"]
    if tt.dtype.is_unsigned or tt.dtype.is_bool:
        value = ir.DenseElementsAttr.get(np.require(arr, requirements="C").view(np.int8),
                                         type=ttypes.lowered_tensor_type(tt))
    else:
        value = attr_codec.to_mlir("dense", (arr, tt))
    return [arith.constant(ttypes.lowered_tensor_type(tt), value)]
