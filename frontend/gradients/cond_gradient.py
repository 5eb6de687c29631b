"""The gradient of a traced `tfn.cond` or AutoGraph `if` on a tensor: another `tfn.cond` on the same predicate
whose branches differentiate the forward branches (traced again under a tape, from the state the forward cond
started from).

Only branches without effects are differentiated this way (no variable writes, no `tfn.print` or
`tfn.py_function`): tracing them again would repeat those. A cond with effects keeps the entry that
control flow records, whose gradient raises an error naming the cond and the user's line.
"""
import functools

from tfn import nest
from tfn.core.tensor import TensorBase
from tfn.gradients import recording
from tfn.gradients.tape import GradientTape, UnconnectedGradients, _Entry


def traced(g, pred, true_fn, false_fn, build, cond):
    """`build()` (the forward scf.if of tfn.cond), recorded with a differentiable backward when it can be."""
    result, state, marks = build_watched(g, build)
    leaves = nest.flatten(result)
    positions = [i for i, x in enumerate(leaves) if isinstance(x, TensorBase)]
    for tape, inside, opaque in recorded_here(marks, [leaves[i] for i in positions]):
        candidates = _outer_inputs(tape, inside, opaque.inputs)
        backward = functools.partial(_backward, g, pred, (true_fn, false_fn), positions, candidates, state, cond)
        tape._entries[-1] = _Entry(candidates, opaque.outputs, backward, opaque.location)
    return result


def build_watched(g, build):
    """Run `build()`, which makes a control-flow construct; returns (its result, g.state before it, (tape, its
    entry count before) per tape recording here). The list is empty when the construct had effects (a callback,
    a variable written — a variable first read inside enters the state as its input, which is no write): those
    keep the construct's opaque entry, and a gradient through it raises."""
    marks = [(t, len(t._entries)) for t in recording.tapes_here() if t._here()]
    n_callbacks, state = len(g.callbacks), dict(g.state)
    result = build()
    if len(g.callbacks) != n_callbacks or any(v is not state.get(k, g.captured_input(k)) for k, v in g.state.items()):
        return result, state, []
    return result, state, marks


def recorded_here(marks, outputs):
    """(tape, its entries made inside the construct, the construct's opaque entry) for each tape of `marks` whose
    last entry is the construct that made `outputs` (control flow records it last, if the tape saw it)."""
    made = {id(o) for o in outputs}
    for tape, mark in marks:
        entries = tape._entries
        if len(entries) > mark and any(id(o) in made for o in entries[-1].outputs):
            yield tape, entries[mark:-1], entries[-1]


def _outer_inputs(tape, inside, yielded):
    """The tracked tensors and variables from before the construct that its regions use or yield (`yielded`),
    each once, in order."""
    made = {id(o) for e in inside for o in e.outputs}
    seen, out = set(), []
    for x in [x for e in inside for x in e.inputs] + list(yielded):
        if id(x) in made or id(x) in seen or id(x) not in tape._tracked:
            continue
        seen.add(id(x))
        out.append(x)
    return out


def _backward(g, pred, branches, positions, candidates, state, cond, grads):
    saved, g.state = g.state, dict(state)  # the branches read variables as the forward cond did
    try:
        fns = [functools.partial(_branch_gradient, fn, positions, candidates, grads) for fn in branches]
        return list(cond(pred, fns[0], fns[1]))
    finally:
        g.state = saved


def _branch_gradient(fn, positions, candidates, grads):
    """One branch traced again under a tape: the gradients of its outputs (weighted by `grads`) per candidate."""
    with GradientTape() as tape:
        tape.watch(candidates)
        leaves = nest.flatten(fn())
        outs = [leaves[i] if i < len(leaves) and isinstance(leaves[i], TensorBase) else None for i in positions]
    # (a Python number, or a value a branch leaves unset, has no gradient)
    pairs = [(o, d) for o, d in zip(outs, grads) if o is not None and d is not None and o.dtype.is_floating]
    return tape.gradient([o for o, _ in pairs], candidates, output_gradients=[d for _, d in pairs],
                         unconnected_gradients=UnconnectedGradients.ZERO)
