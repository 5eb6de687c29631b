"""A control-flow statement being traced: its graph and the user's line, which every IR location and error
message of the op carries; and the helpers both scf.if and scf.while building use.

Effect state (`graph.state`, e.g. variables' current values) that a branch or the loop changes is carried as
extra results / iter_args, and `graph.state` then holds the op's results: writes inside control flow are
functional.
"""
from mlir import ir

from tfn import dtypes
from tfn.core import graph as graph_mod
from tfn.core import leaks
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.locations import with_excerpt
from tfn.dialects.types import TensorType


class Statement:
    """An `if` or `while` traced into graph `g` from the user's `where` = (filename, lineno, col) (None: unknown)."""

    __slots__ = ("g", "where")

    def __init__(self, g, where=None):
        self.g = g
        g.materialize()  # (control flow builds MLIR regions: a trace recorded so far is built now, core/graph.py)
        self.where = where if where is not None else graph_mod.user_position()

    def location(self):
        if self.where is None:
            return ir.Location.unknown()
        return ir.Location.file(*self.where)

    def fail(self, cls, message):
        """An exception `cls(message)` naming the traced function and the user's line."""
        suffix = f"\n  in tfn.function '{self.g.name}' at {self.where[0]}:{self.where[1]}" if self.where else ""
        return cls(with_excerpt(message + suffix, self.where))

    def extract_pred(self, pred, what):
        """The i1 of a scalar bool symbolic tensor, at the current insertion point."""
        # start-up cost: MLIR's Python module of the tensor dialect loads with the first tensor `if`/`while`
        from mlir.dialects import tensor as tensor_d

        if pred.dtype is not dtypes.bool:
            raise self.fail(TypeError, f"{what} must be a bool tensor, got dtype {pred.dtype.name}: {pred!r}")
        if pred.ndim != 0:
            raise self.fail(ValueError, f"{what} must be a scalar, got a tensor of shape {pred.shape}")
        to_symbolic(self.g, pred)
        self.g.check_accessible([pred])
        return tensor_d.extract(pred._mlir, [], loc=self.location(), ip=self.g.ip)

    def relax(self, t, ttype):
        """t with the (less specific) type ttype, via tensor.cast when they differ."""
        # start-up cost: MLIR's Python module of the tensor dialect loads with the first tensor `if`/`while`
        from mlir.dialects import tensor as tensor_d

        if tensor_type(t) == ttype:
            return t
        g = self.g
        v = tensor_d.CastOp(ttype.to_mlir(), t._mlir, loc=self.location(), ip=g.ip).result
        return g.wrap(v, ttype, f"{g.unique_name('cast')}:0")

    def new_state(self, snapshot, state, what, before):
        """{key: value at the start of the call} for state keys that `state` has and `snapshot` lacks (a
        variable first used inside a region); such values are made before the op `before`."""
        g, new = self.g, {}
        for key in state:
            if key in snapshot:
                continue
            if not hasattr(key, "_initial_state"):
                raise self.fail(ValueError, f"the state '{state_name(key)}' was created inside {what}; create it "
                                            "before the control flow so that every branch and iteration can use it")
            saved, g.ip = g.ip, ir.InsertionPoint(before)
            try:
                new[key] = key._initial_state(g)
            finally:
                g.ip = saved
        return new


def to_symbolic(g, x, dtype_hint=None):
    """A symbolic tensor at the current insertion point for a tensor or Python value."""
    if not isinstance(x, TensorBase):
        x = convert(x, dtype_hint)  # (inside the trace: a constant of the graph)
    if isinstance(x, SymbolicTensor):
        if x._graph is not g:
            raise leaks.out_of_scope(x)
        return x
    return g.constant(x)


def convert(x, dtype_hint):
    """A tensor for a Python value, of dtype_hint if it converts to it."""
    if dtype_hint is not None:
        try:
            return convert_to_tensor(x, dtype_hint)
        except (TypeError, ValueError):
            pass
    return convert_to_tensor(x)


def tensor_type(t):
    return TensorType(t._shape, t._dtype)


def shape_str(shape):
    return str(TensorShape(shape))


def state_name(key):
    name = getattr(key, "name", None)
    return name if isinstance(name, str) else repr(key)


def move_ops(src, dst):
    for op in list(src.operations):
        dst.append(op)


def erase(g, op):
    """Erase op with its regions, first dropping them from the graph's op names (an erased op is unhashable)."""
    names = getattr(g, "op_names", None)
    if names:
        doomed = []
        op.walk(lambda o: doomed.append(o) or ir.WalkResult.ADVANCE)
        for o in doomed:
            names.pop(getattr(o, "operation", o), None)
    op.erase()
