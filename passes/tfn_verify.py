"""tfn-verify: check every tfn op's operand and result types against the op table's type rule, and reject types
whose static size overflows int64 (MLIR's size computations would abort the process on them)."""
from mlir import ir

from tfn.dialects import optable
from tfn.dialects.types import oversized
from tfn.passes.registry import PassFailure, register
from tfn.passes.walk import collect, tfn_ops


def _types_of(op):
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    for region in op.regions:
        for block in region.blocks:
            types += [a.type for a in block.arguments]
    if "function_type" in op.attributes:
        ftype = ir.TypeAttr(op.attributes["function_type"]).value
        if isinstance(ftype, ir.FunctionType):  # (llvm.func's !llvm.func type holds only LLVM types)
            ftype = ir.FunctionType(ftype)
            types += list(ftype.inputs) + list(ftype.results)
    return types


def _size_error(op, seen):
    """The message of the first oversized type of op, else None; seen: the types checked so far (uniqued in their
    context, which outlives the check) -> their message."""
    for t in _types_of(op):
        msg = seen.get(t, 0)
        if msg == 0:
            msg = seen[t] = oversized(t)
        if msg:
            return msg
    return None


def verify_module(module_op):
    """Emit an error at each op with an oversized type and at each tfn op whose types break its rule; returns the
    number of errors."""
    seen = {}
    errors = [(op.location, msg) for op in collect(module_op, lambda op: True) if (msg := _size_error(op, seen))]
    if not errors:
        errors = [(op.location, msg) for op in tfn_ops(module_op) if (msg := optable.verify(op))]
    for loc, msg in errors:
        loc.emit_error(msg)
    return len(errors)


@register("tfn-verify", "Verify tfn ops against the type rules of the op table; reject sizes that overflow int64")
def tfn_verify(module_op):
    if verify_module(module_op):
        raise PassFailure()
