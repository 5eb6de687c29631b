"""`tfn.Module`: a container of variables and submodules found through its attributes (`tf.Module`)."""
import re

from tfn import nest
from tfn.state.variables import Variable


class Module:
    """Base class of stateful objects: `variables`, `trainable_variables` and `submodules` walk the attributes."""

    def __init__(self, name=None):
        if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be valid Python identifiers "
                             "(e.g. a valid class name).")
        self._name = name if name is not None else _snake_case(type(self).__name__)

    @property
    def name(self):
        """The module's name: the one given, else the class name in snake_case (also without `__init__`)."""
        return getattr(self, "_name", None) or _snake_case(type(self).__name__)

    @property
    def variables(self):
        """Every variable of this module and its submodules, each once, in attribute-name order."""
        return tuple(_walk(self, lambda x: isinstance(x, Variable)))

    @property
    def trainable_variables(self):
        """The variables created with `trainable=True`."""
        return tuple(_walk(self, lambda x: isinstance(x, Variable) and x.trainable))

    @property
    def non_trainable_variables(self):
        """The variables created with `trainable=False`."""
        return tuple(_walk(self, lambda x: isinstance(x, Variable) and not x.trainable))

    @property
    def submodules(self):
        """Every module reachable from this one's attributes (children first, then their descendants)."""
        return tuple(_walk(self, lambda x: isinstance(x, Module)))

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__qualname__} object named {self.name!r}>"


def _walk(module, predicate):
    """Matching leaves of `module`'s attributes (sorted, through containers), then its submodules'; each once."""
    # breadth first, as TF's `_flatten_module`
    seen, found, queue, out = {id(module)}, set(), [module], []
    while queue:
        current = queue.pop(0)
        for key in sorted(vars(current)):
            for leaf in nest.flatten(vars(current)[key]):
                if id(leaf) in seen and isinstance(leaf, Module):
                    continue
                if predicate(leaf) and id(leaf) not in found:
                    found.add(id(leaf))
                    out.append(leaf)
                if isinstance(leaf, Module):
                    seen.add(id(leaf))
                    queue.append(leaf)
    return out


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
