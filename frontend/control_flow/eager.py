"""Control flow outside a trace, or on a Python condition: plain Python."""
from tfn.control_flow.values import describe, structure
from tfn.core.tensor import TensorBase


def eager_pred(pred, what):
    """A condition's Python truth; a tensor condition must be a scalar."""
    if isinstance(pred, TensorBase):
        if pred.ndim != 0:
            raise ValueError(f"{what} must be a scalar, got a tensor of shape {pred.shape}")
        return bool(pred)
    return bool(pred)


def eager_while(cond_fn, body_fn, lv, names):
    """The loop variables after running the loop in Python; each keeps its nested structure."""
    lv = tuple(lv)
    while eager_pred(cond_fn(*lv), "the loop condition"):
        out = tuple(body_fn(*lv))
        if len(out) != len(lv):
            raise ValueError(f"the loop body returned {len(out)} values for {len(lv)} loop variables")
        for n, a, b in zip(names, lv, out):
            if structure(a) != structure(b):
                raise ValueError(f"'{n}' does not have the same nested structure after one iteration.\n\n"
                                 f"before the loop: {describe(a)}\nafter one iteration: {describe(b)}")
        lv = out
    return lv
