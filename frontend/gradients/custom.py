"""`tfn.custom_gradient`: a function whose gradient is the one it returns, not its ops' (`tf.custom_gradient`)."""
import functools
import inspect

from tfn import nest
from tfn.core.tensor import TensorBase
from tfn.gradients import recording
from tfn.ops.math_ops import identity
from tfn.state.variables import Variable


def custom_gradient(f=None):
    """Decorate `f(*x) -> (y, grad_fn)`: tapes differentiate y through `grad_fn(*dy) -> dx` only.

    If f reads trainable variables, grad_fn must take `variables=` and return `(dx, d_variables)`."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        reads = []
        with recording.pause(reads):  # f's own ops are not recorded: grad_fn stands for them
            result, grad_fn = f(*args, **kwargs)
            flat = nest.flatten(result)
            outs = [identity(y) if isinstance(y, TensorBase) else y for y in flat]
        tapes = recording.tapes_here()
        if not tapes:
            return nest.pack_sequence_as(result, outs)
        # a variable passed as an argument is an input, as a tensor is (its gradient is grad_fn's dx for it)
        inputs = [x for x in nest.flatten((args, kwargs)) if isinstance(x, (TensorBase, Variable))]
        used = _variables(reads, inputs)
        if used and "variables" not in inspect.signature(grad_fn).parameters:
            raise TypeError("If using @custom_gradient with a function that uses variables, then grad_fn must "
                            "accept a keyword argument 'variables'.")
        for tape in tapes:
            for v in used + [x for x in inputs if isinstance(x, Variable) and x.trainable]:
                if tape._watch_accessed_variables:
                    tape._watch_variable(v)
        tensors = [y for y in outs if isinstance(y, TensorBase)]
        backward = functools.partial(_backward, grad_fn, len(inputs), used)
        recording.record_backward(inputs + used, tensors, backward)
        return nest.pack_sequence_as(result, outs)
    return decorated


def _variables(reads, inputs):
    """The trainable variables read (once each, in order), other than those passed as arguments."""
    seen = {id(x) for x in inputs}
    out = []
    for v in reads:
        if isinstance(v, Variable) and v.trainable and id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _backward(grad_fn, n_inputs, used, grads):
    if used:
        dx, dv = grad_fn(*grads, variables=used)
    else:
        dx, dv = grad_fn(*grads), []
    dx = list(dx) if isinstance(dx, (list, tuple)) else [dx]
    if len(dx) != n_inputs:
        raise ValueError(f"custom_gradient: grad_fn returned {len(dx)} gradients for {n_inputs} tensor inputs")
    return dx + list(dv)
