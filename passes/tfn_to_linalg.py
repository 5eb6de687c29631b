"""tfn-to-linalg: lower every tfn op to linalg/tensor/arith/math with the op's registered pattern."""
from mlir import ir

from tfn.dialects import optable
from tfn.dialects.abi import DATASET_ATTR, SITE_ATTR
from tfn.dialects.types import TensorType
from tfn.passes.lowering import (  # noqa: F401  (each module registers its family's patterns)
    callbacks,
    check,
    collective,
    conv,
    dataset_calls,
    elementwise,
    fill,
    gather,
    gather_nd,
    matmul,
    misc,
    random,
    reduction,
    scatter,
    shape,
    shape_of,
    sort,
)
from tfn.passes.lowering.common import PATTERNS, Rewrite
from tfn.passes.lowering.control_flow import (
    fix_bool_extracts,
    is_retyped,
    lowered,
    retype_control_flow,
    stop_loops_on_error,
)
from tfn.passes.lowering.runtime_errors import site_codes
from tfn.passes.options import VERIFY
from tfn.passes.registry import PassFailure, register
from tfn.passes.tfn_verify import verify_module
from tfn.passes.walk import funcs


def _retype_signature(fn):
    """Unsigned tensors become signless in the function's arguments and results."""
    for block in list(fn.regions[0].blocks)[:1]:  # a declaration has no entry block
        for arg in block.arguments:
            arg.set_type(lowered(arg.type))
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    new = ir.FunctionType.get([lowered(t) for t in ftype.inputs], [lowered(t) for t in ftype.results])
    fn.attributes["function_type"] = ir.TypeAttr.get(new)


def _survey(module_op):
    """One walk over the module (program order): its tfn ops, scf.while ops, func.func ops, the ops that
    retype_control_flow retypes, whether a func.func declares callback sites or dataset calls, whether a
    tensor.extract is there."""
    tfn, loops, fns, others, flags = [], [], [], [], {"declared": False, "extract": False}

    def visit(op):
        name = op.name
        if name.startswith("tfn."):
            tfn.append(op)
            return ir.WalkResult.ADVANCE
        if name == "func.func":
            fns.append(op)
            attrs = op.attributes
            if SITE_ATTR in attrs or DATASET_ATTR in attrs:
                flags["declared"] = True
        elif is_retyped(name):
            others.append(op)
            if name == "scf.while":
                loops.append(op)
            elif name == "tensor.extract":
                flags["extract"] = True
        return ir.WalkResult.ADVANCE

    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return tfn, loops, fns, others, flags


def lower_module(module_op, verify=1):
    """Replace each tfn op by its pattern's values; unknown ops get an error at their location. verify: whether to
    verify the tfn ops first (0 where tfn-verify just ran)."""
    if verify and verify_module(module_op):
        raise PassFailure()
    ops, loops, fns, others, flags = _survey(module_op)
    # Patterns see the original tfn types: lowering rewrites unsigned tensors to signless ones.
    from_mlir = TensorType.from_mlir
    plan = [(op, [from_mlir(v.type) for v in op.operands], [from_mlir(r.type) for r in op.results]) for op in ops]
    if flags["declared"]:  # (these replace func.calls and erase declarations: the survey's lists are stale)
        callbacks.lower_site_calls(module_op)  # traced py_function calls; their results get lowered types now
        dataset_calls.lower_dataset_calls(module_op)  # loops over dataset arguments
        fns, others = funcs(module_op), None
    for fn in fns:
        _retype_signature(fn)
    retype_control_flow(module_op, others)
    codes = site_codes([op for op, _, _ in plan])  # the run-time error channel's numbering
    for (op, in_types, out_types), code in zip(plan, codes):
        opdef = optable.lookup(op.name)
        fn = PATTERNS.get(opdef)
        if callbacks.has_strings(in_types, out_types):  # string ops call into the runtime
            fn = callbacks.STRING_PATTERNS.get(opdef, fn)
        if fn is None:
            op.location.emit_error(f"'{op.name}' op has no lowering to linalg")
            raise PassFailure()
        rw = Rewrite(op, in_types, out_types, opdef=opdef)  # attributes decoded when the pattern reads them
        rw.error_code = code
        with ir.InsertionPoint(op), op.location:
            new_values = fn(rw)
        for old, new in zip(op.results, new_values):
            old.replace_all_uses_with(new)
        op.erase()
    if flags["extract"] or flags["declared"]:  # (patterns make no tensor.extract of an i1 tensor)
        fix_bool_extracts(module_op)
    stop_loops_on_error(module_op, loops)


register("tfn-to-linalg", "Lower tfn ops to linalg, tensor, arith and math", options=[VERIFY])(lower_module)
