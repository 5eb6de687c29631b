"""Gradient rules, registered against the op's `OpDef` object beside the op's public function (tfn/ops/*_grad.py).

The rule modules load when a rule is first asked for (`rules()`, `rule_for`) or registered: `import tfn` leaves
them out, and a program that never differentiates never loads them."""
# id(OpDef) -> (OpDef, rule): OpDefs are immutable and compared by identity, so they are keyed by identity.
# rule(op, *output_grads) -> one gradient (or None) per input.
_GRADIENTS = {}
_LOADED = []


def rules():
    """{id(OpDef): (OpDef, rule)} of every registered gradient rule."""
    if not _LOADED:
        _LOADED.append(True)  # (first: the modules register through gradient(), which asks again)
        # start-up cost: the op families' rules load with the first gradient (~3% of `import tfn`'s own work)
        from tfn.ops import array_grad, math_grad, nn_grad, trig_grad  # noqa: F401
    return _GRADIENTS


def rule_for(opdef):
    """The gradient rule registered for `opdef`, or None."""
    entry = rules().get(id(opdef))
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
        registered = rules()
        if id(opdef) in registered:
            raise ValueError(f"a gradient of {opdef.full_name} is registered twice")
        registered[id(opdef)] = (opdef, rule)
        return rule
    return deco
