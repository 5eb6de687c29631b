"""Values not yet defined on a path through staged control flow, whose type a later assignment decides.

A `Pending` stands for a loop variable that is undefined before a tensor loop (AutoGraph's `retval_` of a
`return` inside the loop, or a variable the body assigns before reading): build_while traces the body once to
learn the type the body gives it, then traces again starting the loop from zeros of that type (TF's
auto-initialisation). Reading a Pending raises UnboundLocalError, as reading the unassigned variable would.
In a staged `if`, a `lenient` Pending (a return value) left unassigned by one branch takes the other
branch's type there, with zeros as its value: the do_return flag keeps those zeros from being used.
"""
import numpy as np

from tfn import nest
from tfn.core.tensor import Tensor, TensorBase, convert_to_tensor
from tfn.dialects.types import TensorType


class PendingRead(UnboundLocalError):
    """A Pending value was read (`pending` names it)."""

    def __init__(self, message, pending):
        super().__init__(message)
        self.pending = pending


class Pending:
    """A variable with no value yet; a composite with no tensors until the loop learns its type."""

    __slots__ = ("symbol_name", "lenient", "learned")

    def __init__(self, symbol_name, lenient):
        self.symbol_name = symbol_name
        self.lenient = lenient
        self.learned = None  # (structure with leaves, [TensorType or None per leaf])

    def __repr__(self):
        return f"<undefined '{self.symbol_name}'>"

    def __getattr__(self, name):
        if name.startswith("_"):  # protocol probes (hasattr/getattr with a default) see a plain object
            raise AttributeError(name)
        self._fail()

    def _fail(self, *args, **kwargs):
        raise PendingRead(f"local variable '{self.symbol_name}' referenced before assignment", self)

    __call__ = __getitem__ = __iter__ = __bool__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __array__ = _fail

    # --- the composite protocol of control flow (see tfn.control_flow.values) ---------------------------

    def _tfn_structure(self):
        return "pending"

    def _tfn_components(self):
        """Zeros of the learned type (the loop's initial value), none before the type is known."""
        if self.learned is None:
            return []
        _, types = self.learned
        return [zeros(t) for t in types if t is not None]

    def _tfn_invariants(self):
        if self.learned is None:
            return []
        return [t.shape for t in self.learned[1] if t is not None]

    def _tfn_rebuild(self, tensors):
        if self.learned is None:
            return self
        structure, types = self.learned
        it = iter(tensors)
        leaves = [next(it) if t is not None else leaf for leaf, t in zip(nest.flatten(structure), types)]
        return nest.pack_sequence_as(structure, leaves)

    def _tfn_learn(self, value):
        """Take the structure and tensor types of `value` (the body's first assignment)."""
        types = []
        for leaf in nest.flatten(value):
            if isinstance(leaf, (TensorBase, bool, int, float, complex, np.generic, np.ndarray)):
                t = leaf if isinstance(leaf, TensorBase) else convert_to_tensor(leaf)
                types.append(_type(t))
            else:
                types.append(None)
        self.learned = (value, types)


class ZerosOf:
    """In one branch of a staged `if`: zeros with the type the other branch gives this value."""

    __slots__ = ("other",)

    def __init__(self, other):
        self.other = other


def fill_one_side(value, other):
    """`value` (a lenient Pending) as the structure of `other` with ZerosOf tensor leaves."""
    def leaf(x):
        return ZerosOf(x) if isinstance(x, (TensorBase, bool, int, float, complex, np.generic, np.ndarray)) else x
    return nest.map_structure(leaf, other)


def zeros(ttype):
    """An eager zero tensor of a type (unknown dims as 0; the carried type keeps them unknown)."""
    shape = tuple(0 if d is None else d for d in ttype.shape)
    if ttype.dtype.is_string:
        arr = np.full(shape, b"", dtype=object)
    else:
        arr = np.zeros(shape, ttype.dtype.np)
    return Tensor(arr, ttype.dtype) if not ttype.dtype.is_string else convert_to_tensor(arr, ttype.dtype)


def _type(t):
    return TensorType(t._shape, t._dtype)
