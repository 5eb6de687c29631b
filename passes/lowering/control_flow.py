"""Retyping of the non-tfn ops around tfn ops (scf.if/scf.while regions, tensor.extract/tensor.cast) for lowering.

tfn patterns produce lowered storage types (bool tensors hold i8, unsigned ints are signless). The values that
control flow carries between them must have the same types, so before the patterns run every tensor result and
region argument of a non-tfn op takes its lowered type, and a tensor.extract of a bool (an scf condition)
becomes an i8 extract truncated to i1.
"""
from mlir import ir
from mlir.dialects import arith, memref, tensor

from tfn.dialects import types as ttypes
from tfn.dialects.abi import ERROR_FLAG
from tfn.dialects.types import TensorType
from tfn.passes.walk import collect

_SKIP = ("func.func", "builtin.module")


def lowered(t):
    """A tfn tensor type's lowered storage type; other types unchanged."""
    if not isinstance(t, ir.RankedTensorType) and t.typeid != ir.RankedTensorType.static_typeid:
        return t
    try:
        return ttypes.lowered_tensor_type(TensorType.from_mlir(t))
    except (TypeError, ValueError):
        return t


def is_retyped(name):
    """Whether retype_control_flow retypes an op of this name."""
    return not name.startswith("tfn.") and name not in _SKIP


def _retype(value):
    new = lowered(value.type)
    if new != value.type:
        value.set_type(new)


def _fix_bool_extract(op):
    """tensor.extract of a tensor<i1> (now i8 storage) -> an i8 extract and arith.trunci to i1."""
    if str(op.results[0].type) != "i1" or str(ir.RankedTensorType(op.operands[0].type).element_type) != "i8":
        return
    with ir.InsertionPoint(op), op.location:
        stored = arith.trunci(ir.IntegerType.get_signless(1), tensor.extract(op.operands[0], list(op.operands[1:])))
    op.results[0].replace_all_uses_with(stored)
    op.erase()


def retype_control_flow(module_op, ops=None):
    """Give non-tfn ops' tensor results and region arguments their lowered types (call before the patterns); ops:
    those ops when the caller collected them (every op under module_op but tfn ops and is_retyped's others)."""
    if ops is None:
        ops = collect(module_op, lambda op: is_retyped(op.name))
    for op in ops:
        for r in op.results:
            _retype(r)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    _retype(arg)


def fix_bool_extracts(module_op):
    """After the patterns: tensor.extract ops reading i8 bool storage yield i1 through arith.trunci."""
    for op in collect(module_op, lambda op: op.name == "tensor.extract"):
        _fix_bool_extract(op)


def stop_loops_on_error(module_op, loops):
    """Make each loop of `loops` also stop once the run-time error flag is set (after a failed callback or a
    bad index, compiled code runs on with safe values: a data-dependent loop could otherwise never end)."""
    if not loops or ERROR_FLAG not in ir.SymbolTable(getattr(module_op, "operation", module_op)):
        return
    i32 = ir.IntegerType.get_signless(32)
    for loop in loops:
        cond = loop.regions[0].blocks[0].operations[-1]  # scf.condition
        with ir.InsertionPoint(cond), cond.location:
            flag = memref.load(memref.get_global(ir.MemRefType.get([], i32), ERROR_FLAG), [])
            ok = arith.cmpi(arith.CmpIPredicate.eq, flag, arith.constant(i32, 0))
            go = arith.andi(cond.operands[0], ok)
        cond.operands[0] = go
