"""Gradient rules, registered against the op's `OpDef` object beside the op's public function."""
# id(OpDef) -> (OpDef, rule): OpDefs are frozen dataclasses holding dicts, so they are keyed by identity.
# rule(op, *output_grads) -> one gradient (or None) per input.
GRADIENTS = {}


def rule_for(opdef):
    """The gradient rule registered for `opdef`, or None."""
    entry = GRADIENTS.get(id(opdef))
    return entry[1] if entry is not None and entry[0] is opdef else None


class OpView:
    """What a gradient rule sees of one op that ran: its inputs, outputs and attributes."""

    __slots__ = ("opdef", "inputs", "attrs", "outputs", "needs")

    def __init__(self, opdef, inputs, attrs, outputs):
        self.opdef = opdef
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs
        self.needs = [True] * len(inputs)  # per input: whether its gradient is wanted (rules may skip the others)

    def __repr__(self):
        return f"<op {self.opdef.full_name}>"


def gradient(opdef):
    """Register `rule(op, *output_grads)` as the gradient of the table op `opdef` (once per op)."""
    def deco(rule):
        if id(opdef) in GRADIENTS:
            raise ValueError(f"a gradient of {opdef.full_name} is registered twice")
        GRADIENTS[id(opdef)] = (opdef, rule)
        return rule
    return deco
