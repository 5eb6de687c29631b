"""The run-time half of AutoGraph (`ag__` in converted code): each operator decides when it runs, at trace
time, whether its statement is plain Python (a Python condition or iterable) or staged control flow (a tensor
condition or iterable -> `build_if` / `build_while`)."""
import operator
import sys
import time
import warnings
import weakref

import numpy as np
from mlir import ir

from tfn import dtypes, errors, nest
from tfn.control_flow.pending import Pending, PendingRead
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor
from tfn.dialects.locations import frame_position, with_excerpt
from tfn.dialects.types import TensorType
from tfn.ops import fill_ops, math_ops, py_function, shape_ops
from tfn.ops.control_flow import build_if, build_while

# A Python loop this long while tracing probably meant to be a tensor loop (TF warns likewise).
UNROLL_WARN_ITERATIONS = 3000
# A Python loop still running this many seconds into a trace is taken to be endless: the trace stops with an error.
RUNAWAY_LOOP_SECONDS = 5.0


class AutoGraphWarning(UserWarning):
    """AutoGraph could not convert a function, or a Python loop unrolled many times while tracing."""


class Undefined:
    """The value of a variable not (yet) assigned on the path taken, as seen by converted control flow."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def __repr__(self):
        return f"<undefined '{self.symbol_name}'>"

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self.symbol_name}' referenced before assignment")

    __getattr__ = __call__ = __getitem__ = __iter__ = __bool__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __array__ = _fail


class UndefinedReturnValue:
    """The return value of a function before (or without) executing a `return`."""

    def __repr__(self):
        return "<no return value>"


# Loop results that are the auto-initialised return value of a tensor loop: id -> tensor, and id -> the loop
_UNRETURNED = weakref.WeakValueDictionary()
_UNRETURNED_AT = {}


def retval(value):
    """The function's result: None when no `return` ran."""
    if isinstance(value, (UndefinedReturnValue, Pending)):
        return None
    for leaf in nest.flatten(value):
        if _UNRETURNED.get(id(leaf)) is leaf:
            where = _UNRETURNED_AT[id(leaf)]
            raise ValueError(with_excerpt(
                f"the function returns inside the tensor loop at {_at(where)}, but can also finish the loop without "
                "returning: a traced function must return a value on every path; add a `return` after the loop",
                where))
    return value


def _mark_unreturned(value, where):
    for leaf in nest.flatten(value):
        if isinstance(leaf, SymbolicTensor):
            _UNRETURNED[id(leaf)] = leaf
            _UNRETURNED_AT[id(leaf)] = where
            weakref.finalize(leaf, _UNRETURNED_AT.pop, id(leaf), None)


def autograph_artifact(fn):
    """Mark a function made by converted code (it is already converted)."""
    try:
        fn.__ag_artifact__ = True
    except AttributeError:
        pass
    return fn


def _where():
    """(filename, lineno, col) of the converted statement calling the operator (the user's own code)."""
    return frame_position(sys._getframe(2))


def _at(where):
    return f"{where[0]}:{where[1]}"


def _staged(x):
    """Whether control flow on x must be staged: any tensor while tracing (an eager one made or captured by the
    function is a value of the graph too, as in TF)."""
    return isinstance(x, TensorBase) and graph_mod.current() is not None


def ldu(load, name):
    """The value `load()` reads (an attribute or item of the state), or Undefined(name) where it is missing."""
    try:
        return load()
    except (KeyError, AttributeError, IndexError, NameError, UnboundLocalError):
        return Undefined(name)


def _get(get_state, names):
    """The state values; a variable not bound on the path taken reads as Undefined."""
    try:
        return tuple(get_state())
    except NameError:
        # fill the unbound variables' cells with Undefined for one read, then empty them again
        empty = [(n, c) for n, c in zip(get_state.__code__.co_freevars, get_state.__closure__ or ())
                 if not _bound(c)]
        for n, c in empty:
            c.cell_contents = Undefined(n)
        try:
            return tuple(get_state())
        finally:
            for _, c in empty:
                del c.cell_contents


def _bound(cell):
    try:
        return cell.cell_contents is not _NOTHING
    except ValueError:  # an empty cell
        return False


_NOTHING = object()


# --- if -----------------------------------------------------------------------------------------------------

def _shown(names):
    """Names for error messages: AutoGraph's own return variables are described, not named."""
    return tuple("the return value" if n.startswith("retval_") else "the return flag" if n.startswith("do_return")
                 else n for n in names)


def if_stmt(cond, body, orelse, get_state, set_state, names, nouts=None):
    """`if cond: body() else: orelse()`; a tensor condition traces both into one scf.if.

    names: the state, its first `nouts` the outputs; the rest are variables the branches change but only read
    before changing (each branch starts from their values before the `if`, which they keep after it)."""
    if not _staged(cond):
        if cond:
            body()
        else:
            orelse()
        return
    where = _where()
    init = _get(get_state, names)
    nouts = len(names) if nouts is None else nouts
    cond = _symbolic(cond)

    def branch(fn, label, other):
        def run():
            before = _get(get_state, names)  # restored after: a gradient traces the branch again, later
            set_state(init)
            fn()
            out = _get(get_state, names)[:nouts]
            set_state(before)
            _check_branch(out, names, label, other, where)
            return out
        return run
    outs = build_if(cond, branch(body, "main", "else"), branch(orelse, "else", "main"), _shown(names[:nouts]),
                    where)
    set_state(tuple(outs) + init[nouts:])


def _check_branch(values, names, label, other, where):
    for name, v in zip(names, values):
        if isinstance(v, Undefined):
            raise ValueError(with_excerpt(
                f"'{name}' must also be initialized in the {label} branch of the `if` at {_at(where)}: it is "
                f"assigned in the {other} branch and used after the `if`, whose tensor condition makes both "
                "branches part of the graph", where))
        if isinstance(v, UndefinedReturnValue):
            raise ValueError(with_excerpt(
                f"the {label} branch of the `if` at {_at(where)} must also have a return statement: the {other} "
                "branch returns a value and the condition is a tensor", where))


def if_exp(cond, if_true, if_false):
    """`if_true() if cond else if_false()`; a tensor condition selects elementwise (tfn.where)."""
    if not _staged(cond):
        return if_true() if cond else if_false()
    a, b = if_true(), if_false()
    try:
        return nest.map_structure(lambda x, y: math_ops.where(cond, *_same_kind(x, y)), a, b)
    except (TypeError, ValueError) as e:
        where = _where()
        raise type(e)(with_excerpt(f"{e}\n  in the conditional expression at {_at(where)}", where)) from None


def _same_kind(x, y):
    """Python numbers take the dtype of the tensor they are selected against."""
    if isinstance(x, TensorBase) and not isinstance(y, TensorBase):
        return x, convert_to_tensor(y, x.dtype)
    if isinstance(y, TensorBase) and not isinstance(x, TensorBase):
        return convert_to_tensor(x, y.dtype), y
    return x, y


# --- and / or / not -------------------------------------------------------------------------------------------

def and_(a, b):
    """`a() and b()`: Python's short circuit on Python values, tfn.logical_and on tensors."""
    x = a()
    if not _staged(x):
        return x and b()
    return math_ops.logical_and(*_lazy_operands(x, b, "and"))


def _lazy_operands(x, b, what):
    """TF stages a tensor `x and b()` as tf.cond(x, b, lambda: x): x must be a scalar (else TF's run-time
    InvalidArgumentError) and b() a tensor of x's dtype (else tf.cond's TypeError: the branches differ)."""
    x = convert_to_tensor(x)  # (a variable: its value)
    if x.ndim != 0 and all(d is not None for d in x._shape):
        where = _where_user()
        raise errors.InvalidArgumentError(with_excerpt(
            f"The second input must be a scalar, but it has shape {list(x._shape)}: the tensor `{what}` at "
            f"{_at(where)} is a tfn.cond on its first operand", where))
    y = b()
    y = y if isinstance(y, TensorBase) else convert_to_tensor(y)
    if y.dtype != x.dtype:
        where = _where_user()
        raise TypeError(with_excerpt(
            f"true_fn and false_fn arguments to tf.cond must have the same number, type, and overall structure of "
            f"return values: the tensor `{what}` at {_at(where)} gives its first operand ({x!r}) or its second "
            f"({y!r})", where))
    return x, y


def _where_user():
    return graph_mod.user_position()


def or_(a, b):
    """`a() or b()`: Python's short circuit on Python values, tfn.logical_or on tensors."""
    x = a()
    if not _staged(x):
        return x or b()
    return math_ops.logical_or(*_lazy_operands(x, b, "or"))


_COMPARISONS = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
                "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
                "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b}


def compare_chain(left, *links):
    """`left op1 b op2 c ...` with links ((op name, lambda: b), ...): Python's chained comparison, each operand
    evaluated once and in order; where a comparison gives a tensor the conjunction is TF's tensor `and`
    (`a < b and b < c`)."""
    result = None
    for name, right in links:
        value = right()
        r = _COMPARISONS[name](left, value)
        result = r if result is None else and_(lambda a=result: a, lambda b=r: b)
        if not _staged(result) and not result:
            return result
        left = value
    return result


def not_(x):
    """`not x`; tfn.logical_not on a tensor."""
    if not _staged(x):
        return not x
    return math_ops.logical_not(x)


# --- builtins (TF's py_builtins): called through converted_call while tracing ----------------------------------

def range_(*args):
    """`range(...)`: tfn.range when a bound is a tensor, else Python's range."""
    if not any(isinstance(a, TensorBase) for a in args):
        return range(*args)
    return fill_ops.range(*args)


def len_(x):
    """`len(x)`: a tensor's first dimension, as a tensor when it is only known at run time."""
    if not isinstance(x, TensorBase) or not hasattr(x, "_shape"):
        return len(x)
    if not x._shape:
        raise ValueError(f"len requires a non-scalar tensor, got one of shape {x.shape}")
    if x._shape[0] is not None:
        return x._shape[0]
    return shape_ops.shape(x)[0]


def int_(x=0, *base):
    """`int(x)`: a tensor is cast to int32, as TF's AutoGraph converts it (a graph value has no Python int)."""
    if isinstance(x, TensorBase) and not x.dtype.is_string:
        if base:
            raise NotImplementedError(f"base {base[0]} not supported for int")
        return math_ops.cast(x, dtypes.int32)
    return int(x, *base)


def float_(x=0.0):
    """`float(x)`: a tensor is cast to float32, as TF's AutoGraph converts it."""
    if isinstance(x, TensorBase) and not x.dtype.is_string:
        return math_ops.cast(x, dtypes.float32)
    return float(x)


def abs_(x):
    """`abs(x)`: tfn.abs on a tensor."""
    if isinstance(x, TensorBase):
        return math_ops.abs(x)
    return abs(x)


BUILTINS = {range: range_, len: len_, int: int_, float: float_, abs: abs_}


# --- while ------------------------------------------------------------------------------------------------------

def while_stmt(test, body, get_state, set_state, names, opts, loop_local=()):
    """`while test(): body()`; a tensor condition traces test and body once into one scf.while.

    loop_local: the variables not used after the loop before being assigned again (these may start the
    tensor loop undefined)."""
    where = _where()
    c = test()
    if _staged(c):
        _staged_loop(test, body, get_state, set_state, names, opts, where, loop_local=loop_local)
        return
    unroll = _Unroll(where)
    while True:
        if _staged(c):
            raise NotImplementedError(with_excerpt(
                f"The condition of the `while` loop at {_at(where)} started as a Python value, then changed to a "
                "tensor after an iteration. This happens when a variable changes type in the loop, or when a "
                "`break` or `return` inside the loop depends on a tensor condition (for example `while True:` "
                "with `if tensor: break`). Make it a tensor loop: give the loop a tensor condition, with its "
                "variables tensors before the loop.", where))
        if not c:
            return
        body()
        unroll.count()
        c = test()


class _Unroll:
    """Iterations of a Python loop run while tracing: warns when it is long, stops it when it seems endless."""

    def __init__(self, where):
        self.where, self.n, self.started = where, 0, None

    def count(self):
        self.n += 1
        if self.n < UNROLL_WARN_ITERATIONS or graph_mod.current() is None:
            return
        if self.n == UNROLL_WARN_ITERATIONS:
            self.started = time.monotonic()
            warnings.warn(f"Large unrolled loop detected at {_at(self.where)}: this Python loop has run {self.n} "
                          "iterations while tracing, adding its ops to the graph each time. Did you mean a tensor "
                          "loop (loop over tfn.range or a tensor, or give the `while` a tensor condition)?",
                          AutoGraphWarning, stacklevel=3)
        elif self.n % 256 == 0 and time.monotonic() - self.started > RUNAWAY_LOOP_SECONDS:
            raise RuntimeError(with_excerpt(
                f"The Python loop at {_at(self.where)} has run {self.n} iterations while tracing and does not "
                "end: its condition is a Python value that the loop never makes false. Make it a tensor loop "
                "(a tensor condition, or loop over tfn.range or a tensor), or make the condition change.",
                self.where))


def _loop_options(opts, init, names):
    """shape_invariants from set_loop_options, as build_while's list parallel to the loop variables."""
    pairs = (opts or {}).get("shape_invariants")
    if not pairs:
        return None
    inv = [None] * len(names)
    for var, shape in pairs:
        index = next((i for i, v in enumerate(init) if v is var), None)
        if index is None:
            raise ValueError(f"set_loop_options: the shape invariant for {var!r} does not name a variable that "
                             f"the loop changes ({', '.join(names) or 'none'})")
        inv[index] = shape
    return inv


def _undefined_before(name, where, why):
    return ValueError(with_excerpt(f"'{name}' must be defined before the loop at {_at(where)}: it is a loop "
                                   f"variable (the loop changes it and {why}), and a tensor loop needs its initial "
                                   "value", where))


def _check_defined(init, names, where):
    """The initial values, with a Pending for each variable the loop may define first (its type is learned
    from the body: a return value, or a variable assigned in the body before any use, as TF 2.21 allows)."""
    out = []
    for name, v in zip(names, init):
        if isinstance(v, UndefinedReturnValue) or isinstance(v, Pending) and v.lenient:
            v = Pending(name, lenient=True)
        elif isinstance(v, (Undefined, Pending)):
            v = Pending(name, lenient=False)
        if v is None:
            raise ValueError(with_excerpt(f"'{name}' is not allowed to be None before the loop at {_at(where)}: "
                                          "a tensor loop variable needs an initial tensor value", where))
        out.append(v)
    return tuple(out)


def _first_defined(init, names, loop_local):
    """The variables the loop defines first and that are used after it: a loop that runs no iteration leaves
    them undefined, which TF reports when the function runs."""
    return [n for n, v in zip(names, init) if isinstance(v, Pending) and not v.lenient and n not in loop_local]


def _require_iteration(names):
    """A py_function body raising TF's run-time error when the loop ran no iteration."""
    message = f"loop must iterate at least once to initialize {', '.join(names)}"

    def check(iterated):
        if not bool(iterated):
            raise errors.InvalidArgumentError(message)
        return iterated
    return check


def _staged_loop(test, body, get_state, set_state, names, opts, where, counter=None, loop_local=()):
    """A tensor loop: `while test(): body()`; with `counter=(init, advance)` a hidden first loop variable k,
    `test(k)`, and `advance(k) -> (item, next k)` feeding `body(item)`."""
    init = _check_defined(_get(get_state, names), names, where)
    invariants = _loop_options(opts, init, names)
    first_defined = _first_defined(init, names, loop_local)
    hidden = () if counter is None else (counter[0],)
    n_counter = len(hidden)
    if first_defined:  # a flag set by the body: whether the loop ran at least once
        hidden += (convert_to_tensor(False),)
    h = len(hidden)

    def cond_fn(*vs):
        before = _get(get_state, names)  # restored after: a gradient traces the loop again, later
        set_state(vs[h:])
        try:
            return test(*vs[:n_counter])
        finally:
            set_state(before)

    def body_fn(*vs):
        before = _get(get_state, names)
        set_state(vs[h:])
        if counter is None:
            body()
            nxt = ()
        else:
            item, k = counter[1](vs[0])
            body(item)
            nxt = (k,)
        nxt += (True,) * (h - n_counter)
        out = _get(get_state, names)
        set_state(before)
        for name, v in zip(names, out):
            if isinstance(v, (Undefined, UndefinedReturnValue)):
                raise ValueError(with_excerpt(
                    f"'{name}' must be defined on every path through the loop at {_at(where)}", where))
        return nxt + out

    all_names = ("loop counter",) * n_counter + ("loop iterated",) * (h - n_counter) + _shown(names)
    if invariants is not None:
        invariants = [None] * h + invariants
    try:
        outs = build_while(cond_fn, body_fn, hidden + init, all_names, where, invariants)
    except PendingRead as e:
        if not any(e.pending is v for v in init):
            raise
        raise _undefined_before(e.pending.symbol_name, where, "reads it before assigning it") from None
    for v, out in zip(init, outs[h:]):
        if isinstance(v, Pending) and v.lenient and v.learned is not None:
            _mark_unreturned(out, where)
    if first_defined:
        py_function.py_function(_require_iteration(first_defined), [outs[n_counter]], dtypes.bool)
    set_state(outs[h:])


# --- for --------------------------------------------------------------------------------------------------------

def for_stmt(iter_, extra_test, body, get_state, set_state, names, opts, loop_local=()):
    """`for x in iter_: body(x)`; a tensor (in a trace) is looped over by one scf.while on a counter.

    loop_local: as for while_stmt."""
    where = _where()
    if graph_mod.current() is not None and isinstance(iter_, TensorBase):
        _tensor_for(iter_, extra_test, body, get_state, set_state, names, opts, where, loop_local)
        return
    if graph_mod.current() is not None and hasattr(iter_, "_tfn_staged_iteration"):
        _dataset_for(iter_, extra_test, body, get_state, set_state, names, opts, where, loop_local)
        return
    it = iter(iter_)
    unroll = _Unroll(where)
    while True:
        if extra_test is not None:
            go = extra_test()
            if _staged(go):
                raise NotImplementedError(with_excerpt(
                    f"A `break` or `return` in the Python `for` loop at {_at(where)} depends on a tensor condition; "
                    "a loop over a Python iterable is unrolled while tracing and cannot stop on a run-time value. "
                    "Loop over a tensor or tfn.range instead to make it a tensor loop.", where))
            if not go:
                return
        try:
            item = next(it)
        except StopIteration:
            return
        body(item)
        unroll.count()


def _tensor_for(x, extra_test, body, get_state, set_state, names, opts, where, loop_local):
    """Loop over a tensor's first dimension (or the values of a tfn.range) with a hidden counter."""
    bounds = _range_bounds(x)
    if bounds is not None:
        start, limit, delta = bounds

        step = _known_value(delta)

        def test(v):
            if step is not None:  # the step's sign is known while tracing
                c = math_ops.less(v, limit) if step > 0 else math_ops.greater(v, limit)
            else:
                up = math_ops.logical_and(math_ops.greater(delta, 0), math_ops.less(v, limit))
                down = math_ops.logical_and(math_ops.less(delta, 0), math_ops.greater(v, limit))
                c = math_ops.logical_or(up, down)
            return _and_extra(c, extra_test)
        counter = (_symbolic(start), lambda v: (v, v + delta))
        _staged_loop(test, body, get_state, set_state, names, opts, where, counter, loop_local)
        return
    if x.ndim == 0:
        raise TypeError(with_excerpt(f"Cannot iterate over a scalar tensor (the `for` loop at {_at(where)}).", where))
    x = _symbolic(x)
    n = x._shape[0]
    if n is None:  # counted when the loop runs
        n = shape_ops.shape(x)[0]
    counter = (_symbolic(convert_to_tensor(0)), lambda k: (x[k], k + 1))
    _staged_loop(lambda k: _and_extra(math_ops.less(k, n), extra_test), body, get_state, set_state, names, opts,
                 where, counter, loop_local)


def _dataset_for(ds, extra_test, body, get_state, set_state, names, opts, where, loop_local):
    """Loop over a tfn.data dataset: one scf.while on the dataset's own counter (frontend/data/staging.py)."""
    try:
        k0, has_next, advance = ds._tfn_staged_iteration()
    except (NotImplementedError, ValueError) as e:  # the dataset cannot be looped over here: say where
        raise type(e)(with_excerpt(f"{e}\n  in the `for` loop at {_at(where)}", where)) from None
    _staged_loop(lambda k: _and_extra(has_next(k), extra_test), body, get_state, set_state, names, opts, where,
                 (k0, advance), loop_local)


def _and_extra(c, extra_test):
    if extra_test is None:
        return c
    return math_ops.logical_and(c, extra_test())


def _symbolic(x):
    if isinstance(x, Tensor):
        return graph_mod.current().constant(x)
    return x


def _known_value(t):
    """The value of a scalar tensor known while tracing (eager, or a traced tfn.constant), else None."""
    if isinstance(t, Tensor):
        return t._value.item()
    owner = t._mlir.owner
    if getattr(owner, "name", None) != "tfn.constant":
        return None
    attr = owner.attributes["value"]
    for kind, scalar in ((ir.DenseIntElementsAttr, ir.IntegerAttr), (ir.DenseFPElementsAttr, ir.FloatAttr)):
        try:
            dense = kind(attr)
        except ValueError:  # not this kind of attribute
            continue
        return scalar(dense.get_splat_value()).value if dense.is_splat else None
    return None


def _range_bounds(x):
    """(start, limit, delta) of a tfn.range result: an eager arithmetic progression or a traced tfn.range."""
    if isinstance(x, Tensor):
        v = x._value
        if v.ndim != 1 or v.dtype.kind not in "iu":
            return None
        d = v[1] - v[0] if len(v) > 1 else v.dtype.type(1)
        if len(v) == 0:
            v = np.zeros(1, v.dtype)[:0]
            return (Tensor(np.asarray(0, v.dtype), x.dtype),) * 2 + (Tensor(np.asarray(1, v.dtype), x.dtype),)
        if d == 0 or not np.array_equal(v, v[0] + d * np.arange(len(v), dtype=v.dtype)):
            return None
        return (Tensor(v[:1].reshape(()), x.dtype), Tensor(np.asarray(v[0] + d * len(v), v.dtype), x.dtype),
                Tensor(np.asarray(d, v.dtype), x.dtype))
    owner = x._mlir.owner
    if getattr(owner, "name", None) != "tfn.range":
        return None
    g = graph_mod.current()
    return tuple(SymbolicTensor(o, TensorType.from_mlir(o.type), g, f"{x.name}/{i}")
                 for i, o in enumerate(owner.operands))
