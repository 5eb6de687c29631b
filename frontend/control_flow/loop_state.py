"""What a `while` on tensors carries and checks: its loop variables (flattened into tensors, each with the type
it keeps across iterations) and the values one trace of its condition and body produced."""
from tfn import nest
from tfn.control_flow.pending import Pending
from tfn.control_flow.statement import convert, shape_str, state_name, to_symbolic
from tfn.control_flow.values import Flat, describe, is_composite, is_tensor_like, same_object, structure
from tfn.core.tensor import TensorBase
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.types import TensorType

WHILE_LOOP_HINT = ("To allow the shape to vary across iterations, use the `shape_invariants` argument of "
                   "tfn.while_loop to specify a less-specific shape.")
AUTOGRAPH_HINT = ("To allow the shape to vary across iterations, use "
                  "tfn.autograph.experimental.set_loop_options(shape_invariants=...) to specify a less-specific "
                  "shape.")


def fits(shape, invariant):
    """shape is at least as specific as invariant (same rank, equal where invariant is known)."""
    return len(shape) == len(invariant) and all(i is None or s == i for s, i in zip(shape, invariant))


class LoopVars:
    """A loop's variables: their names, shape invariants (None, or a shape or None per variable) and the hint
    an error about a changed shape gives; `flats` are the variables' values as tensor slots."""

    def __init__(self, st, names, shape_invariants, hint):
        self.st, self.names, self.shape_invariants, self.hint = st, names, shape_invariants, hint
        self.flats = []

    def start(self, loop_vars):
        self.flats = [Flat(v) for v in loop_vars]

    def init_types(self):
        """The symbolic initial tensors (before the loop) and the type each keeps across iterations."""
        inits, types = [], []
        for k, (n, f) in enumerate(zip(self.names, self.flats)):
            inv = None if self.shape_invariants is None else self.shape_invariants[k]
            comp_inv = f.component_invariants()
            if inv is not None and len(f.tensors) != 1:
                raise self.st.fail(ValueError, f"the shape invariant of '{n}' must be a single shape; "
                                               f"'{n}' holds {len(f.tensors)} tensors")
            for j, t in enumerate(f.tensors):
                t = to_symbolic(self.st.g, t)
                shape = self._invariant_shape(n, t, inv if inv is not None else comp_inv[j])
                inits.append(t)
                types.append(TensorType(shape, t.dtype))
        return inits, types

    def _invariant_shape(self, n, t, inv):
        if inv is None:
            return t._shape
        if hasattr(inv, "shape") and not isinstance(inv, (list, tuple, TensorShape)):
            inv = inv.shape  # a TensorSpec
        inv = TensorShape(inv)
        if inv.rank is None:  # any shape: tfn's loop values keep their rank, so any size in each dim
            return (None,) * len(t._shape)
        shape = tuple(inv)
        if not fits(t._shape, shape):
            raise self.st.fail(ValueError, f"the shape invariant {shape_str(shape)} of '{n}' is not compatible "
                                           f"with its shape {shape_str(t._shape)} before the loop")
        return shape

    def check_body(self, out):
        """The body's values as a tuple, each with its loop variable's nested structure."""
        flats, names = self.flats, self.names
        if not isinstance(out, (list, tuple)) or len(out) != len(flats):
            raise self.st.fail(ValueError, f"the loop body returned {out!r}; expected a tuple of {len(flats)} "
                                           f"values ({', '.join(names)})")
        for n, f, v in zip(names, flats, out):
            if isinstance(f.value, Pending) and (f.value.learned is None or v is f.value):
                continue  # its type is learned from v (see learned_buffers)
            if isinstance(f.value, Pending):
                if nest.structure_key(f.value.learned[0]) == nest.structure_key(v):
                    continue
                raise self.st.fail(ValueError, f"'{n}' does not have the same nested structure after one "
                                               f"iteration as in the first traced iteration: {describe(v)}")
            if structure(f.value) != structure(v):
                raise self.st.fail(ValueError, f"'{n}' does not have the same nested structure after one "
                                               f"iteration.\n\nbefore the loop: {describe(f.value)}\n"
                                               f"after one iteration: {describe(v)}")
        return tuple(out)

    def learned_buffers(self, out):
        """(initial, after one iteration) of each composite that gained tensors in the body (a first write)."""
        learned = []
        for f, v in zip(self.flats, out):
            if isinstance(f.value, Pending):
                if f.value.learned is None and v is not f.value:
                    learned.append((f.value, v))
                continue
            for leaf, new in zip(f.leaves, nest.flatten(v)):
                if is_composite(leaf) and len(leaf._tfn_components()) < len(new._tfn_components()):
                    learned.append((leaf, new))
        return learned

    def body_tensors(self, out, all_types):
        """The body's new loop tensors, each checked against and cast to its carried type."""
        result, k = [], 0
        for n, f, v in zip(self.names, self.flats, out):
            new = Flat(v)
            if len(new.tensors) != len(f.tensors):
                raise self.st.fail(ValueError, f"'{n}' does not have the same nested structure after one "
                                               "iteration.")
            for a, b in zip(f.leaves, new.leaves):
                if not is_tensor_like(a) and not is_composite(a) and not same_object(a, b):
                    raise self.st.fail(TypeError, f"'{n}' is the Python value {a!r} before the loop but {b!r} "
                                                  "after one iteration; only tensors can change in a loop")
            for t in new.tensors:
                result.append(self.carried(n, t, all_types[k]))
                k += 1
        return result

    def state_tensors(self, state, keys, types):
        """The body's values of the carried state keys, each checked against and cast to its type."""
        return [self.carried(state_name(k), state[k], tt) for k, tt in zip(keys, types)]

    def carried(self, n, t, tt):
        """t (a body value of loop variable n) as a symbolic tensor of the carried type tt."""
        st = self.st
        t = to_symbolic(st.g, t if isinstance(t, TensorBase) else convert(t, tt.dtype), tt.dtype)
        if t.dtype is not tt.dtype:
            raise st.fail(TypeError, f"'{n}' has dtype {tt.dtype.name} before the loop, but dtype "
                                     f"{t.dtype.name} after one iteration")
        if len(t._shape) != len(tt.shape) and all(d is None for d in tt.shape):
            raise st.fail(ValueError, f"'{n}' has rank {len(tt.shape)} before the loop, but rank {len(t._shape)} "
                                      "after one iteration; tfn loop variables keep their rank, even under an "
                                      "unknown-rank shape invariant")
        if not fits(t._shape, tt.shape):
            raise st.fail(ValueError, f"'{n}' has shape {shape_str(tt.shape)} before the loop, but shape "
                                      f"{shape_str(t._shape)} after one iteration. {self.hint}")
        return st.relax(t, tt)


class Regions:
    """What one trace of a loop's condition and body produced."""

    __slots__ = ("cond", "cond_state", "body", "cond_all", "body_all")

    def __init__(self, cond, cond_state, body, cond_all, body_all):
        self.cond = cond  # the condition's i1
        self.cond_state = cond_state  # the carried state keys' values at the end of the condition
        self.body = body  # the body's values: loop tensors, then carried state keys
        self.cond_all, self.body_all = cond_all, body_all  # the graph state each region left
