"""The values control flow carries, flattened into tensors: nested structures of tensors, Python values
(which must not differ between branches or iterations) and composites.

Composite values (TensorArray, Pending) take part through two methods: `_tfn_components()` -> list of tensors
and `_tfn_rebuild(tensors)` -> a new value of the same kind; `_tfn_invariants()` gives, per component, the
shape (None dims allowed) the component keeps across iterations (None: its initial shape).
"""
import numpy as np

from tfn import nest
from tfn.control_flow.pending import ZerosOf
from tfn.core.tensor import TensorBase

_SCALARS = (bool, int, float, complex, str, bytes, np.generic, np.ndarray)  # (strings: string tensors, as in TF)


def is_composite(x):
    return hasattr(x, "_tfn_components")


def structure(value):
    """A description of value's nesting, composites included, that two compatible values share."""
    leaves = nest.flatten(value)
    kinds = tuple(x._tfn_structure() if is_composite(x) else "." for x in leaves)
    return (nest.structure_key(value), kinds)


def describe(value):
    return repr(value)


def is_tensor_like(x):
    return isinstance(x, (TensorBase, ZerosOf)) or isinstance(x, _SCALARS)


def same_object(a, b):
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # an object whose == is not a plain bool
        return False


class Flat:
    """One value (a nested structure) as a list of tensor slots plus its fixed Python leaves."""

    def __init__(self, value):
        self.value = value
        self.leaves = nest.flatten(value)
        self.slots = []  # per tensor slot: (leaf index, component index or None)
        self.tensors = []
        for i, leaf in enumerate(self.leaves):
            if is_composite(leaf):
                for j, c in enumerate(leaf._tfn_components()):
                    self.slots.append((i, j))
                    self.tensors.append(c)
            elif is_tensor_like(leaf):
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
            if is_composite(leaf) and i not in comps:
                leaves[i] = leaf._tfn_rebuild([])
        return nest.pack_sequence_as(self.value, leaves)

    def component_invariants(self):
        """Per tensor slot, the shape a composite's component keeps across iterations (None: its own)."""
        return [self.leaves[i]._tfn_invariants()[j] if j is not None else None for i, j in self.slots]


def rebuild_all(flats, tensors):
    """Each flat value rebuilt from its share of `tensors`, in order."""
    it = iter(tensors)
    return tuple(f.rebuild([next(it) for _ in f.tensors]) for f in flats)
