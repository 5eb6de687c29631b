"""`tfn.name_scope`: a prefix for the names of the ops made inside it (TF's `tf.name_scope`, v2)."""
import threading

from tfn.core import graph as graph_mod

_eager = threading.local()  # the scope outside any trace: a name only (eager ops have no names)


def _holder():
    g = graph_mod.current()
    return g if g is not None else _eager


class name_scope:  # noqa: N801  (TF's name)
    """`with tfn.name_scope("block") as scope:` names ops "block/<op>" (scope is "block/"); nested scopes
    join, a name ending in "/" is taken as the whole scope, "" returns to the top, and a scope opened twice in
    one trace is made unique ("block_1/"), as TF does."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise ValueError(f"name for name_scope must be a string, got {name!r} of type {type(name).__name__}")
        self._name = name
        self._saved = []

    @property
    def name(self):
        return self._name

    def __enter__(self):
        holder = _holder()
        old = getattr(holder, "name_scope", "")
        if not self._name or self._name.endswith("/"):
            new = self._name
        elif holder is _eager:
            new = old + self._name + "/"
        else:
            new = holder.unique_name(old + self._name) + "/"
        self._saved.append((holder, old))
        holder.name_scope = new
        return new

    def __exit__(self, *exc):
        holder, old = self._saved.pop()
        holder.name_scope = old
        return False
