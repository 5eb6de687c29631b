"""Helpers of the public functions composed of tfn ops (clip, rounding, statistics, ...): errors that name the
user's line while a function is traced, dtype checks in TF's words, static axes."""
from tfn.core import graph as graph_mod
from tfn.core.dispatch import _with_user_line
from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError


def user_error(error):
    """`error` with the user's file:line and excerpt when a function is being traced (as op errors have)."""
    g = graph_mod.current()
    return error if g is None else _with_user_line(error, g)


def require_dtype(op, x, allowed):
    """x's dtype is one of `allowed`, else TF's InvalidArgumentError naming op and the user's line."""
    try:
        rules.allowed(op, x.dtype, allowed)
    except InvalidArgumentError as e:
        raise user_error(e) from None


def norm_axis(op, axis, rank):
    """An int axis in [-rank, rank) as a non-negative int, else InvalidArgumentError naming op."""
    if not -rank <= axis < rank:
        raise user_error(InvalidArgumentError(f"axis {axis} is out of range for a tensor of rank {rank}: expected "
                                              f"[{-rank}, {rank}) [Op:{op}]"))
    return axis % rank


def with_gradient(forward, backward, *inputs):
    """forward(*inputs) computed without recording its ops; tapes differentiate its result through
    backward(y, dy) -> one gradient (or None) per input (as tfn.custom_gradient, for composites whose own ops'
    gradients would be wrong or slow: a factorisation's loop, a branch that is NaN off its domain). A forward that
    returns a tuple of tensors gets backward(ys, dys) (a zero tensor for an output the loss does not use)."""
    from tfn.gradients import recording  # start-up cost: (and layering) loaded with the first composite
    from tfn.ops.math_ops import identity  # start-up cost: (math_ops imports this module's users)
    with recording.pause():
        result = forward(*inputs)
        several = isinstance(result, (tuple, list))
        outs = [identity(y) for y in (result if several else [result])]
    if several:
        recording.record_backward(list(inputs), outs, lambda grads: list(backward(tuple(outs), tuple(grads))))
        return tuple(outs)
    recording.record_backward(list(inputs), outs, lambda grads: list(backward(outs[0], grads[0])))
    return outs[0]
