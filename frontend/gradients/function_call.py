"""An eager call of a `tfn.function` under a tape: recorded as one op whose backward is a compiled function.

The forward runs the compiled trace as usual. Its backward function is itself a `tfn.function` (one per
function, so one compiled trace per argument types, like the forward's): it runs the forward again inside a
tape and returns the gradients of the outputs with respect to the tensor arguments and the variables the
call reads, all traced and compiled into one native function. A trace that writes variables or calls back
into Python cannot be run twice without repeating those effects: such a call runs its Python function
eagerly under the tape instead (as `tfn.config.run_functions_eagerly` would).
"""
import functools

from tfn import nest
from tfn.core.tensor import TensorBase
from tfn.gradients import recording
from tfn.gradients.tape import GradientTape, UnconnectedGradients
from tfn.state.variables import Variable


def call(function, args, kwargs, concrete=None):
    """`function(*args, **kwargs)` (or its trace `concrete` called directly) recorded on this thread's tapes."""
    if concrete is None:
        concrete = function.get_concrete_function(*args, **kwargs)
    if concrete._writebacks or concrete.graph.callbacks or concrete._initializer is not None:
        return function.python_function(*args, **kwargs)
    with recording.pause():
        result = concrete(*args, **kwargs)
    inputs = [x for x in nest.flatten((args, kwargs)) if isinstance(x, TensorBase)]
    seen = {id(x) for x in inputs}
    captured = [src for src, _, _ in concrete.graph.captures if isinstance(src, Variable) and id(src) not in seen]
    for tape in recording.tapes_here():
        for v in [x for x in inputs if isinstance(x, Variable)] + captured:
            if v.trainable and tape._watch_accessed_variables:
                tape._watch_variable(v)
    outputs = [y for y in nest.flatten(result) if isinstance(y, TensorBase) and y.dtype.is_floating]
    backward = functools.partial(_backward, function, args, kwargs, captured)
    recording.record_backward(inputs + captured, outputs, backward)
    return result


def _backward(function, args, kwargs, captured, grads):
    """The input gradients of one recorded call, from the compiled backward function."""
    bwd = function.__dict__.get("_tfn_backward")
    if bwd is None:
        bwd = function._tfn_backward = type(function)(functools.partial(_forward_backward, function),
                                                      name=f"{function._name}_grad", autograph=False)
    return bwd(args, kwargs, list(grads), captured)


def _forward_backward(function, args, kwargs, grads, captured):
    """Run `function` traced under a tape; the gradients of its outputs for the arguments and the captures."""
    sources = [x for x in nest.flatten((args, kwargs)) if isinstance(x, TensorBase)] + list(captured)
    with GradientTape() as tape:
        tape.watch([x for x in sources if x.dtype.is_floating])
        result = function._traced_function()(*args, **kwargs)
        outputs = [y.value() if isinstance(y, Variable) else y for y in nest.flatten(result)]
        outputs = [y for y in outputs if isinstance(y, TensorBase) and y.dtype.is_floating]
    return tape.gradient(outputs, sources, output_gradients=grads, unconnected_gradients=UnconnectedGradients.ZERO)
