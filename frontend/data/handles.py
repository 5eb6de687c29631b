"""Handles: the int64 values naming a dataset or iterator argument while compiled code runs (as TF's variants)."""
import weakref

from tfn.dialects.errors import InvalidArgumentError

_HANDLES = weakref.WeakValueDictionary()


def register(obj):
    """The int64 handle naming `obj` while it lives."""
    _HANDLES[id(obj)] = obj
    return id(obj)


def lookup(handle):
    """The object a handle names."""
    obj = _HANDLES.get(int(handle))
    if obj is None:
        raise InvalidArgumentError("the dataset or iterator passed to this call no longer exists")
    return obj
