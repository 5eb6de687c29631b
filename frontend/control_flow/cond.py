"""An `if` on a symbolic tensor as one scf.if: both branches are traced once into a temporary scf.if, then
their values are joined (dtype equal, shapes to the most specific both fit) into the final op's results."""
from typing import NamedTuple

from mlir import ir

from tfn.control_flow.eager import eager_pred
from tfn.control_flow.pending import Pending, ZerosOf, fill_one_side, zeros
from tfn.control_flow.statement import (
    Statement,
    convert,
    erase,
    move_ops,
    shape_str,
    state_name,
    tensor_type,
    to_symbolic,
)
from tfn.control_flow.values import Flat, describe, is_composite, is_tensor_like, rebuild_all, same_object, structure
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, TensorBase
from tfn.dialects.types import TensorType
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import record_opaque


class Labels(NamedTuple):
    """How error messages name the two branches and the statement."""

    then: str
    orelse: str
    statement: str


COND_LABELS = Labels("true_fn", "false_fn", "tfn.cond")
IF_LABELS = Labels("main branch", "else branch", "if statement")


def build_if(pred, true_fn, false_fn, names, where=None):
    """The values of `true_fn()` or `false_fn()` (each a tuple of len(names)); traced: one scf.if.

    names[i] names output i in error messages; where = (filename, lineno, col) of the user's `if`."""
    g = graph_mod.current()
    if g is None or not isinstance(pred, SymbolicTensor):
        return tuple(true_fn() if eager_pred(pred, "the if condition") else false_fn())
    return IfBuilder(Statement(g, where), tuple(names), IF_LABELS).build(pred, true_fn, false_fn)


def join_shapes(a, b):
    """The most specific shape both shapes fit (same rank), or None if the ranks differ."""
    if len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


class IfBuilder:
    """One scf.if being traced: the statement, the names of its outputs, the labels of its branches, and what
    each branch traced (its outputs and the graph state it left)."""

    def __init__(self, st, names, labels, name=None):
        self.st, self.names, self.labels, self.name = st, names, labels, name
        self.snapshot = None  # the graph state before the if (variables first used in a branch are added)
        self.tmp = None  # the scf.if, without results, that the branches are traced into
        self.scopes = [graph_mod.Scope(f"the {labels[0]} of a {labels[2]}"),
                       graph_mod.Scope(f"the {labels[1]} of a {labels[2]}")]
        self.outs, self.states = [], []  # per branch: its output tuple, and the graph state it left

    def build(self, pred, true_fn, false_fn):
        """The op's outputs, as the branches' structures, with the changed graph state carried out."""
        # start-up cost: MLIR's Python module of scf loads with the first tensor `if`/`while`
        from mlir.dialects import scf

        g = self.st.g
        cond = self.st.extract_pred(pred, "the condition of the " + self.labels[2])
        self.snapshot = dict(g.state)
        self.tmp = scf.IfOp(cond, [], has_else=True, loc=self.st.location(), ip=g.ip)
        try:
            for side, fn in enumerate((true_fn, false_fn)):
                self._trace_branch(side, fn)
            g.state = self.snapshot
            return self._finish(cond)
        except BaseException:
            g.state = self.snapshot
            erase(g, self.tmp.operation)
            raise

    def _blocks(self):
        return self.tmp.then_block, self.tmp.else_block

    def _trace_branch(self, side, fn):
        g, snapshot, scope = self.st.g, self.snapshot, self.scopes[side]
        g.state = dict(snapshot)
        with g.inside(self._blocks()[side], scope):
            out = fn()
        self.outs.append(self._as_outputs(out, self.labels[side]))
        self.states.append(g.state)
        g.state = snapshot
        snapshot.update(self.st.new_state(snapshot, self.states[-1], scope.what, self.tmp.operation))

    def _as_outputs(self, out, label):
        names = self.names
        if out is None and not names:
            return ()
        if not isinstance(out, (list, tuple)) or len(out) != len(names):
            raise self.st.fail(ValueError, f"the {label} returned {out!r}; expected a tuple of {len(names)} "
                                           f"values ({', '.join(names)})")
        return tuple(out)

    def _finish(self, cond):
        """Replace the temporary scf.if by one yielding the joined outputs and the changed state."""
        flats = [[Flat(v) for v in out] for out in self._fill_pending()]
        self._check_same_structure(flats)
        changed = self._changed_state()
        pairs = []  # (name, true value, false value) of every result
        for n, a, b in zip(self.names, flats[0], flats[1]):
            pairs += [(n, x, y) for x, y in zip(a.tensors, b.tensors)]
        pairs += [(state_name(k), self.states[0][k], self.states[1][k]) for k in changed]
        types = [self._join_types(n, x, y) for n, x, y in pairs]
        results = self._replace_op(cond, pairs, types)
        n_out = len(results) - len(changed)
        for k, r in zip(changed, results[n_out:]):
            self.st.g.state[k] = r
        return rebuild_all(flats[0], results[:n_out])

    def _fill_pending(self):
        """Outputs where a Pending left by one branch takes the other branch's structure (zeros if lenient)."""
        outs, labels = [list(o) for o in self.outs], self.labels
        for i, n in enumerate(self.names):
            for side in (0, 1):
                mine, other = outs[side][i], outs[1 - side][i]
                if not isinstance(mine, Pending) or isinstance(other, Pending):
                    continue
                if not mine.lenient:
                    raise self.st.fail(ValueError, f"'{n}' must also be initialized in the {labels[side]} of the "
                                                   f"{labels[2]}: it is assigned in the {labels[1 - side]} and "
                                                   "used later, and a tensor condition makes both branches part "
                                                   "of the graph")
                outs[side][i] = fill_one_side(mine, other)
        return outs

    def _check_same_structure(self, flats):
        labels = self.labels
        for n, a, b in zip(self.names, flats[0], flats[1]):
            if structure(a.value) != structure(b.value) or len(a.tensors) != len(b.tensors):
                raise self.st.fail(ValueError,
                                   f"'{n}' must have the same nested structure in the {labels[0]} and {labels[1]}:"
                                   f"\n\n{labels[0]}: {describe(a.value)}\n{labels[1]}: {describe(b.value)}")
            for la, lb in zip(a.leaves, b.leaves):
                if not is_tensor_like(la) and not is_composite(la) and not same_object(la, lb):
                    raise self.st.fail(TypeError,
                                       f"'{n}' is the Python value {la!r} in the {labels[0]} but {lb!r} in the "
                                       f"{labels[1]}; only tensors can differ between the branches of a {labels[2]}")

    def _changed_state(self):
        """The state keys either branch changed (each branch's state completed with the snapshot's)."""
        snapshot, states = self.snapshot, self.states
        for st in states:
            for k, v in snapshot.items():
                st.setdefault(k, v)
        return [k for k in snapshot if states[0][k] is not snapshot[k] or states[1][k] is not snapshot[k]]

    def _join_types(self, n, x, y):
        """The type of one result from its two branch values (Python scalars take the other's dtype)."""
        labels = self.labels
        if isinstance(x, ZerosOf) or isinstance(y, ZerosOf):
            v = y if isinstance(x, ZerosOf) else x
            return tensor_type(v if isinstance(v, TensorBase) else convert(v, None))
        tx = x.dtype if isinstance(x, TensorBase) else None
        ty = y.dtype if isinstance(y, TensorBase) else None
        x = x if isinstance(x, TensorBase) else convert(x, ty)
        y = y if isinstance(y, TensorBase) else convert(y, tx)
        if x.dtype is not y.dtype:
            raise self.st.fail(TypeError, f"'{n}' has dtype {x.dtype.name} in the {labels[0]}, but dtype "
                                          f"{y.dtype.name} in the {labels[1]}")
        shape = join_shapes(x._shape, y._shape)
        if shape is None:
            raise self.st.fail(ValueError,
                               f"'{n}' has shape {shape_str(x._shape)} in the {labels[0]}, but shape "
                               f"{shape_str(y._shape)} in the {labels[1]}; the rank must be the same in both branches")
        return TensorType(shape, x.dtype)

    def _branch_yields(self, side, pairs, types):
        """The values branch `side` yields for the results: each of its result type, made at its end."""
        g, ys = self.st.g, []
        with g.inside(self._blocks()[side], self.scopes[side]):
            for (_, x, y), tt in zip(pairs, types):
                v = (x, y)[side]
                v = to_symbolic(g, zeros(tt) if isinstance(v, ZerosOf) else v, tt.dtype)
                ys.append(self.st.relax(v, tt)._mlir)
        return ys

    def _replace_op(self, cond, pairs, types):
        """The final scf.if (the branches' ops moved into it) in place of the temporary one; its results."""
        # start-up cost: MLIR's Python module of scf loads with the first tensor `if`/`while`
        from mlir.dialects import scf

        g = self.st.g
        yields = [self._branch_yields(side, pairs, types) for side in (0, 1)]
        final = scf.IfOp(cond, [t.to_mlir() for t in types], has_else=True, loc=self.st.location(),
                         ip=ir.InsertionPoint(self.tmp))
        for src, dst, ys in zip(self._blocks(), (final.then_block, final.else_block), yields):
            move_ops(src, dst)
            scf.YieldOp(ys, ip=ir.InsertionPoint(dst), loc=self.st.location())
        erase(g, self.tmp.operation)
        base = g.unique_name(self.name or "cond")
        results = [g.wrap(r, t, f"{base}:{i}") for i, (r, t) in enumerate(zip(final.results, types))]
        if _TAPES:  # a tape that sees a watched value flow in without a gradient rule refuses to differentiate
            what = "tfn.cond" if self.labels[2] == "tfn.cond" else "a tensor `if` statement"
            record_opaque(what, [v for _, x, y in pairs for v in (x, y)], results, self.st.where)
        return results
