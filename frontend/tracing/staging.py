"""The class of the error a trace reports when the traced Python code raises, as TF's AutoGraph reports it.

TF 2.21 re-raises an exception from converted code with its own class only where it can rebuild it from a
message: op errors, classes whose `__init__` is `Exception.__init__` (most user-defined ones), KeyError and
exactly AssertionError, AttributeError, NameError, NotImplementedError, RuntimeError, StopIteration,
TypeError, UnboundLocalError and ValueError. Every other Exception (IndexError, ZeroDivisionError,
RecursionError, a ValueError subclass, a class with its own `__init__`) becomes `StagingError`
("in user code: ..."). tfn does the same for what the user's code raises, chaining the original exception so
its traceback stays visible; errors tfn itself raises keep their class.
"""
import linecache

from tfn.dialects.errors import OpError, StagingError

_KEPT = (AssertionError, AttributeError, NameError, NotImplementedError, RuntimeError, StopIteration, TypeError,
         UnboundLocalError, ValueError, KeyError)


def keeps_class(e):
    """Whether `e`, raised while tracing, keeps its class: TF's rule for what the user's code raised; what tfn
    raised (its documented errors, a limitation it names) is kept, except running out of Python stack."""
    t = type(e)
    if not isinstance(e, Exception) or isinstance(e, (OpError, StagingError)) or t.__module__.split(".")[0] == "tfn":
        return True
    if not isinstance(e, RecursionError) and _raised_in_tfn(e.__traceback__):
        return True
    return t in _KEPT or t.__init__ is Exception.__init__


def _raised_in_tfn(tb):
    while tb.tb_next is not None:
        tb = tb.tb_next
    return _in_tfn(tb)


def _in_tfn(tb):
    return str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0] == "tfn"


def _user_frame(tb):
    """(file, line, function name) of the innermost traceback frame outside tfn, or None."""
    found = None
    while tb is not None:
        if not _in_tfn(tb):
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return found


def staging_error(e):
    """The StagingError TF raises for `e` (an exception whose class it does not keep)."""
    where = ""
    frame = _user_frame(e.__traceback__)
    if frame is not None:
        file, line, name = frame
        where = f"    File \"{file}\", line {line}, in {name}\n        {linecache.getline(file, line).strip()}\n\n"
    return StagingError(f"in user code:\n\n{where}    {type(e).__name__}: {e}")
