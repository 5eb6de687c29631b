"""`tfn.cond` and `tfn.while_loop`: plain Python eagerly; while tracing, an `scf.if` with both branches traced
once, or an `scf.while` with the condition and the body traced once (built by tfn.control_flow)."""
import numpy as np

from tfn import dtypes, nest
from tfn.control_flow import cond as cond_mod
from tfn.control_flow import while_loop as while_mod
from tfn.control_flow.cond import COND_LABELS, IfBuilder
from tfn.control_flow.eager import eager_pred, eager_while
from tfn.control_flow.loop_state import WHILE_LOOP_HINT, LoopVars
from tfn.control_flow.statement import Statement
from tfn.control_flow.while_loop import trace_while
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, convert_to_tensor
from tfn.gradients import cond_gradient, while_gradient
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.ops import math_ops


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if pred else `false_fn()`; traced, both branches are traced once into an scf.if."""
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, (bool, np.bool_)):
        raise TypeError("pred must not be a Python bool")
    g = graph_mod.current()
    if g is None or not isinstance(pred, SymbolicTensor):
        return true_fn() if eager_pred(pred, "pred") else false_fn()
    def build():
        builder = IfBuilder(Statement(g), ("output",), COND_LABELS, name)
        return builder.build(pred, lambda: (true_fn(),), lambda: (false_fn(),))[0]
    if _TAPES:  # differentiable: recorded with a backward cond (tfn.gradients.cond_gradient)
        return cond_gradient.traced(g, pred, true_fn, false_fn, build, cond)
    return build()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; returns loop_vars' structure.

    Traced, an scf.while with cond and body traced once. `shape_invariants` (the structure of loop_vars, with
    TensorShape/list/None leaves) relaxes a loop variable's shape so it may change across iterations."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    lv = [loop_vars] if single else list(loop_vars)
    if not lv:
        raise ValueError("loop_vars must be a non-empty list or tuple of loop variables")
    inv = None
    if shape_invariants is not None:
        inv = [shape_invariants] if single else list(shape_invariants)
    names = tuple(f"loop_vars[{i}]" for i in range(len(lv))) if not single else ("loop_vars",)
    cond_fn, body_fn = cond, _tuple_body(body, single)
    if maximum_iterations is not None:
        cond_fn, body_fn, lv, inv, names = _bounded(cond, body_fn, lv, inv, names, maximum_iterations)
    g = graph_mod.current()
    if g is None:
        result = eager_while(cond_fn, body_fn, lv, names)
    else:
        def build():
            return trace_while(LoopVars(Statement(g), names, inv, WHILE_LOOP_HINT), cond_fn, body_fn, tuple(lv), name)
        # differentiable with the loop's intermediates kept (tfn.gradients.while_gradient)
        result = while_gradient.traced(g, cond_fn, body_fn, lv, build, while_loop) if _TAPES else build()
    if maximum_iterations is not None:
        result = result[1:]
    if single:
        return result[0]
    if nest._is_namedtuple(loop_vars):
        return type(loop_vars)(*result)
    return type(loop_vars)(result)


def _tuple_body(body, single):
    """body with its result as a tuple of loop variables."""
    def body_fn(*vs):
        out = body(*vs)
        if len(vs) == 1 and (single or not isinstance(out, (list, tuple))):
            return (out,)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)
    return body_fn


def _bounded(cond, body_fn, lv, inv, names, maximum_iterations):
    """cond/body/loop vars with a leading iteration counter that stops the loop at maximum_iterations."""
    limit = convert_to_tensor(maximum_iterations)
    if limit.dtype not in (dtypes.int32, dtypes.int64) or limit.ndim:
        raise TypeError(f"maximum_iterations must be a scalar int32 or int64, got {maximum_iterations!r}")

    def bounded_cond(n, *vs):
        return math_ops.logical_and(math_ops.less(n, limit), cond(*vs))

    def bounded_body(n, *vs):
        return (math_ops.add(n, convert_to_tensor(1, limit.dtype)),) + body_fn(*vs)

    counter = convert_to_tensor(0, limit.dtype)
    return (bounded_cond, bounded_body, [counter] + lv, None if inv is None else [None] + inv,
            ("maximum_iterations counter",) + names)


def build_if(pred, true_fn, false_fn, names, where=None):
    """AutoGraph's tensor `if` (tfn.control_flow.cond.build_if), differentiable as tfn.cond is under a tape."""
    g = graph_mod.current()
    if not _TAPES or g is None or not isinstance(pred, SymbolicTensor):
        return cond_mod.build_if(pred, true_fn, false_fn, names, where)
    return cond_gradient.traced(g, pred, true_fn, false_fn,
                                lambda: cond_mod.build_if(pred, true_fn, false_fn, names, where), cond)


def build_while(cond_fn, body_fn, loop_vars, names, where=None, shape_invariants=None):
    """AutoGraph's tensor loop (tfn.control_flow.while_loop.build_while), differentiable as tfn.while_loop is."""
    g = graph_mod.current()
    if not _TAPES or g is None:
        return while_mod.build_while(cond_fn, body_fn, loop_vars, names, where, shape_invariants)
    return while_gradient.traced(g, cond_fn, body_fn, loop_vars,
                                 lambda: while_mod.build_while(cond_fn, body_fn, loop_vars, names, where,
                                                               shape_invariants), while_loop)
