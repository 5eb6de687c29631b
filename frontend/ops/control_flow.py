"""`tfn.cond` and `tfn.while_loop`: plain Python eagerly; while tracing, an `scf.if` with both branches traced
once, or an `scf.while` with the condition and the body traced once.

Effect state (`graph.state`, e.g. variables' current values) that a branch or the loop changes is carried as
extra results / iter_args, and `graph.state` then holds the op's results: writes inside control flow are
functional. AutoGraph builds on `build_if` / `build_while`, whose errors name the variable and the user's line.

Composite loop values (TensorArray) take part through two methods: `_tfn_components()` -> list of tensors and
`_tfn_rebuild(tensors)` -> a new value of the same kind; `_tfn_invariants()` gives, per component, the shape
(None dims allowed) the component keeps across iterations (None: its initial shape).
"""
import numpy as np
from mlir import ir
from mlir.dialects import scf
from mlir.dialects import tensor as tensor_d

from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core import leaks
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.types import TensorType
from tfn.gradients import cond_gradient, while_gradient
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import record_opaque
from tfn.ops.pending import Pending, ZerosOf, fill_one_side, zeros

_SCALARS = (bool, int, float, complex, np.generic, np.ndarray)


# ---------------------------------------------------------------------------------------------------------
# public functional forms

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
        return true_fn() if _eager_pred(pred, "pred") else false_fn()
    labels = ("true_fn", "false_fn", "tfn.cond")

    def build():
        return _build_if(g, pred, lambda: (true_fn(),), lambda: (false_fn(),), ("output",), None, labels, name)[0]
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

    def body_fn(*vs):
        out = body(*vs)
        if len(vs) == 1 and (single or not isinstance(out, (list, tuple))):
            return (out,)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    cond_fn = cond
    if maximum_iterations is not None:
        cond_fn, body_fn, lv, inv, names = _bounded(cond, body_fn, lv, inv, names, maximum_iterations)
    g = graph_mod.current()
    if g is None:
        result = _eager_while(cond_fn, body_fn, lv, names)
    else:
        def build():
            return _build_while(g, cond_fn, body_fn, tuple(lv), names, None, inv, _WHILE_LOOP_HINT, name)
        # differentiable with the loop's intermediates kept (tfn.gradients.while_gradient)
        result = while_gradient.traced(g, cond_fn, body_fn, lv, build, while_loop) if _TAPES else build()
    if maximum_iterations is not None:
        result = result[1:]
    if single:
        return result[0]
    if nest._is_namedtuple(loop_vars):
        return type(loop_vars)(*result)
    return type(loop_vars)(result)


def _bounded(cond, body_fn, lv, inv, names, maximum_iterations):
    """cond/body/loop vars with a leading iteration counter that stops the loop at maximum_iterations."""
    from tfn.ops import math_ops
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


# ---------------------------------------------------------------------------------------------------------
# AutoGraph's builders

def build_if(pred, true_fn, false_fn, names, where=None):
    """The values of `true_fn()` or `false_fn()` (each a tuple of len(names)); traced: one scf.if.

    names[i] names output i in error messages; where = (filename, lineno) of the user's `if`."""
    g = graph_mod.current()
    if g is None or not isinstance(pred, SymbolicTensor):
        return tuple(true_fn() if _eager_pred(pred, "the if condition") else false_fn())
    labels = ("main branch", "else branch", "if statement")

    def build():
        return _build_if(g, pred, true_fn, false_fn, tuple(names), where, labels, None)
    if _TAPES:  # differentiable as tfn.cond is
        return cond_gradient.traced(g, pred, true_fn, false_fn, build, cond)
    return build()


def build_while(cond_fn, body_fn, loop_vars, names, where=None, shape_invariants=None):
    """The loop variables after `while cond_fn(*vars): vars = body_fn(*vars)`; traced: one scf.while.

    loop_vars: tuple of values (nested structures allowed); body_fn returns a tuple of the same length.
    shape_invariants: None, a sequence parallel to loop_vars (None or a shape per var) or {name: shape}."""
    g = graph_mod.current()
    if g is None:
        return _eager_while(cond_fn, body_fn, list(loop_vars), names)
    if isinstance(shape_invariants, dict):
        shape_invariants = [shape_invariants.get(n) for n in names]

    def build():
        return _build_while(g, cond_fn, body_fn, tuple(loop_vars), tuple(names), where, shape_invariants,
                            _AUTOGRAPH_HINT, None)
    return while_gradient.traced(g, cond_fn, body_fn, loop_vars, build, while_loop) if _TAPES else build()


_WHILE_LOOP_HINT = ("To allow the shape to vary across iterations, use the `shape_invariants` argument of "
                    "tfn.while_loop to specify a less-specific shape.")
_AUTOGRAPH_HINT = ("To allow the shape to vary across iterations, use "
                   "tfn.autograph.experimental.set_loop_options(shape_invariants=...) to specify a less-specific "
                   "shape.")


# ---------------------------------------------------------------------------------------------------------
# eager forms

def _eager_pred(pred, what):
    if isinstance(pred, TensorBase):
        if pred.ndim != 0:
            raise ValueError(f"{what} must be a scalar, got a tensor of shape {pred.shape}")
        return bool(pred)
    return bool(pred)


def _eager_while(cond_fn, body_fn, lv, names):
    lv = tuple(lv)
    while _eager_pred(cond_fn(*lv), "the loop condition"):
        out = tuple(body_fn(*lv))
        if len(out) != len(lv):
            raise ValueError(f"the loop body returned {len(out)} values for {len(lv)} loop variables")
        for n, a, b in zip(names, lv, out):
            if _structure(a) != _structure(b):
                raise ValueError(f"'{n}' does not have the same nested structure after one iteration.\n\n"
                                 f"before the loop: {_describe(a)}\nafter one iteration: {_describe(b)}")
        lv = out
    return lv


# ---------------------------------------------------------------------------------------------------------
# flattening loop values into tensors

def _is_composite(x):
    return hasattr(x, "_tfn_components")


def _leaves(value):
    """The nest leaves of value with composites as leaves."""
    return nest.flatten(value)


def _structure(value):
    """A description of value's nesting, composites included, that two compatible values share."""
    leaves = nest.flatten(value)
    kinds = tuple(x._tfn_structure() if _is_composite(x) else "." for x in leaves)
    return (nest.structure_key(value), kinds)


def _describe(value):
    return repr(value)


def _is_tensor_like(x):
    return isinstance(x, (TensorBase, ZerosOf)) or isinstance(x, _SCALARS)


class _Flat:
    """One value (a nested structure) as a list of tensor slots plus its fixed Python leaves."""

    def __init__(self, value):
        self.value = value
        self.leaves = nest.flatten(value)
        self.slots = []  # per tensor slot: (leaf index, component index or None)
        self.tensors = []
        for i, leaf in enumerate(self.leaves):
            if _is_composite(leaf):
                for j, c in enumerate(leaf._tfn_components()):
                    self.slots.append((i, j))
                    self.tensors.append(c)
            elif _is_tensor_like(leaf):
                self.slots.append((i, None))
                self.tensors.append(leaf)

    def rebuild(self, tensors):
        leaves = list(self.leaves)
        comps = {}
        for (i, j), t in zip(self.slots, tensors):
            if j is None:
                leaves[i] = t
            else:
                comps.setdefault(i, []).append(t)
        for i, ts in comps.items():
            leaves[i] = self.leaves[i]._tfn_rebuild(ts)
        for i, leaf in enumerate(self.leaves):  # a composite with no tensors yet
            if _is_composite(leaf) and i not in comps:
                leaves[i] = leaf._tfn_rebuild([])
        return nest.pack_sequence_as(self.value, leaves)


def _to_symbolic(g, x, dtype_hint=None):
    """A symbolic tensor at the current insertion point for a tensor or Python value."""
    if isinstance(x, SymbolicTensor):
        if x._graph is not g:
            raise leaks.out_of_scope(x)
        return x
    if not isinstance(x, TensorBase):
        x = _convert(x, dtype_hint)
    return g.constant(x)


def _convert(x, dtype_hint):
    if dtype_hint is not None:
        try:
            return convert_to_tensor(x, dtype_hint)
        except (TypeError, ValueError):
            pass
    return convert_to_tensor(x)


def _ttype(t):
    return TensorType(t._shape, t._dtype)


def _shape_str(shape):
    return str(TensorShape(shape))


def _where(g, where):
    """(filename, lineno) of the user's statement."""
    if where is not None:
        return where
    f = graph_mod.user_frame()
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


def _fail(cls, g, where, message):
    suffix = f"\n  in tfn.function '{g.name}' at {where[0]}:{where[1]}" if where else ""
    return cls(message + suffix)


def _location(where):
    if where is None:
        return ir.Location.unknown()
    return ir.Location.file(where[0], where[1], 1)


def _extract_pred(g, pred, what, where):
    """The i1 of a scalar bool symbolic tensor, at the current insertion point."""
    if pred.dtype is not dtypes.bool:
        raise _fail(TypeError, g, where, f"{what} must be a bool tensor, got dtype {pred.dtype.name}: {pred!r}")
    if pred.ndim != 0:
        raise _fail(ValueError, g, where, f"{what} must be a scalar, got a tensor of shape {pred.shape}")
    _to_symbolic(g, pred)
    g.check_accessible([pred])
    return tensor_d.extract(pred._mlir, [], loc=_location(where), ip=g.ip)


def _relax(g, t, ttype, where):
    """t with the (less specific) type ttype, via tensor.cast when they differ."""
    if _ttype(t) == ttype:
        return t
    v = tensor_d.CastOp(ttype.to_mlir(), t._mlir, loc=_location(where), ip=g.ip).result
    return g.wrap(v, ttype, f"{g.unique_name('cast')}:0")


def _join(a, b):
    """The most specific shape both shapes fit (same rank), or None if the ranks differ."""
    if len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _fits(shape, invariant):
    """shape is at least as specific as invariant (same rank, equal where invariant is known)."""
    return len(shape) == len(invariant) and all(i is None or s == i for s, i in zip(shape, invariant))


def _move_ops(src, dst):
    for op in list(src.operations):
        dst.append(op)


def _state_name(key):
    name = getattr(key, "name", None)
    return name if isinstance(name, str) else repr(key)


def _new_state(g, snapshot, state, where, what, before):
    """{key: value at the start of the call} for state keys that `state` has and `snapshot` lacks (a variable
    first used inside a region); such values are made before the op `before`."""
    new = {}
    for key in state:
        if key in snapshot:
            continue
        if not hasattr(key, "_initial_state"):
            raise _fail(ValueError, g, where,
                        f"the state '{_state_name(key)}' was created inside {what}; create it before the "
                        "control flow so that every branch and iteration can use it")
        saved, g.ip = g.ip, ir.InsertionPoint(before)
        try:
            new[key] = key._initial_state(g)
        finally:
            g.ip = saved
    return new


# ---------------------------------------------------------------------------------------------------------
# scf.if

def _build_if(g, pred, true_fn, false_fn, names, where, labels, name):
    where = _where(g, where)
    loc = _location(where)
    cond = _extract_pred(g, pred, "the condition of the " + labels[2], where)
    snapshot = dict(g.state)
    tmp = scf.IfOp(cond, [], has_else=True, loc=loc, ip=g.ip)
    scopes = [graph_mod.Scope(f"the {labels[0]} of a {labels[2]}"), graph_mod.Scope(f"the {labels[1]} of a "
                                                                                       f"{labels[2]}")]
    try:
        outs, states = [], []
        for side, (block, fn, scope) in enumerate(zip((tmp.then_block, tmp.else_block), (true_fn, false_fn),
                                                      scopes)):
            g.state = dict(snapshot)
            with g.inside(block, scope):
                out = fn()
            out = _as_outputs(g, out, names, labels[side], where)
            outs.append(out)
            states.append(g.state)
            g.state = snapshot
            snapshot.update(_new_state(g, snapshot, states[-1], where, scope.what, tmp.operation))
        g.state = snapshot
        return _finish_if(g, cond, tmp, scopes, outs, states, snapshot, names, where, labels, name)
    except BaseException:
        g.state = snapshot
        _erase(g, tmp.operation)
        raise


def _as_outputs(g, out, names, label, where):
    if out is None and not names:
        return ()
    if not isinstance(out, (list, tuple)) or len(out) != len(names):
        raise _fail(ValueError, g, where, f"the {label} returned {out!r}; expected a tuple of {len(names)} "
                                          f"values ({', '.join(names)})")
    return tuple(out)


def _fill_pending(g, outs, names, where, labels):
    """Outputs where a Pending left by one branch takes the other branch's structure (zeros when lenient)."""
    outs = [list(o) for o in outs]
    for i, n in enumerate(names):
        for side in (0, 1):
            mine, other = outs[side][i], outs[1 - side][i]
            if not isinstance(mine, Pending) or isinstance(other, Pending):
                continue
            if not mine.lenient:
                raise _fail(ValueError, g, where, f"'{n}' must also be initialized in the {labels[side]} of the "
                                                  f"{labels[2]}: it is assigned in the {labels[1 - side]} and "
                                                  "used later, and a tensor condition makes both branches part "
                                                  "of the graph")
            outs[side][i] = fill_one_side(mine, other)
    return outs


def _finish_if(g, cond, tmp, scopes, outs, states, snapshot, names, where, labels, name):
    outs = _fill_pending(g, outs, names, where, labels)
    flats = [[_Flat(v) for v in out] for out in outs]
    for n, a, b in zip(names, flats[0], flats[1]):
        if _structure(a.value) != _structure(b.value) or len(a.tensors) != len(b.tensors):
            raise _fail(ValueError, g, where,
                        f"'{n}' must have the same nested structure in the {labels[0]} and {labels[1]}:\n\n"
                        f"{labels[0]}: {_describe(a.value)}\n{labels[1]}: {_describe(b.value)}")
        for la, lb in zip(a.leaves, b.leaves):
            if not _is_tensor_like(la) and not _is_composite(la) and not _same_object(la, lb):
                raise _fail(TypeError, g, where,
                            f"'{n}' is the Python value {la!r} in the {labels[0]} but {lb!r} in the {labels[1]}; "
                            "only tensors can differ between the branches of a " + labels[2])
    for st in states:
        for k, v in snapshot.items():
            st.setdefault(k, v)
    changed = [k for k in snapshot if states[0][k] is not snapshot[k] or states[1][k] is not snapshot[k]]
    pairs = []  # (name, true value, false value) of every result
    for n, a, b in zip(names, flats[0], flats[1]):
        pairs += [(n, x, y) for x, y in zip(a.tensors, b.tensors)]
    pairs += [(_state_name(k), states[0][k], states[1][k]) for k in changed]
    types = [_join_branch_types(g, n, x, y, where, labels) for n, x, y in pairs]
    yields = [[], []]
    for side, (block, scope) in enumerate(zip((tmp.then_block, tmp.else_block), scopes)):
        with g.inside(block, scope):
            for (_, x, y), tt in zip(pairs, types):
                v = (x, y)[side]
                v = _to_symbolic(g, zeros(tt) if isinstance(v, ZerosOf) else v, tt.dtype)
                yields[side].append(_relax(g, v, tt, where)._mlir)
    final = scf.IfOp(cond, [t.to_mlir() for t in types], has_else=True, loc=_location(where),
                     ip=ir.InsertionPoint(tmp))
    for src, dst, ys in zip((tmp.then_block, tmp.else_block), (final.then_block, final.else_block), yields):
        _move_ops(src, dst)
        scf.YieldOp(ys, ip=ir.InsertionPoint(dst), loc=_location(where))
    _erase(g, tmp.operation)
    base = g.unique_name(name or "cond")
    results = [g.wrap(r, t, f"{base}:{i}") for i, (r, t) in enumerate(zip(final.results, types))]
    if _TAPES:  # no gradient through scf.if yet: a tape that sees a watched value flow in refuses to differentiate
        what = "tfn.cond" if labels[2] == "tfn.cond" else "a tensor `if` statement"
        record_opaque(what, [v for _, x, y in pairs for v in (x, y)], results, where)
    n_out = len(results) - len(changed)
    for k, r in zip(changed, results[n_out:]):
        g.state[k] = r
    it = iter(results[:n_out])
    return tuple(f.rebuild([next(it) for _ in f.tensors]) for f in flats[0])


def _same_object(a, b):
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # an object whose == is not a plain bool
        return False


def _join_branch_types(g, n, x, y, where, labels):
    """The result type of one scf.if result from its two branch values (Python scalars take the other's dtype)."""
    if isinstance(x, ZerosOf) or isinstance(y, ZerosOf):
        v = y if isinstance(x, ZerosOf) else x
        return _ttype(v if isinstance(v, TensorBase) else _convert(v, None))
    tx = x.dtype if isinstance(x, TensorBase) else None
    ty = y.dtype if isinstance(y, TensorBase) else None
    x = x if isinstance(x, TensorBase) else _convert(x, ty)
    y = y if isinstance(y, TensorBase) else _convert(y, tx)
    if x.dtype is not y.dtype:
        raise _fail(TypeError, g, where, f"'{n}' has dtype {x.dtype.name} in the {labels[0]}, but dtype "
                                         f"{y.dtype.name} in the {labels[1]}")
    shape = _join(x._shape, y._shape)
    if shape is None:
        raise _fail(ValueError, g, where,
                    f"'{n}' has shape {_shape_str(x._shape)} in the {labels[0]}, but shape {_shape_str(y._shape)} "
                    f"in the {labels[1]}; the rank must be the same in both branches")
    return TensorType(shape, x.dtype)


# ---------------------------------------------------------------------------------------------------------
# scf.while

def _build_while(g, cond_fn, body_fn, loop_vars, names, where, shape_invariants, hint, name):
    where = _where(g, where)
    for _ in range(4):  # traced again when the body gives a TensorArray its buffer or first writes a variable
        attempt = _trace_while(g, cond_fn, body_fn, [_Flat(v) for v in loop_vars], names, where,
                               shape_invariants, hint, name)
        if attempt is not None:
            return attempt
    raise _fail(ValueError, g, where, "the loop's TensorArrays and variables did not settle after 4 traces")


def _init_types(g, flats, names, shape_invariants, where):
    """The symbolic initial tensors (before the loop) and the type each keeps across iterations."""
    inits, types = [], []
    for k, (n, f) in enumerate(zip(names, flats)):
        inv = None if shape_invariants is None else shape_invariants[k]
        comp_inv = _component_invariants(f)
        if inv is not None and len(f.tensors) != 1:
            raise _fail(ValueError, g, where, f"the shape invariant of '{n}' must be a single shape; "
                                              f"'{n}' holds {len(f.tensors)} tensors")
        for j, t in enumerate(f.tensors):
            t = _to_symbolic(g, t)
            shape = _invariant_shape(g, n, t, inv if inv is not None else comp_inv[j], where)
            inits.append(t)
            types.append(TensorType(shape, t.dtype))
    return inits, types


def _component_invariants(f):
    out = []
    for i, j in f.slots:
        leaf = f.leaves[i]
        out.append(leaf._tfn_invariants()[j] if j is not None else None)
    return out


def _invariant_shape(g, n, t, inv, where):
    if inv is None:
        return t._shape
    if hasattr(inv, "shape") and not isinstance(inv, (list, tuple, TensorShape)):
        inv = inv.shape  # a TensorSpec
    inv = TensorShape(inv)
    if inv.rank is None:
        raise _fail(ValueError, g, where, f"the shape invariant of '{n}' has unknown rank; tfn needs the rank")
    shape = tuple(inv)
    if not _fits(t._shape, shape):
        raise _fail(ValueError, g, where, f"the shape invariant {_shape_str(shape)} of '{n}' is not compatible "
                                          f"with its shape {_shape_str(t._shape)} before the loop")
    return shape


def _trace_while(g, cond_fn, body_fn, flats, names, where, shape_invariants, hint, name):
    loc = _location(where)
    inits, types = _init_types(g, flats, names, shape_invariants, where)
    inits = [_relax(g, t, tt, where) for t, tt in zip(inits, types)]
    snapshot = dict(g.state)
    keys = list(snapshot)
    state_inits = [_to_symbolic(g, snapshot[k]) for k in keys]
    all_types = types + [_ttype(t) for t in state_inits]
    mtypes = [t.to_mlir() for t in all_types]
    tmp = scf.WhileOp(mtypes, [t._mlir for t in inits + state_inits], loc=loc, ip=g.ip)
    before = tmp.before.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
    after = tmp.after.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
    scopes = (graph_mod.Scope("the condition of a while loop"), graph_mod.Scope("the body of a while loop"))
    try:
        traced = _trace_regions(g, cond_fn, body_fn, flats, names, where, hint, (before, after), scopes,
                                all_types, keys, snapshot)
        if traced[0] == "learn":  # TensorArrays got their first element shape: give them buffers, retrace
            g.state = snapshot
            _erase(g, tmp.operation)
            _erase_unused(inits, flats)
            for leaf, new in traced[1]:
                leaf._tfn_learn(new)
            return None
        g.state = snapshot
        if _first_used_state(g, snapshot, traced[-1], where, tmp.operation):
            _erase(g, tmp.operation)  # a variable first written in the loop: carry it from the start
            _erase_unused(inits, flats)
            return None
        return _finish_while(g, tmp, flats, traced, inits + state_inits, all_types, keys, where, name)
    except BaseException:
        g.state = snapshot
        _erase(g, tmp.operation)
        raise


def _erase_unused(inits, flats):
    """Erase the constants and casts an abandoned trace of a loop made for its initial values."""
    given = {id(t) for f in flats for t in f.tensors}
    for t in inits:
        owner = t._mlir.owner
        if id(t) in given or not isinstance(owner, ir.Operation) and not hasattr(owner, "operation"):
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name in ("tfn.constant", "tensor.cast") and next(iter(t._mlir.uses), None) is None:
            _erase(t._graph, op)


def _erase(g, op):
    """Erase op with its regions, first dropping them from the graph's op names (an erased op is unhashable)."""
    names = getattr(g, "op_names", None)
    if names:
        doomed = []
        op.walk(lambda o: doomed.append(o) or ir.WalkResult.ADVANCE)
        for o in doomed:
            names.pop(getattr(o, "operation", o), None)
    op.erase()


def _block_vars(g, block, flats, all_types, keys, prefix):
    """Symbolic tensors of a loop region's block arguments: the loop variables and the state."""
    args = [g.wrap(a, t, f"{prefix}:{i}") for i, (a, t) in enumerate(zip(block.arguments, all_types))]
    n = len(args) - len(keys)
    it = iter(args[:n])
    values = [f.rebuild([next(it) for _ in f.tensors]) for f in flats]
    return args, values, dict(zip(keys, args[n:]))


def _trace_regions(g, cond_fn, body_fn, flats, names, where, hint, blocks, scopes, all_types, keys, snapshot):
    """Trace cond and body; returns (cond i1, cond's state values, body values) or None to retrace."""
    before, after = blocks
    base = g.unique_name("while")
    with g.inside(before, scopes[0]):
        _, values, state = _block_vars(g, before, flats, all_types, keys, base + "/cond")
        g.state = dict(state)
        c = cond_fn(*values)
        if not isinstance(c, SymbolicTensor):
            c = _to_symbolic(g, c if isinstance(c, TensorBase) else convert_to_tensor(c))
        c_i1 = _extract_pred(g, c, "the loop condition", where)
        cond_state = [g.state[k] for k in keys]
        cond_all = g.state
    with g.inside(after, scopes[1]):
        args, values, state = _block_vars(g, after, flats, all_types, keys, base + "/body")
        g.state = dict(state)
        out = body_fn(*values)
        body_all = g.state
        out = _check_body(g, out, flats, names, where)
        learned = _learned_buffers(flats, out)
        if learned:
            return "learn", learned
        tensors = _body_tensors(g, out, flats, names, all_types, where, hint)
        tensors += [_state_value(g, _state_name(k), g.state[k], all_types[len(tensors) + i], where, hint)
                    for i, k in enumerate(keys)]
    return "done", c_i1, cond_state, tensors, (scopes, cond_all, body_all)


def _first_used_state(g, snapshot, regions, where, before):
    """Put state keys first used in the loop into g.state; True if one was written there (trace again)."""
    scopes, *states = regions
    retrace = False
    for scope, state in zip(scopes, states):
        for key, init in _new_state(g, snapshot, state, where, scope.what, before).items():
            g.state[key] = init
            retrace |= state[key] is not init
    return retrace


def _check_body(g, out, flats, names, where):
    if not isinstance(out, (list, tuple)) or len(out) != len(flats):
        raise _fail(ValueError, g, where, f"the loop body returned {out!r}; expected a tuple of {len(flats)} "
                                          f"values ({', '.join(names)})")
    for n, f, v in zip(names, flats, out):
        if isinstance(f.value, Pending) and (f.value.learned is None or v is f.value):
            continue  # its type is learned from v (see _learned_buffers)
        if isinstance(f.value, Pending):
            if nest.structure_key(f.value.learned[0]) == nest.structure_key(v):
                continue
            raise _fail(ValueError, g, where, f"'{n}' does not have the same nested structure after one "
                                              f"iteration as in the first traced iteration: {_describe(v)}")
        if _structure(f.value) != _structure(v):
            raise _fail(ValueError, g, where, f"'{n}' does not have the same nested structure after one "
                                              f"iteration.\n\nbefore the loop: {_describe(f.value)}\n"
                                              f"after one iteration: {_describe(v)}")
    return tuple(out)


def _learned_buffers(flats, out):
    """(initial, after one iteration) of each composite that gained tensors in the body (a first write)."""
    learned = []
    for f, v in zip(flats, out):
        if isinstance(f.value, Pending):
            if f.value.learned is None and v is not f.value:
                learned.append((f.value, v))
            continue
        for leaf, new in zip(f.leaves, nest.flatten(v)):
            if _is_composite(leaf) and len(leaf._tfn_components()) < len(new._tfn_components()):
                learned.append((leaf, new))
    return learned


def _body_tensors(g, out, flats, names, all_types, where, hint):
    """The body's new loop tensors, each checked against and cast to its carried type."""
    result, k = [], 0
    for n, f, v in zip(names, flats, out):
        new = _Flat(v)
        if len(new.tensors) != len(f.tensors):
            raise _fail(ValueError, g, where, f"'{n}' does not have the same nested structure after one "
                                              "iteration.")
        for a, b in zip(f.leaves, new.leaves):
            if not _is_tensor_like(a) and not _is_composite(a) and not _same_object(a, b):
                raise _fail(TypeError, g, where, f"'{n}' is the Python value {a!r} before the loop but {b!r} "
                                                 "after one iteration; only tensors can change in a loop")
        for t in new.tensors:
            result.append(_state_value(g, n, t, all_types[k], where, hint))
            k += 1
    return result


def _state_value(g, n, t, tt, where, hint):
    """t (a body value of loop variable n) as a symbolic tensor of the carried type tt."""
    t = _to_symbolic(g, t if isinstance(t, TensorBase) else _convert(t, tt.dtype), tt.dtype)
    if t.dtype is not tt.dtype:
        raise _fail(TypeError, g, where, f"'{n}' has dtype {tt.dtype.name} before the loop, but dtype "
                                         f"{t.dtype.name} after one iteration")
    if not _fits(t._shape, tt.shape):
        raise _fail(ValueError, g, where, f"'{n}' has shape {_shape_str(tt.shape)} before the loop, but shape "
                                          f"{_shape_str(t._shape)} after one iteration. {hint}")
    return _relax(g, t, tt, where)


def _finish_while(g, tmp, flats, traced, inits, all_types, keys, where, name):
    """Build the final scf.while carrying the loop tensors and only the state keys the loop changes."""
    _, c_i1, cond_state, body, _ = traced
    before, after = tmp.before.blocks[0], tmp.after.blocks[0]
    n = len(all_types) - len(keys)
    keep = list(range(n)) + [n + i for i in range(len(keys))
                             if cond_state[i]._mlir != before.arguments[n + i]
                             or body[n + i]._mlir != after.arguments[n + i]]
    kept_types = [all_types[i] for i in keep]
    mtypes = [t.to_mlir() for t in kept_types]
    loc = _location(where)
    final = scf.WhileOp(mtypes, [inits[i]._mlir for i in keep], loc=loc, ip=ir.InsertionPoint(tmp))
    new_before = final.before.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
    new_after = final.after.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
    cond_fwd = list(before.arguments)[:n] + [cond_state[i - n]._mlir for i in keep[n:]]
    yields = [body[i]._mlir for i in keep]
    for old_block, new_block in ((before, new_before), (after, new_after)):
        for i, arg in enumerate(old_block.arguments):
            arg.replace_all_uses_with(new_block.arguments[keep.index(i)] if i in keep else inits[i]._mlir)
    cond_fwd = [_remap(v, (before, new_before), (after, new_after), keep, inits) for v in cond_fwd]
    yields = [_remap(v, (before, new_before), (after, new_after), keep, inits) for v in yields]
    c = _remap(c_i1, (before, new_before), (after, new_after), keep, inits)
    _move_ops(before, new_before)
    _move_ops(after, new_after)
    scf.ConditionOp(c, cond_fwd, loc=loc, ip=ir.InsertionPoint(new_before))
    scf.YieldOp(yields, loc=loc, ip=ir.InsertionPoint(new_after))
    _erase(g, tmp.operation)
    base = g.unique_name(name or "while")
    results = [g.wrap(r, t, f"{base}:{i}") for i, (r, t) in enumerate(zip(final.results, kept_types))]
    if _TAPES:  # no gradient through scf.while yet (see _finish_if)
        values = [t for f in flats for t in f.tensors] + list(inits) + list(body) + list(cond_state)
        record_opaque("a tensor-dependent loop (tfn.while_loop, or a `while`/`for` over tensors)", values, results,
                      where)
    for i, r in zip(keep[n:], results[n:]):
        g.state[keys[i - n]] = r
    it = iter(results[:n])
    return tuple(f.rebuild([next(it) for _ in f.tensors]) for f in flats)


def _remap(v, *pairs_and_rest):
    """A value recorded before the regions' block arguments were replaced, mapped to its replacement."""
    *pairs, keep, inits = pairs_and_rest
    try:
        arg = ir.BlockArgument(v)
    except ValueError:  # not a block argument
        return v
    for old, new in pairs:
        if arg.owner == old:
            i = arg.arg_number
            return new.arguments[keep.index(i)] if i in keep else inits[i]._mlir
    return v
