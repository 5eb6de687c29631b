"""tfn-verify: check every tfn op's operand and result types against the op table's type rule, and reject types
whose static size overflows int64 (MLIR's size computations would abort the process on them)."""
from mlir import ir

from tfn.dialects import optable
from tfn.dialects.types import oversized
from tfn.passes.registry import PassFailure, register
from tfn.passes.walk import collect, tfn_ops


def _types_of(op):
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    types += _region_types(op)
    return types


def _region_types(op):
    """The types of op's block arguments and, for a function, of its signature."""
    types = []
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


def _checked_walk(module_op):
    """The errors [(location, message)] of the tfn ops' type rules, or None when a type is oversized. One walk:
    the sizes of results, block arguments and signatures (every operand is one of those), and each tfn op's rule,
    checked once per (name, operand types, result types, attributes) — a traced function repeats a few."""
    seen, rules, errors, oversize = {}, {}, [], []

    def sized(types):
        for t in types:
            msg = seen.get(t, 0)
            if msg == 0:
                msg = seen[t] = oversized(t)
            if msg:
                oversize.append(msg)
                return False
        return True

    def visit(op):
        results = [r.type for r in op.results]
        if not sized(results) or (len(op.regions) or "function_type" in op.attributes) and not sized(
                _region_types(op)):
            return ir.WalkResult.INTERRUPT
        opdef = optable.lookup(op.name)
        if opdef is None:
            return ir.WalkResult.ADVANCE
        attrs = op.attributes
        key = (opdef, tuple(v.type for v in op.operands), tuple(results),
               tuple(attrs[n] if n in attrs else None for n in opdef.attrs))
        msg = rules.get(key, 0)
        if msg == 0:
            msg = rules[key] = optable.verify(op)
        if msg:
            errors.append((op.location, msg))
        return ir.WalkResult.ADVANCE

    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return None if oversize else errors


def verify_module(module_op):
    """Emit an error at each op with an oversized type and at each tfn op whose types break its rule; returns the
    number of errors."""
    errors = _checked_walk(module_op)
    if errors is None:  # an oversized type: each op holding one, as an operand too, gets the error
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
