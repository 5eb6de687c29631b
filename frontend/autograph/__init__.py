"""`tfn.autograph`: converts Python control flow on tensors into staged control flow while tracing.

A source-to-source transform (Python `ast`) of the traced function and the user functions it calls; see
transformer.py for the rewrite and operators.py for the run-time decisions (Python vs tensor).
"""
import functools
import os
import types

from tfn.autograph import experimental  # noqa: F401
from tfn.autograph.conversion import ConversionError, convert, converted_call, function_source  # noqa: F401
from tfn.autograph.operators import AutoGraphWarning  # noqa: F401
from tfn.core.graph import _TFN_DIRS
from tfn.dialects.errors import OpError

# Exceptions of these classes are the user's errors: their tracebacks omit tfn's own frames (as TF's filtering).
# Set TFN_TRACEBACK_FILTERING=0 to see every frame.
_USER_ERRORS = (ValueError, TypeError, NotImplementedError, NameError, OpError)


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The converted source of a function (or a tfn.function's python_function), as AutoGraph generates it."""
    fn = getattr(entity, "python_function", entity)
    fn = getattr(fn, "__func__", fn)
    return function_source(fn)


def trace(*args):
    """Print the arguments while tracing (TF's `tf.autograph.trace`: it runs when the graph is built)."""
    print(*args)


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted function itself."""
    return for_trace(getattr(entity, "python_function", entity))


def for_trace(fn):
    """What a tfn.function trace runs for `fn`: its conversion, with tfn's frames left out of user errors."""
    method = getattr(fn, "__ag_method__", None)
    if method is not None:  # a tfn.function method bound through a weak reference (function.py)
        func, ref = method
        conv = convert(func)
        target = functools.wraps(fn)(lambda *args, **kwargs: conv(ref(), *args, **kwargs))
    elif isinstance(fn, types.MethodType):
        target = types.MethodType(convert(fn.__func__), fn.__self__)
    else:
        target = convert(fn)
    if target is fn:
        return fn

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        try:
            return target(*args, **kwargs)
        except _USER_ERRORS as e:
            if os.environ.get("TFN_TRACEBACK_FILTERING", "1") != "0":
                e.__traceback__ = _user_frames(e.__traceback__)
            raise
    return traced


def _user_frames(tb):
    """The traceback without frames of tfn's own source (the raising frame is kept if nothing else is)."""
    kept = []
    t = tb
    while t is not None:
        if not t.tb_frame.f_code.co_filename.startswith(_TFN_DIRS):
            kept.append(t)
        t = t.tb_next
    if not kept:
        return tb
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    kept[-1].tb_next = None
    return kept[0]
