"""Whether a function can need AutoGraph at all, read from its bytecode (Python 3.11-3.13).

Conversion costs a source read, a parse and a compile on a function's first trace. It changes nothing for a
function without control flow (no jump, loop, `and`/`or`/`not`, conditional expression or exception
handler, in its own code or its nested lambdas and defs) whose calls all reach callees that converted_call
would leave unconverted or that themselves need no conversion: such a function is traced as it is.
"""
import builtins
import dis
import functools
import sys
import types

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
_TRUTH = frozenset(("UNARY_NOT", "TO_BOOL"))  # `not x` calls bool(x): a tensor needs ag__.not_
_UNKNOWN = object()
# Builtins that converted_call replaces while tracing (operators.BUILTINS): a call of one needs conversion.
OVERLOADED_BUILTINS = frozenset((range, len, int, float, abs))
# A call of a value that is neither a global nor a method pushes NULL: before loading the callee up to Python
# 3.12, after it from 3.13.
_NULL_AFTER_CALLEE = sys.version_info >= (3, 13)


def needs_conversion(fn, is_plain):
    """Whether converting fn could change what it does; is_plain(f) says converted_call leaves f as it is."""
    return _needs(fn, is_plain, set())


def _needs(fn, is_plain, seen):
    if fn in seen:
        return False  # a recursive call: decided by the rest of the cycle
    seen.add(fn)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    todo = [fn.__code__]
    while todo:
        code = todo.pop()
        if code.co_exceptiontable or _code_needs(code, fn.__globals__, cells if code is fn.__code__ else {},
                                                 is_plain, seen):
            return True
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return False


def _code_needs(code, globals_, cells, is_plain, seen):
    """Control flow in this code object, or a call whose callee cannot be shown to need no conversion."""
    prev = _UNKNOWN  # the object the previous instruction loaded, when known
    loading = None  # before 3.13, after a PUSH_NULL: False, then True once the callee's loading started
    for ins in dis.get_instructions(code):
        op = ins.opname
        if loading and not (op == "LOAD_ATTR" and "NULL" not in ins.argrepr):
            if _callee_needs(prev, is_plain, seen):
                return True
            loading = None
        if ins.opcode in _JUMPS or op in _TRUTH or op == "LOAD_SUPER_ATTR":
            return True
        if op == "PUSH_NULL":
            if _NULL_AFTER_CALLEE and _callee_needs(prev, is_plain, seen):
                return True
            loading, prev = (None if _NULL_AFTER_CALLEE else False), _UNKNOWN
            continue
        if loading is False:
            loading = True
        if op == "LOAD_GLOBAL":
            prev = _global(ins.argval, globals_)
            if "NULL" in ins.argrepr and _callee_needs(prev, is_plain, seen):
                return True
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            cell = cells.get(ins.argval)
            prev = _cell_value(cell) if cell is not None else _UNKNOWN
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            base = prev
            prev = getattr(base, ins.argval, _UNKNOWN) if isinstance(base, types.ModuleType) else _UNKNOWN
            if (op == "LOAD_METHOD" or "NULL" in ins.argrepr) and _callee_needs(prev, is_plain, seen):
                return True
        else:
            prev = _UNKNOWN
    return loading is not None


def _global(name, globals_):
    if name in globals_:
        return globals_[name]
    return getattr(builtins, name, _UNKNOWN)


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _UNKNOWN


def _callee_needs(f, is_plain, seen):
    """Whether calling f from converted code could run converted code that the plain call would not."""
    if f is _UNKNOWN or any(f is b for b in OVERLOADED_BUILTINS):
        return True
    if isinstance(f, (type, types.BuiltinFunctionType, types.ModuleType)) or not callable(f):
        return False
    if isinstance(f, types.MethodType):
        f = f.__func__
    elif isinstance(f, functools.partial):
        f = f.func
    elif not isinstance(f, types.FunctionType):
        f = type(f).__call__  # f is callable
    if not isinstance(f, types.FunctionType) or is_plain(f):
        return False
    return _needs(f, is_plain, seen)
