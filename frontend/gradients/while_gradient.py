"""The gradient of a traced `tfn.while_loop`, with the loop's intermediate values kept for the backward pass.

The backward pass is two loops traced where the gradient is taken: the forward loop again, writing each
iteration's loop variables into TensorArrays (TF's while-loop accumulators), then a loop running the iterations
in reverse, each tracing the body again under a tape on that iteration's values to carry the loop variables'
gradients back and accumulate the gradients of the outer values the body uses.

Only loops of plain tensors whose types stay fixed and whose body and condition have no effects (no variable
writes, no `tfn.print` or `tfn.py_function`) are differentiated this way; other loops keep the entry control
flow records, whose gradient raises an error naming the loop and the user's line.
"""
import functools

import numpy as np

from tfn import nest
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.gradients.cond_gradient import _outer_inputs, build_watched, recorded_here
from tfn.gradients.tape import GradientTape, UnconnectedGradients, _Entry
from tfn.ops import fill_ops, math_ops
from tfn.ops.tensor_array import TensorArray
from tfn.state.variables import Variable


def traced(g, cond_fn, body_fn, loop_vars, build, while_loop):
    """`build()` (the forward scf.while), recorded with a differentiable backward when it can be."""
    result, state, marks = build_watched(g, build)
    if not all(isinstance(x, (TensorBase, bool, int, float, np.generic)) for x in loop_vars):
        return result  # (TensorArrays, nested structures: not yet)
    inits = [x if isinstance(x, TensorBase) else convert_to_tensor(x) for x in loop_vars]  # (as the loop did)
    outs = nest.flatten(result)
    if len(outs) != len(inits) or not all(isinstance(y, TensorBase) and x._shape == y._shape and None not in x._shape
                                          for x, y in zip(inits, outs)):
        return result
    for tape, inside, opaque in recorded_here(marks, outs):
        extra = _outer_inputs(tape, inside, ())  # what the body and condition use
        # (a value both a loop variable's start and used in the body is an input twice: its gradients add up)
        backward = functools.partial(_backward, g, cond_fn, body_fn, inits, extra, state, while_loop)
        tape._entries[-1] = _Entry(inits + extra, opaque.outputs, backward, opaque.location)
    return result


def _float(x):
    return x.dtype.is_floating


def _backward(g, cond_fn, body_fn, inits, extra, state, while_loop, grads):
    saved, g.state = g.state, dict(state)  # the loop reads variables as the forward loop did
    try:
        count, stacks = _replay(cond_fn, body_fn, inits, while_loop)
        return _reverse(body_fn, inits, extra, grads, count, stacks, while_loop)
    finally:
        g.state = saved


def _replay(cond_fn, body_fn, inits, while_loop):
    """(iterations, one TensorArray per loop variable holding its value at the start of each iteration)."""
    arrays = [TensorArray(x.dtype, size=0, dynamic_size=True, element_shape=x.shape) for x in inits]
    n = len(inits)

    def cond(i, *rest):
        return cond_fn(*rest[:n])

    def body(i, *rest):
        values, tas = rest[:n], rest[n:]
        tas = [ta.write(i, v) for ta, v in zip(tas, values)]
        return (i + 1, *body_fn(*values), *tas)

    out = while_loop(cond, body, [convert_to_tensor(np.int32(0))] + inits + arrays)
    return out[0], list(out[1 + n:])


def _reverse(body_fn, inits, extra, grads, count, stacks, while_loop):
    """The loop variables' gradients at the start, and the outer values' gradients summed over iterations."""
    n = len(inits)
    carried = [i for i in range(n) if _float(inits[i])]
    seeds = [grads[i] if grads[i] is not None else fill_ops.zeros_like(inits[i]) for i in carried]
    sums = [fill_ops.zeros_like(_value(c)) for c in extra]

    def cond(j, *rest):
        return math_ops.greater_equal(j, 0)

    def body(j, *rest):
        upstream, totals = rest[:len(carried)], rest[len(carried):]
        values = [ta.read(j) for ta in stacks]
        with GradientTape() as tape:
            tape.watch([values[i] for i in carried] + extra)
            outs = nest.flatten(body_fn(*values))
        pairs = [(outs[i], d) for i, d in zip(carried, upstream)]
        got = tape.gradient([o for o, _ in pairs], [values[i] for i in carried] + extra,
                            output_gradients=[d for _, d in pairs], unconnected_gradients=UnconnectedGradients.ZERO)
        return (j - 1, *got[:len(carried)], *[math_ops.add(s, d) for s, d in zip(totals, got[len(carried):])])

    start = math_ops.subtract(count, math_ops.cast(1, count.dtype))
    out = while_loop(cond, body, [start] + seeds + sums)
    init_grads = [None] * n
    for i, d in zip(carried, out[1:1 + len(carried)]):
        init_grads[i] = d
    return init_grads + list(out[1 + len(carried):])


def _value(x):
    return x.value() if isinstance(x, Variable) else x

