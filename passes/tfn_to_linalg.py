"""tfn-to-linalg: lower every tfn op to linalg/tensor/arith/math with the op's registered pattern."""
from mlir import ir

from tfn.dialects import optable
from tfn.dialects.types import TensorType
from tfn.passes.lowering import (  # noqa: F401  (each module registers its family's patterns)
    callbacks,
    collective,
    conv,
    dataset_calls,
    elementwise,
    fill,
    gather,
    matmul,
    misc,
    random,
    reduction,
    scatter,
    shape,
    shape_of,
)
from tfn.passes.lowering.common import PATTERNS, Rewrite
from tfn.passes.lowering.control_flow import (
    fix_bool_extracts,
    lowered,
    retype_control_flow,
    stop_loops_on_error,
    user_loops,
)
from tfn.passes.lowering.runtime_errors import site_codes
from tfn.passes.options import VERIFY
from tfn.passes.registry import PassFailure, register
from tfn.passes.tfn_verify import verify_module
from tfn.passes.walk import funcs, tfn_ops


def _retype_signature(fn):
    """Unsigned tensors become signless in the function's arguments and results."""
    for block in list(fn.regions[0].blocks)[:1]:  # a declaration has no entry block
        for arg in block.arguments:
            arg.set_type(lowered(arg.type))
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    new = ir.FunctionType.get([lowered(t) for t in ftype.inputs], [lowered(t) for t in ftype.results])
    fn.attributes["function_type"] = ir.TypeAttr.get(new)


def lower_module(module_op, verify=1):
    """Replace each tfn op by its pattern's values; unknown ops get an error at their location. verify: whether to
    verify the tfn ops first (0 where tfn-verify just ran)."""
    if verify and verify_module(module_op):
        raise PassFailure()
    ops = tfn_ops(module_op)
    loops = user_loops(module_op)
    # Patterns see the original tfn types: lowering rewrites unsigned tensors to signless ones.
    plan = [(op, [TensorType.from_mlir(v.type) for v in op.operands],
             [TensorType.from_mlir(r.type) for r in op.results]) for op in ops]
    callbacks.lower_site_calls(module_op)  # traced py_function calls; their results get lowered types now
    dataset_calls.lower_dataset_calls(module_op)  # loops over dataset arguments
    for fn in funcs(module_op):
        _retype_signature(fn)
    retype_control_flow(module_op)
    codes = site_codes([op for op, _, _ in plan])  # the run-time error channel's numbering
    for (op, in_types, out_types), code in zip(plan, codes):
        opdef = optable.lookup(op.name)
        fn = PATTERNS.get(opdef)
        if callbacks.has_strings(in_types, out_types):  # string ops call into the runtime
            fn = callbacks.STRING_PATTERNS.get(opdef, fn)
        if fn is None:
            op.location.emit_error(f"'{op.name}' op has no lowering to linalg")
            raise PassFailure()
        rw = Rewrite(op, in_types, out_types, optable.decode_attrs(opdef, op), opdef)
        rw.error_code = code
        with ir.InsertionPoint(op), op.location:
            new_values = fn(rw)
        for old, new in zip(op.results, new_values):
            old.replace_all_uses_with(new)
        op.erase()
    fix_bool_extracts(module_op)
    stop_loops_on_error(module_op, loops)


register("tfn-to-linalg", "Lower tfn ops to linalg, tensor, arith and math", options=[VERIFY])(lower_module)
