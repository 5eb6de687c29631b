"""Eager tensors (NumPy-backed, immutable), symbolic tensors (an MLIR value in a trace), conversion."""
import numpy as np

from tfn import dtypes
from tfn.core import graph_stack
from tfn.core.api import op_api
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops
from tfn.dialects.errors import OperatorNotAllowedInGraphError


class TensorBase:
    """The operator surface shared by eager and symbolic tensors (each operator is a tfn op, installed by its
    ops module)."""

    __slots__ = ()
    __array_priority__ = 100  # NumPy defers to our operators: np_array + tensor -> tensor

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def shape(self):
        return TensorShape(self._shape)

    def get_shape(self):
        return self.shape

    def __pos__(self):
        return self

    def ref(self):
        """A hashable reference to this very tensor or variable (TF's `Tensor.ref()`); `.deref()` gives it back."""
        return Reference(self)

    experimental_ref = ref

    __hash__ = None  # as TF 2: elementwise `==` makes tensors unhashable (use id() or .ref())
    # The other operators are ops: the modules defining those ops install them here (math_ops: arithmetic,
    # comparisons and logic; linalg_ops: `@`; slicing_ops: `x[key]`), so `import tfn` installs them all.


class Reference:
    """A tensor or variable as a dict key or set member: equal only to a reference to the same object."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        """The referenced tensor or variable."""
        return self._wrapped

    def __eq__(self, other):
        return isinstance(other, Reference) and self._wrapped is other._wrapped

    def __hash__(self):
        return id(self._wrapped)

    def __repr__(self):
        return f"<Reference wrapping {self._wrapped!r}>"


CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class Tensor(TensorBase):
    """An eager tensor: an immutable NumPy array with a dtype and a shape."""

    __slots__ = ("_value", "_dtype", "_shape", "__weakref__")

    def __init__(self, value, dtype=None):
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.as_dtype(value.dtype)
        if not dt.is_string:
            value = np.asarray(value, dtype=dt.np)
            if not value.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
                value = value.copy()
        value.flags.writeable = False
        self._value = value
        self._dtype = dt
        self._shape = value.shape

    @classmethod
    def _trusted(cls, value, dtype):
        """Wrap an array already of `dtype` and C-contiguous (the runtime's outputs) without checks."""
        t = object.__new__(cls)
        t._value = value
        t._dtype = dtype
        t._shape = value.shape
        return t

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        """The full name of the device holding the value (TF's): the host CPU's for a NumPy-backed tensor."""
        return CPU_DEVICE

    backing_device = device

    def numpy(self):
        """The value as a NumPy array (a 0-d value as a NumPy scalar), as TF's `.numpy()`."""
        v = self._value
        return v[()] if v.ndim == 0 else v

    def __array__(self, dtype=None, copy=None):
        return self._value if dtype is None else self._value.astype(dtype)

    def __len__(self):
        if not self._shape:
            raise TypeError("len is not well defined for a rank-0 Tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._shape[0]))

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        if not self._dtype.is_integer or self._value.ndim:
            raise TypeError("Only integer scalar tensors can be converted to an index")
        return int(self._value)

    def _text(self, is_repr):
        if self._dtype.is_string:
            v = self._value
            text = repr(v[()]) if v.ndim == 0 else repr(v) if is_repr else np.array2string(v, separator=" ")
        elif is_repr and self._value.ndim:
            text = repr(self._value)
        else:
            text = str(self._value)
        return text

    def __str__(self):
        text = self._text(False)
        nl = "\n" if "\n" in text else ""
        return f"tfn.Tensor({nl}{text}, shape={self.shape}, dtype={self._dtype.name})"

    def __repr__(self):
        text = self._text(True)
        nl = "\n" if "\n" in text else ""
        return f"<tfn.Tensor: shape={self.shape}, dtype={self._dtype.name}, numpy={nl}{text}>"

    def __reduce__(self):
        return (Tensor, (np.array(self._value), self._dtype.name))


class SymbolicTensor(TensorBase):
    """A tensor inside a trace: an MLIR value with a static type; it has no value until the function runs."""

    __slots__ = ("_ir", "_type", "_dtype", "_shape", "_graph", "_name", "_const", "__weakref__")

    def __init__(self, value, ttype, graph, name):
        self._const = None  # the NumPy value of a traced constant (TF's constant_value), else None
        self._ir = value  # its ir.Value; None while its graph records ops without MLIR (core/graph.py)
        self._type = ttype  # the TensorType ops infer from (never changed, as _dtype and _shape)
        self._dtype = ttype.dtype
        self._shape = ttype.shape
        self._graph = graph
        self._name = name

    @property
    def _mlir(self):
        """Its MLIR value; asking for it builds the MLIR of a trace that records its ops without MLIR."""
        value = self._ir
        if value is None:
            self._graph.materialize()
            value = self._ir
        return value

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        """The device the traced function is placed on ('' when it has no placement), as TF's symbolic tensors."""
        placement = self._graph.placement
        return placement.name if placement is not None else ""

    def __repr__(self):
        return f'Tensor("{self._name}", shape={self.shape}, dtype={self._dtype.name})'

    __str__ = __repr__

    def __bool__(self):
        raise OperatorNotAllowedInGraphError(
            f"Using a symbolic `tfn.Tensor` ({self._name}) as a Python `bool` is not allowed: its value is "
            "only known when the function runs. Use tfn.cond/tfn.where, or let AutoGraph convert the `if`.")

    def __len__(self):
        if self._shape and self._shape[0] is not None:
            return self._shape[0]
        raise TypeError(f"len is not well defined for the symbolic Tensor {self._name} of shape {self.shape}")

    def __iter__(self):
        # as TF, whatever the shape: a Python loop (enumerate, zip, unpacking) cannot run over a graph value; a
        # `for` over the tensor itself is converted by AutoGraph into a tensor loop, tfn.unstack gives its rows
        raise OperatorNotAllowedInGraphError(
            f"Iterating over a symbolic `tfn.Tensor` ({self._name}, shape {self.shape}) is not allowed: use a "
            "`for` loop over the tensor itself (AutoGraph makes it a tensor loop) or tfn.unstack.")

    def __index__(self):
        raise TypeError(f"The symbolic Tensor {self._name} cannot be used as a Python index")
    # No numpy(): as TF, `t.numpy()` raises AttributeError: 'SymbolicTensor' object has no attribute 'numpy'.


def is_tensor(x):
    return isinstance(x, TensorBase)


def _infer_python_dtype(value):
    arr = np.asarray(value)
    if arr.dtype.kind == "O" and arr.size and all(type(v) is int for v in arr.flat):
        big = max(arr.flat, key=abs)  # NumPy keeps ints past int64 as objects
        raise OverflowError(f"Python integer {big} out of bounds for int64")
    if arr.dtype.kind in "SUO":
        return dtypes.string, arr
    if arr.dtype == np.float64 and not isinstance(value, np.ndarray) and not isinstance(value, np.floating):
        return dtypes.float32, arr
    if arr.dtype == np.int64 and not isinstance(value, np.ndarray) and not isinstance(value, np.integer):
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return dtypes.int64, arr
        return dtypes.int32, arr
    return dtypes.as_dtype(arr.dtype), arr


def _to_bytes(s, value):
    if isinstance(s, str):
        return s.encode()
    if isinstance(s, (bytes, np.bytes_)):
        return bytes(s)
    raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")


def _string_array(value):
    """An object array of bytes; only str and bytes elements convert (never bytes(n) of a number)."""
    arr = np.asarray(value, dtype=object)
    enc = np.frompyfunc(lambda s: _to_bytes(s, value), 1, 1)
    return np.asarray(enc(arr), dtype=object).reshape(arr.shape) if arr.size else arr


def _check_python_ints(arr, dt):
    """Python ints that do not fit the dtype raise OverflowError, as in a tf.function (NumPy arrays are cast as
    they are, wrapping, as TF casts them)."""
    if not arr.size:
        return
    info = np.iinfo(dt.np)
    low, high = int(min(arr.flat)), int(max(arr.flat))
    bad = low if low < info.min else high if high > info.max else None
    if bad is not None:
        raise OverflowError(f"Python integer {bad} out of bounds for {dt.name}")


def convert_to_numpy(value, dtype=None):
    """(ndarray, DType) for a Python/NumPy value, by TF's rules (float -> float32, int -> int32)."""
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
        if dt.is_string:
            return _string_array(value), dt
        arr = np.asarray(value)
        if dt.is_integer and arr.dtype.kind == "O" and arr.size and all(type(v) is int for v in arr.flat):
            _check_python_ints(arr, dt)
        if arr.dtype.kind in "SUO":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dt.name}")
        if arr.dtype.kind == "f" and not dt.is_floating and arr.size and not np.all(np.isfinite(arr) &
                                                                                  (arr == np.trunc(arr))):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dt.name}")
        if arr.dtype.kind == "b" and not dt.is_bool:
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dt.name}")
        if dt.is_integer and arr.dtype.kind in "iu" and not isinstance(value, (np.ndarray, np.generic)):
            _check_python_ints(arr, dt)
        with np.errstate(all="ignore"):
            return arr.astype(dt.np), dt
    dt, arr = _infer_python_dtype(value)
    if dt.is_string:
        return _string_array(value), dt
    return arr.astype(dt.np, copy=False), dt


def known(x):
    """x, or where x is a traced tensor whose value is known while tracing (TF's `constant_value`: a constant,
    or an op on known values) that value as an eager tensor; lists and tuples item by item. For arguments that
    must be known when a function is traced (shapes, axes, paddings, static indices)."""
    if type(x) is SymbolicTensor:
        return x if x._const is None else Tensor._trusted(x._const, x._dtype)
    if type(x) is list or type(x) is tuple:
        return type(x)(known(v) for v in x)
    return x


@op_api(ops.constant, exports=("constant",))
def constant(value, dtype=None, shape=None, name=None):
    """A tensor from a Python or NumPy value (`tf.constant`): eager, or inside a trace a constant of the graph."""
    t = eager_constant(value, dtype, shape)
    if type(t) is Tensor:
        g = graph_stack.current()
        if g is not None:
            s = g.as_symbolic(t)
            s._const = t._value
            return s
    return t


def eager_constant(value, dtype=None, shape=None):
    """An eager tensor from a Python or NumPy value (a symbolic tensor passes through)."""
    if isinstance(value, TensorBase) and type(value) is not Tensor and type(value) is not SymbolicTensor:
        value = value._as_tensor()  # a variable: its current value (symbolic in a trace)
    if isinstance(value, Tensor) and dtype is None and shape is None:
        return value
    if isinstance(value, SymbolicTensor):
        if shape is not None or (dtype is not None and dtypes.as_dtype(dtype) is not value.dtype):
            raise TypeError(f"tfn.constant cannot change the dtype or shape of the symbolic tensor {value!r}; "
                            "use tfn.cast or tfn.reshape")
        return value
    if isinstance(value, TensorBase):
        value = np.asarray(value)
    arr, dt = convert_to_numpy(value, dtype)
    if shape is not None:
        shape = tuple(shape)
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif int(np.prod(shape)) == arr.size:
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Expected Tensor's shape: {shape}, but got {arr.shape}.")
    if isinstance(value, np.ndarray) and np.may_share_memory(arr, value):
        arr = arr.copy()  # the tensor is immutable; the caller's array stays theirs (TF copies too)
    return Tensor(arr, dt)


# (type, value, DType) -> the eager tensor of a Python number as that dtype: `x * 0.5` in a loop being traced
# converts the same literal each time, and conversion by NumPy's rules costs as much as emitting the op.
_NUMBERS = {}
_NUMBERS_KEPT = 512
_NUMBER_TYPES = (float, int, bool)


def number_constant(value, dtype):
    """`constant(value, dtype)` of a Python number (float, int or bool) and a DType, its eager tensor made once."""
    key = (type(value), value, dtype) if value else (type(value), str(value), dtype)  # (0.0 == -0.0)
    t = _NUMBERS.get(key)
    if t is None:
        t = eager_constant(value, dtype)
        if value == value:  # (NaN keys never match)
            if len(_NUMBERS) >= _NUMBERS_KEPT:
                _NUMBERS.clear()
            _NUMBERS[key] = t
    g = graph_stack.current()
    if g is None:
        return t
    return g.constant(t)  # (as_symbolic's choice for a scalar; it knows its value, as constant()'s do)


def convert_to_tensor(value, dtype=None, name=None):
    """A tensor (eager or symbolic) from a tensor or a Python value; checks the dtype if given."""
    if isinstance(value, TensorBase):
        if type(value) is not Tensor and type(value) is not SymbolicTensor:  # a variable: its current value
            return value._as_tensor(dtype)
        if dtype is not None and value.dtype is not dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    if hasattr(value, "_as_tensor"):
        return value._as_tensor(dtype)
    if isinstance(value, (list, tuple)) and _first_symbolic(value) is not None:
        return _autopack(value, dtype)
    return constant(value, dtype)


def _first_symbolic(value):
    """The first symbolic tensor in nested lists/tuples, or None."""
    for v in value:
        if isinstance(v, SymbolicTensor):
            return v
        if isinstance(v, (list, tuple)):
            found = _first_symbolic(v)
            if found is not None:
                return found
    return None


# tf.stack, installed by tfn.ops.array_ops (the ops build on this module): packs lists holding symbolic tensors
STACK = []


def _autopack(value, dtype):
    """A nested list holding symbolic tensors as one tensor (TF packs it with tf.stack), of the tensors' dtype."""
    dtype = dtype if dtype is not None else _first_symbolic(value).dtype
    return STACK[0]([_autopack(v, dtype) if isinstance(v, (list, tuple)) and _first_symbolic(v) is not None
                     else convert_to_tensor(v, dtype) for v in value])
