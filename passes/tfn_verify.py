"""tfn-verify: check every tfn op's operand and result types against the op table's type rule."""
from tfn.dialects import optable
from tfn.passes.registry import PassFailure, register
from tfn.passes.walk import tfn_ops


def verify_module(module_op):
    """Emit an error at each tfn op whose types break its rule; returns the number of errors."""
    errors = [(op.location, msg) for op in tfn_ops(module_op) if (msg := optable.verify(op))]
    for loc, msg in errors:
        loc.emit_error(msg)
    return len(errors)


@register("tfn-verify", "Verify tfn ops against the type rules of the op table")
def tfn_verify(module_op):
    if verify_module(module_op):
        raise PassFailure()
