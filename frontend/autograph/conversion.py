"""Convert user functions (once, cached) and call them: source -> AST -> converted AST -> code object with the
original file name and line numbers -> a function sharing the original's globals and closure cells."""
import ast
import copy
import functools
import inspect
import os
import types
import warnings
import weakref

from tfn.autograph import bytecode, operators, transformer
from tfn.core import graph as graph_mod

# Code outside user code: tfn itself, the standard library and installed packages are called unconverted. The
# standard library is the folder of `os` (sysconfig would say the same, but loading its data costs ~2 ms of
# `import tfn`); installed packages are found by their site-packages / dist-packages folder (is_library).
_LIBRARY_DIRS = (os.path.dirname(os.path.abspath(os.__file__)) + os.sep,) + graph_mod._TFN_DIRS
_converted = weakref.WeakKeyDictionary()  # function -> converted function (itself when not convertible)
# (code object, its file) -> (converted code object, converted FunctionDef) or (None, reason). Code objects compare
# equal without their file: the same function at the same lines of two files would share one converted code, and
# its errors would name the other file.
_templates = {}
_do_not_convert = weakref.WeakSet()


class ConversionError(Exception):
    """A function's source could not be found or converted."""


def is_library(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    filename = os.path.abspath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
    return filename.startswith(_LIBRARY_DIRS) or "site-packages" in filename or "dist-packages" in filename


def mark_do_not_convert(fn):
    try:
        _do_not_convert.add(fn)
    except TypeError:
        pass
    fn_dict = getattr(fn, "__dict__", None)
    if isinstance(fn_dict, dict):
        fn_dict["__ag_do_not_convert__"] = True
    return fn


def convert(fn, warn=True):
    """The converted twin of a user function; the function itself when it cannot (or must not) be converted."""
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__ag_artifact__", False) or fn in _do_not_convert \
            or getattr(fn, "__ag_do_not_convert__", False) or is_library(fn):
        return fn
    done = _converted.get(fn)
    if done is not None:
        return done
    if not bytecode.needs_conversion(fn, _plain):  # no control flow: its conversion would change nothing
        _converted[fn] = fn
        return fn
    code, detail = _template(fn)
    if code is None:
        if warn and detail:
            warnings.warn(f"AutoGraph could not convert {fn.__qualname__} ({detail}); it runs unconverted, as "
                          "plain Python.", operators.AutoGraphWarning, stacklevel=graph_mod.user_stacklevel())
        _converted[fn] = fn
        return fn
    out = _instantiate(fn, code)
    _converted[fn] = out
    return out


def _plain(fn):
    """Whether converted_call calls fn as it is (not user code, or already decided to stay unconverted)."""
    return getattr(fn, "__ag_artifact__", False) or fn in _do_not_convert or \
        getattr(fn, "__ag_do_not_convert__", False) or is_library(fn) or _converted.get(fn) is fn


def _instantiate(fn, code):
    """A function of the converted code with the original's globals, defaults and closure cells (so nonlocal
    writes and later rebinding of free variables are shared with the original)."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(types.CellType(AG_NAMESPACE) if n == transformer.AG else cells.get(n, types.CellType())
                    for n in code.co_freevars)
    out = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__qualname__ = fn.__qualname__
    out.__doc__ = fn.__doc__
    out.__module__ = fn.__module__
    out.__dict__.update(fn.__dict__)
    out.__ag_artifact__ = True
    return out


def _template_key(fn):
    return fn.__code__, fn.__code__.co_filename


def _template(fn):
    key = _template_key(fn)
    if key not in _templates:
        try:
            node = _converted_ast(fn)
            _templates[key] = (_compile(fn, node), node)
        except ConversionError as e:
            _templates[key] = (None, str(e))
        except _Skip:
            _templates[key] = (None, "")
    code, node = _templates[key]
    return (code, None) if code is not None else (None, node)


class _Skip(Exception):
    """A function AutoGraph leaves unconverted without a warning (a generator, a coroutine)."""


def _source_tree(fn):
    """The parsed source holding fn, with the file's line numbers and column offsets."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise ConversionError(f"its source code is not available: {e}") from None
    src = "".join(lines)
    offset = first - 1
    if src[:1].isspace():  # an indented def (a method, a nested function): parse it inside an `if` block
        src, offset = "if 1:\n" + src, offset - 1
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise ConversionError(f"its source could not be parsed on its own ({e.msg})") from None
    ast.increment_lineno(tree, offset)
    return tree


def _lambda_alone(fn):
    """The lambda's own source cut out of lines that do not parse on their own (a lambda inside a multi-line
    call or literal): the longest text from a `lambda` keyword to a delimiter that parses as just a lambda."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise ConversionError(f"its source code is not available: {e}") from None
    src = "".join(lines)
    ends = [i for i, ch in enumerate(src) if ch in ",)]}\n"] + [len(src)]
    found = []
    for start in [i for i in range(len(src)) if src.startswith("lambda", i)]:
        for end in reversed([e for e in ends if e > start]):
            try:
                expr = ast.parse(src[start:end].strip(), mode="eval").body
            except SyntaxError:
                continue
            if isinstance(expr, ast.Lambda):
                ast.increment_lineno(expr, first + src.count("\n", 0, start) - 1)
                if expr.lineno == fn.__code__.co_firstlineno and _same_params(expr, fn):
                    found.append(expr)
                break
    found = _same_lambda(found, fn)
    if not found:
        raise ConversionError("its source could not be parsed on its own")
    return ast.Module(body=[ast.Expr(value=found[0])], type_ignores=[])


def _same_lambda(candidates, fn):
    """The candidate lambdas whose code uses the same names as fn's; an error if that leaves several."""
    def names(node):
        code = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<lambda>", "eval")
        inner = next(c for c in code.co_consts if isinstance(c, type(code)))
        return inner.co_names, inner.co_consts
    if len({ast.dump(n) for n in candidates}) <= 1:
        return candidates[:1]
    want = (fn.__code__.co_names, fn.__code__.co_consts)
    same = [n for n in candidates if names(n) == want]
    if len({ast.dump(n) for n in same}) != 1:
        raise ConversionError("several lambdas on its line have the same parameters")
    return same[:1]


def _same_params(node, fn):
    code = fn.__code__
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    return [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs] == params


def _find(tree, fn):
    code = fn.__code__
    if fn.__name__ == "<lambda>":
        found = _same_lambda([n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
                              and n.lineno == code.co_firstlineno and _same_params(n, fn)], fn)
    else:
        found = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == fn.__name__ and code.co_firstlineno in
                 [n.lineno] + [d.lineno for d in n.decorator_list]]
    if not found:
        raise ConversionError("its definition was not found in its source")
    return found[0]


def _converted_ast(fn):
    """The converted FunctionDef of fn (a lambda becomes a def returning its expression)."""
    try:
        tree = _source_tree(fn)
    except ConversionError:
        if fn.__name__ != "<lambda>":
            raise
        tree = _lambda_alone(fn)
    node = _find(tree, fn)
    if isinstance(node, ast.AsyncFunctionDef) or inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
        raise _Skip()
    if isinstance(node, ast.Lambda):
        node = ast.copy_location(ast.FunctionDef(name="lambda__", args=node.args, body=[
            ast.copy_location(ast.Return(value=node.body), node)], decorator_list=[], returns=None,
            type_params=[]), node)
    # Defaults and annotations are evaluated where the original was defined: the new function takes the
    # original's values (_instantiate), so the factory must not evaluate them.
    node.decorator_list, node.returns = [], None
    node.args.defaults, node.args.kw_defaults = [], [None] * len(node.args.kwonlyargs)
    for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs + [node.args.vararg, node.args.kwarg]:
        if a is not None:
            a.annotation = None
    params = transformer._params(node.args)
    first = (node.args.posonlyargs + node.args.args)[:1]
    transformer.fix_super(node, first[0].arg if first else None)
    globals_ = transformer._declared(node.body, ast.Global)
    transformer.FunctionConverter(node, params, globals_).convert()
    transformer.ExpressionConverter().visit(node)
    transformer.bind_nonlocals(node, fn.__code__.co_freevars)
    return ast.fix_missing_locations(node)


def _compile(fn, node):
    """The code object of the converted def, compiled in a factory whose parameters are its free variables."""
    free = [transformer.AG] + [n for n in fn.__code__.co_freevars if n != transformer.AG]
    if any(isinstance(n, ast.Name) and n.id == "__class__" for n in ast.walk(node)) and "__class__" not in free:
        free.append("__class__")
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in free], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    # the def gets a name of its own in the factory: under its real name, a call of itself (recursion) would read
    # the factory's local instead of the global or closure variable it names
    inner = copy.copy(node)
    inner.name = "__ag_converted"
    factory = ast.FunctionDef(name="__ag_factory", args=args, body=[inner, ast.Return(value=ast.Name(
        id=inner.name, ctx=ast.Load()))], decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, node)
    ast.fix_missing_locations(module)
    try:
        code = compile(module, fn.__code__.co_filename, "exec")
    except SyntaxError as e:
        raise ConversionError(f"its converted code does not compile ({e.msg} at line {e.lineno})") from None
    namespace = {}
    exec(code, namespace)  # noqa: S102  (defines the factory only)
    made = namespace["__ag_factory"](*([None] * len(free)))
    return made.__code__.replace(co_name=fn.__code__.co_name, co_qualname=fn.__code__.co_qualname)


# --- calls ----------------------------------------------------------------------------------------------------

def converted_call(f, args, kwargs):
    """Call f from converted code, converting it first when it is user code."""
    overload = (operators.BUILTINS.get(f) if isinstance(f, types.BuiltinFunctionType) or f is range or f is int
                or f is float else None)
    if overload is not None and graph_mod.current() is not None:
        return overload(*args, **(kwargs or {}))
    target = _call_target(f)
    return target(*args, **kwargs) if kwargs else target(*args)


def _call_target(f):
    if isinstance(f, types.FunctionType):
        return convert(f)
    if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
        conv = convert(f.__func__)
        return f if conv is f.__func__ else types.MethodType(conv, f.__self__)
    if isinstance(f, functools.partial) and isinstance(f.func, types.FunctionType):
        conv = convert(f.func)
        return f if conv is f.func else functools.partial(conv, *f.args, **f.keywords)
    if isinstance(f, type) or not callable(f):
        return f
    call = type(f).__call__
    if isinstance(call, types.FunctionType) and not is_library(call):
        conv = convert(call)
        return f if conv is call else types.MethodType(conv, f)
    return f


# The namespace converted code sees as `ag__`: the operators and converted_call.
AG_NAMESPACE = types.SimpleNamespace(
    converted_call=converted_call, Undefined=operators.Undefined, UndefinedReturnValue=operators.UndefinedReturnValue,
    and_=operators.and_, autograph_artifact=operators.autograph_artifact, compare_chain=operators.compare_chain,
    for_stmt=operators.for_stmt,
    if_exp=operators.if_exp, if_stmt=operators.if_stmt, ldu=operators.ldu, not_=operators.not_, or_=operators.or_,
    retval=operators.retval, while_stmt=operators.while_stmt)


def function_source(fn):
    """The readable converted source of fn."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"to_code expects a Python function, got {fn!r}")
    code, detail = _template(fn)
    if code is None:
        raise ConversionError(f"cannot convert {fn.__qualname__}: {detail or 'generators are not converted'}")
    node = _templates[_template_key(fn)][1]
    shown = ast.FunctionDef(name="tf__" + fn.__name__.replace("<lambda>", "lambda"), args=node.args,
                            body=node.body, decorator_list=[], returns=None, type_params=[])
    return ast.unparse(ast.fix_missing_locations(shown)) + "\n"
