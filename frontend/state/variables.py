"""`tfn.Variable` and `tfn.init_scope`: mutable state, functionalised inside traces.

Eagerly a variable holds a read-only NumPy array that each write replaces (so a value read earlier never
changes). Inside a trace (DESIGN §4) its current value is an SSA value in `graph.state[variable]`: the first
read captures the variable as an extra function input, each write replaces the state, and every variable
whose state changed leaves the function as an extra result that the runtime writes back after the call.
Program order is therefore data order.

Updates are atomic, as TF's resource variables: each variable has a lock, held by an eager read-modify-write
(`assign_add`) and by a compiled call that writes it, from reading its value until its new value is written back.
"""
import contextlib
import functools
import itertools
import threading

import numpy as np

from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core import graph_stack
from tfn.core.tensor import CPU_DEVICE, SymbolicTensor, Tensor, TensorBase, convert_to_tensor
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.errors import FailedPreconditionError, InvalidArgumentError
from tfn.dialects.locations import with_excerpt
from tfn.dialects.types import TensorType
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import record_read
from tfn.tracing.trace import TraceType

SINGLETON_MESSAGE = (
    "tfn.function only supports singleton tfn.Variables created on the first call. Make sure the tfn.Variable "
    "is only created once or created outside tfn.function. See "
    "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.")
_uids = itertools.count(1)


@contextlib.contextmanager
def init_scope():
    """Run the body eagerly, lifted out of any trace in progress (`tf.init_scope`): it runs once, when traced."""
    graph_stack.push(None)  # graph.current() is None: ops run eagerly, variables are read and written directly
    try:
        yield
    finally:
        graph_stack.pop()


# fn(initial value: ndarray) -> ndarray, applied in order to the initial value of each variable created eagerly
CREATION_HOOKS = []


class Variable(TensorBase):
    """A mutable tensor (`tf.Variable`) with a fixed dtype and shape; usable wherever a tensor is."""

    _shape = ()
    _dtype = None

    def __init__(self, initial_value=None, trainable=None, validate_shape=True, caching_device=None, name=None,
                 dtype=None, shape=None, constraint=None):
        g = graph_mod.current()
        if g is not None and not g.variable_creation:
            raise _in_user_code(ValueError(SINGLETON_MESSAGE), g)
        if initial_value is None:
            raise ValueError("The initial value must be specified.")
        if callable(initial_value):
            with init_scope():
                initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype)
        self._dtype = value.dtype
        self._shape = _declared_shape(value, shape, validate_shape)
        self._trainable = True if trainable is None else bool(trainable)
        self._name = f"{name or 'Variable'}:0"
        self._uid = next(_uids)
        self._lock = threading.RLock()  # reentrant: a py_function in a call holding it may update the variable
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable. Received: {constraint!r}")
        self._constraint = constraint  # what an optimizer step applies to the new value (Keras's)
        self._array = None  # None until initialised (an initial value computed inside a trace is written back)
        if isinstance(value, SymbolicTensor):  # depends on the trace: the trace's value, written back by its call
            g.state[self] = value
        else:
            array = value._value
            for hook in CREATION_HOOKS:  # e.g. tfn.distribute's scope: every replica takes replica 0's value
                array = hook(array)
            self._array = _frozen(array)
        if g is not None:
            g.created_variables.append(self)

    # --- properties -------------------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def device(self):
        """Where the variable's value lives (TF's): the host CPU, whatever the device scope it was made in —
        functions placed on a GPU copy it there when they read it (counted) and write it back."""
        return CPU_DEVICE

    @property
    def constraint(self):
        """The function an optimizer applies to the value after each update, or None."""
        return getattr(self, "_constraint", None)

    @property
    def trainable(self):
        return self._trainable

    def __hash__(self):  # by identity: variables key graph.state and the trace cache
        return id(self)

    def __tf_tracing_type__(self, context):
        return VariableSpec(self)

    def __getstate__(self):  # copies and pickles get a lock of their own
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # --- reads ------------------------------------------------------------------------------------------
    def value(self):
        """The current value: an eager tensor, or inside a trace the symbolic value at this program point."""
        g = graph_mod.current()
        if g is None:
            t = Tensor._trusted(self._current_array(), self._dtype)
        else:
            t = g.read_state(self)
        if _TAPES:
            t = self._recorded_read(g, t)
        return t

    def _recorded_read(self, g, t):
        """The value read as a tensor of its own, which tapes that watch this variable trace back to it."""
        if g is not None:  # a distinct tensor for this read: the state value may be an earlier write's result
            t = g.wrap(t._mlir, t._type, t._name)
        record_read(self, t)
        return t

    read_value = value

    def _as_tensor(self, dtype=None):
        if dtype is not None and dtypes.as_dtype(dtype) is not self._dtype:
            raise ValueError(f"Incompatible type conversion requested to type {dtypes.as_dtype(dtype).name} for "
                             f"variable of type {self._dtype.name} (Variable: {self!r}).")
        return self.value()

    def numpy(self):
        """The current value as a NumPy array (a 0-d value as a NumPy scalar), eagerly only."""
        return self._eager_value("numpy()").numpy()

    def __array__(self, dtype=None, copy=None):
        arr = self._eager_value("__array__")._value
        return arr if dtype is None else arr.astype(dtype)

    def _eager_value(self, what):
        if graph_mod.current() is not None:
            raise NotImplementedError(f"{what} is only available when eager execution is enabled; inside a "
                                      f"tfn.function read {self._name} as a tensor instead")
        return self.value()

    def _current_array(self):
        """The eager value's array; the capture source of a trace that reads this variable."""
        arr = self._array
        if arr is None:
            raise FailedPreconditionError(f"Could not read variable {self._name}: it is uninitialized (its initial "
                                          "value is computed by the tfn.function that created it, which has not "
                                          "run yet)")
        return arr

    def _initial_state(self, g):
        """The variable's value at the start of a call of the function `g` traces: a captured input."""
        return g.capture(self, TensorType(self._shape, self._dtype), self._name.rpartition(":")[0],
                         VariableSpec(self))

    def __bool__(self):
        return bool(self.value())

    def __float__(self):
        return float(self.value())

    def __int__(self):
        return int(self.value())

    def __index__(self):
        return self.value().__index__()

    def __len__(self):
        return len(self.value())

    def __iter__(self):
        return iter(self.value())

    # --- writes -----------------------------------------------------------------------------------------
    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Set the value (same dtype, compatible shape); returns the new value."""
        g = graph_mod.current()
        new = self._checked(value, g)
        if g is None:
            with self._lock:
                self._array = _frozen(new._value)
        else:
            g.state[self] = new = g.as_symbolic(new)
        return new if read_value else None

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Add `delta` to the value (atomically); returns the new value."""
        with self._eager_lock():
            return self.assign(self.value() + self._delta(delta), read_value=read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        """Subtract `delta` from the value (atomically); returns the new value."""
        with self._eager_lock():
            return self.assign(self.value() - self._delta(delta), read_value=read_value)

    def _eager_lock(self):
        """The variable's lock when the update runs eagerly; none while tracing, where the update is symbolic (the
        call of the trace takes the lock) and the tracing thread, holding the trace lock, must not wait for a call
        that holds this lock and whose py_function is waiting to trace."""
        return self._lock if graph_mod.current() is None else contextlib.nullcontext()

    def _delta(self, delta):
        try:
            return convert_to_tensor(delta, self._dtype)
        except (TypeError, ValueError) as e:
            raise _in_user_code(e, graph_mod.current()) from None

    def _checked(self, value, g):
        """`value` as a tensor of this variable's dtype and a compatible shape (TF's errors otherwise)."""
        try:
            new = convert_to_tensor(value, self._dtype)
        except (TypeError, ValueError) as e:
            raise _in_user_code(e, g) from None
        if g is None and isinstance(new, SymbolicTensor):
            raise TypeError(f"{new!r} is out of scope and cannot be assigned to {self._name} here: it belongs to "
                            f"the trace of '{new.graph.name}'. Use the function's return values instead.")
        if not _compatible(new._shape, self._shape):  # a dimension unknown until run time is checked then
            raise _in_user_code(ValueError(
                f"Cannot assign value to variable '{self._name}': Shape mismatch. The variable shape "
                f"{TensorShape(self._shape)}, and the assigned value shape {new.shape} are incompatible."), g)
        return new

    def _write_back(self, array):
        """Store a compiled call's new value (the runtime's result array, of a shape checked at trace time)."""
        array.flags.writeable = False
        self._array = array

    def _write_back_checked(self, fname, array):
        """Store a compiled call's new value whose shape was not known at trace time, checking it first."""
        if not fits(array.shape, self._shape):
            raise InvalidArgumentError(f"Cannot assign value to variable '{self._name}': Shape mismatch. The "
                                       f"variable shape {TensorShape(self._shape)}, and the assigned value shape "
                                       f"{TensorShape(array.shape)} are incompatible.\n  in tfn.function '{fname}'")
        self._write_back(array)

    # --- printing ---------------------------------------------------------------------------------------
    def __repr__(self):
        head = f"<tfn.Variable '{self._name}' shape={TensorShape(self._shape)} dtype={self._dtype.name}"
        if graph_mod.current() is not None or self._array is None:
            return head + ">"
        text = Tensor._trusted(self._array, self._dtype)._text(True)
        return f"{head}, numpy={chr(10) if chr(10) in text else ''}{text}>"

    __str__ = __repr__


def restored(array, shape, trainable, name):
    """A variable holding `array` as read from a saved model (a fresh array it owns from now on, made read-only:
    no conversion, no copy); `shape` its declared shape (None for an unknown dimension)."""
    v = Variable.__new__(Variable)
    v._dtype = dtypes.as_dtype(array.dtype)
    v._shape = tuple(shape)
    v._trainable = bool(trainable)
    v._name = f"{name}:0"
    v._uid = next(_uids)
    v._lock = threading.RLock()
    array.flags.writeable = False
    v._array = array
    return v


class VariableSpec(TraceType):
    """The trace type of a variable argument: that very variable (TF's type includes its resource id)."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def is_subtype_of(self, other):
        return type(other) is VariableSpec and other.variable is self.variable

    def most_specific_common_supertype(self, others):
        return self if all(self.is_subtype_of(o) for o in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.variable  # the trace reads it like a captured variable

    def __eq__(self, other):
        return type(other) is VariableSpec and other.variable is self.variable

    def __hash__(self):
        return id(self.variable)

    def __repr__(self):
        v = self.variable
        return (f"VariableSpec(shape={TensorShape(v._shape)}, dtype={v._dtype!r}, trainable={v._trainable}, "
                f"alias_id={v._uid})")


def _declared_shape(value, shape, validate_shape):
    """The variable's shape: `shape` if given (None dims accept any size), else the initial value's."""
    dims = tuple(value.shape.as_list())
    if not validate_shape:
        return (None,) * len(dims)
    if shape is None:
        return dims
    declared = TensorShape(shape)
    if declared.rank is None:
        return (None,) * len(dims)
    declared = tuple(declared.as_list())
    if not fits(dims, declared):
        raise ValueError(f"The initial value's shape ({TensorShape(dims)}) is not compatible with the explicitly "
                         f"supplied `shape` argument ({TensorShape(declared)}).")
    return declared


def fits(dims, declared):
    return len(dims) == len(declared) and all(d is None or c == d for c, d in zip(dims, declared))


def _compatible(dims, declared):
    return len(dims) == len(declared) and all(c is None or d is None or c == d for c, d in zip(dims, declared))


def _frozen(array):
    """A read-only C-contiguous copy owned by the variable (the caller's array may change later)."""
    arr = np.array(array, copy=True, order="C")
    arr.flags.writeable = False
    return arr


def _in_user_code(error, g):
    """`error` with the user's file:line (and the traced function) and the excerpt of the user's code appended."""
    at = graph_mod.user_position()
    if at is None:
        return error
    where = f"\n  in tfn.function '{g.name}' at " if g is not None else "\n  at "
    try:
        return type(error)(with_excerpt(f"{error.args[0] if error.args else error}{where}{at[0]}:{at[1]}", at))
    except TypeError:
        return error


def read_outputs(outputs):
    """The function's outputs with each variable replaced by its current value (a trace returns tensors)."""
    leaves = nest.flatten(outputs)
    if not any(isinstance(x, Variable) for x in leaves):
        return outputs
    return nest.pack_sequence_as(outputs, [x.value() if isinstance(x, Variable) else x for x in leaves])


def written_state(g):
    """The final values of the variables the trace changed (extra results); their setters go to g.writebacks."""
    results = []
    for key, value in g.state.items():
        if not isinstance(key, Variable) or value is g.captured_input(key):
            continue
        results.append(value)
        # assign checked the static shape; a dimension known only at run time is checked when written back
        static = all(d is None or v is not None for v, d in zip(value._shape, key._shape))
        g.writebacks.append(key._write_back if static else functools.partial(key._write_back_checked, g.name))
    return results


class StateLock:
    """The locks of the variables a traced function writes, taken in a fixed order (no two calls deadlock)."""

    __slots__ = ("_locks",)

    def __init__(self, g):
        written = [v for v, value in g.state.items() if isinstance(v, Variable) and value is not g.captured_input(v)]
        self._locks = [v._lock for v in sorted(written, key=lambda v: v._uid)]

    def __enter__(self):
        for lock in self._locks:
            lock.acquire()

    def __exit__(self, *exc):
        for lock in reversed(self._locks):
            lock.release()


def capture_sources(g):
    """Per captured input of `g`, in input order, a zero-argument callable returning its current array."""
    return [src._current_array if isinstance(src, Variable) else _constant_source(src) for src, _, _ in g.captures]


def _constant_source(tensor):
    arr = tensor._value
    return lambda: arr


def capture_types(g):
    """[(id of a captured value, its trace type)] of a trace, in the order capture_lines lists them."""
    return list(_captured(g))


def _captured(g):
    created = {id(v) for v in g.created_variables}  # (by identity: `in` would compare tensors elementwise)
    listed = [(src, spec) for src, _, spec in g.captures]
    listed += [(v, VariableSpec(v)) for v in g.state  # variables written but never read: no input, still state
               if isinstance(v, Variable) and g.captured_input(v) is None and id(v) not in created]
    return [(id(src), spec) for src, spec in listed]


def capture_lines(g):
    """The "Captures:" lines of a concrete function's signature, as TF prints them (`id: type`)."""
    listed = _captured(g)
    if not listed:
        return ["  None"]
    return [f"  {key}: {spec!r}" for key, spec in listed]



def traced_again(second, first):
    """The trace to keep, `second`; it runs `first` on its first call when `first` computes initial values."""
    # TF's conditional initialisation: initial values that depend on the arguments are written back by that call
    if all(v._array is not None for v in first.graph.created_variables):
        return second
    if _leaf_kinds(first) != _leaf_kinds(second):
        raise ValueError(f"tfn.function '{second.name}' returns differently structured outputs on the trace that "
                         "creates its variables and on later traces; return the same tensors on both")
    second._initializer = first
    return second


def _leaf_kinds(concrete):
    return [(kind, v if kind == "result" else None) for kind, v in concrete._out_leaves]
