"""The error for a symbolic tensor used outside the trace that made it (a "leaked" tensor), in TF's words."""
from tfn.dialects.locations import file_location, with_excerpt

_GUIDE = "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_return_values"


def tf_repr(t):
    """A symbolic tensor as TF names it in scope errors: `<tfn.Tensor 'add:0' shape=() dtype=int32>`."""
    return f"<tfn.Tensor '{t.name}' shape={t.shape} dtype={t.dtype.name}>"


def position(t):
    """`(file, line, col)` of the user's expression that made a symbolic tensor, or None (an argument)."""
    owner = getattr(t._mlir, "owner", None)
    if owner is None or not hasattr(owner, "location"):
        return None
    with t.graph.ctx:
        return file_location(owner.location)


def defined_at(t):
    """Where a symbolic tensor was made: the user's `File "...", line N` of its op, or its argument."""
    owner = getattr(t._mlir, "owner", None)
    if owner is None or not hasattr(owner, "location"):
        return f"    (an argument of the tfn.function '{t.graph.name}')"
    where = position(t)
    if where is None:
        return f"    (inside the tfn.function '{t.graph.name}', at an unknown line)"
    return f'    File "{where[0]}", line {where[1]}, in {t.graph.name}'


def out_of_scope(t):
    """TypeError: `t` belongs to a trace that is not the one running now (or to none, eagerly); the message ends
    with the excerpt of the user's code that made it. The error's `leaked` attribute is `t`."""
    name = tf_repr(t)
    error = TypeError(with_excerpt(
        f"{name} is out of scope and cannot be used here. Use return values, explicit Python locals or "
        f"TensorFlow collections to access it.\nPlease see {_GUIDE} for more information.\n\n"
        f"{name} was defined here:\n{defined_at(t)}\n\nThe tensor {name} cannot be accessed from here, because it "
        f"was defined in FuncGraph(name={t.graph.name}, id={id(t.graph)}), which is out of scope.", position(t)))
    error.leaked = t  # the tensor, for callers that can say more (tfn.data's map and filter functions)
    return error
