"""The base of tfn's small immutable value classes (a target, a device, compile options, a named pipeline).

What `@dataclass(frozen=True)` gives them — equality and hash by their fields, a repr, assignment refused, a copy
with some fields replaced — written once: the dataclass decorator compiles six methods per class from source
text, and seven such classes were a sixth of `import tfn`'s own work.
"""


class Frozen:
    """Subclasses name their fields in `_fields` (in constructor order; `_hidden` ones are left out of the repr)
    and set them in `__init__` with `self._set(name=value, ...)`."""

    __slots__ = ()
    _fields = ()
    _hidden = ()

    def _set(self, **values):
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self):
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field '{name}' of an immutable {type(self).__name__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field '{name}' of an immutable {type(self).__name__}")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields if name not in self._hidden)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self):  # copies and pickles are made through the constructor
        return type(self), self._values()

    def replace(self, **changes):
        """A copy with the fields named in `changes` replaced (dataclasses.replace)."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{name: changes.get(name, getattr(self, name)) for name in self._fields})
