"""Run one op of the table: eagerly through its NumPy kernel, or into the current trace."""
import numpy as np

from tfn import dtypes
from tfn.core import device_scope, device_tensor, leaks
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, number_constant
from tfn.dialects import ops, optable
from tfn.dialects.errors import OpError, ResourceExhaustedError
from tfn.dialects.locations import with_excerpt
from tfn.dialects.types import TensorType, check_memory, oom_message
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import record_op
from tfn.state.variables import Variable


def _check_scope(t, g):
    if t._graph is not g:
        raise leaks.out_of_scope(t)


def apply(op, inputs, attrs=None):
    """Apply an op (its OpDef, or its name) to tensors; returns one tensor, or a list when it has several results."""
    opdef = op if isinstance(op, optable.OpDef) else optable.OPS[op]
    attrs = attrs or {}
    g = graph_mod.current()
    for x in inputs:
        if isinstance(x, Variable):  # read variables in program order
            inputs = [x.value() if isinstance(x, Variable) else x for x in inputs]
            break
    if g is not None:  # inside a trace every op is a graph value, even on constants (folded by the compiler)
        return _apply_symbolic(g, opdef, inputs, attrs)
    for x in inputs:
        if isinstance(x, SymbolicTensor):
            _check_scope(x, g)  # a tensor of a trace used eagerly (outside it, or in tfn.init_scope)
    if device_scope.OPEN[0] and device_scope.current() is not None:
        placed = _placed(opdef, inputs)
        if placed is not None:
            return placed
    types = [TensorType(x._shape, x._dtype) for x in inputs]
    out_types = opdef.infer_types(types, attrs)
    for t in out_types:
        check_memory(t)
    try:
        arrays = opdef.run_kernel([x._value for x in inputs], attrs)
    except MemoryError:  # a result (or a temporary) larger than the memory left: TF's OOM error
        raise ResourceExhaustedError(oom_message(out_types[0].shape, out_types[0].dtype) +
                                     f" [Op:{opdef.tf_name}]") from None
    outs = [Tensor(optable.numpy_result(a, t), t.dtype) for a, t in zip(arrays, out_types)]
    if _TAPES:  # (the only cost of gradients when no tape records)
        record_op(opdef, inputs, attrs, outs)
    return outs if opdef.results != 1 else outs[0]


def _placed(opdef, inputs):
    """An eager op under a device scope: `identity` under a GPU scope copies its input to that GPU (TF's way to move
    a tensor); any other op runs on the CPU, or raises under hard placement (core/device_scope.py)."""
    spec = device_scope.current()
    if opdef is ops.identity and spec[0] == "GPU" and not inputs[0]._dtype.is_string:
        placed = device_scope.resolve(spec, f"Op:{opdef.tf_name}")
        if placed.is_gpu:
            out = device_tensor.copy_to(inputs[0], placed)
            if _TAPES:
                record_op(opdef, inputs, {}, [out])
            return out
    device_scope.eager_op_device(opdef)
    return None


def _apply_symbolic(g, opdef, inputs, attrs):
    values, types = [], []
    for x in inputs:
        if type(x) is not SymbolicTensor:
            x = g.as_symbolic(x)
        elif x._graph is not g:
            raise leaks.out_of_scope(x)
        values.append(x)
        types.append(x._type)
    out_types = None
    if not attrs and len(types) == 2:  # a binary op without attributes: its types inferred before, mostly
        a, b = types
        key = (opdef, id(a), id(b))
        known = _INFERRED.get(key)
        if known is not None and known[0] is a and known[1] is b:
            out_types = known[2]
    if out_types is None:
        try:
            out_types = opdef.infer_types(types, attrs)
            for t in out_types:
                check_memory(t)
        except (OpError, ValueError, TypeError) as e:
            raise _with_user_line(e, g) from None
        if not attrs and len(types) == 2:
            if len(_INFERRED) >= _INFERRED_KEPT:
                _INFERRED.clear()
            _INFERRED[key] = (a, b, out_types)
    outs = g.emit(opdef, values, attrs, out_types)
    if values and _all_known(values) and opdef is not _PRINT:
        _propagate_known(opdef, values, attrs, out_types, outs)
    elif opdef is _SHAPE and None not in values[0]._shape:  # a static shape is known (TF's constant_value too)
        outs[0]._const = np.asarray(values[0]._shape, attrs["out_type"].np)
    if _TAPES:
        record_op(opdef, inputs, attrs, outs)
    return outs if opdef.results != 1 else outs[0]


# (OpDef, id of each operand's TensorType) -> (those types, the result types): a type rule is a function of the
# types (and attributes, here none), and a traced chain of `x * 2.0` asks it the same question again and again.
_INFERRED = {}
_INFERRED_KEPT = 4096


def _all_known(values):
    for v in values:
        if v._const is None:
            return False
    return True


_PRINT = optable.OPS["print"]
_SHAPE = optable.OPS["shape"]
_KNOWN_LIMIT = 1024  # elements: larger results of known values are left to the compiler's folding


def _propagate_known(opdef, values, attrs, out_types, outs):
    """Results of an op on values known while tracing are known too (TF's shape inference evaluates such small
    constant subgraphs): they stay graph values; shape and axis arguments read them (`tensor.known`)."""
    for t in out_types:
        if None in t.shape or int(np.prod(t.shape)) > _KNOWN_LIMIT:
            return
    try:
        arrays = opdef.run_kernel([v._const for v in values], attrs)
    except Exception:  # noqa: BLE001  (an op that fails on these values fails when the function runs, as in TF)
        return
    for o, a, t in zip(outs, arrays, out_types):
        o._const = optable.numpy_result(a, t)


def _with_user_line(error, g):
    """The same error with the user's file:line, the traced function and the excerpt of the user's code."""
    at = graph_mod.user_position()
    if at is None:
        return error
    where = f"\n  in tfn.function '{g.name}' at {at[0]}:{at[1]}"
    args = (with_excerpt(str(error.args[0] if error.args else error) + where, at),)
    if isinstance(error, OpError):
        return type(error)(args[0], error.node_def, error.op)
    try:
        return type(error)(*args)
    except TypeError:
        return error


def tensors(*values, dtype_from=None):
    """Convert op inputs: tensors pass through; Python values take the dtype of the first tensor."""
    if dtype_from is None and len(values) == 2:  # a binary op on tensors, or on a tensor and a Python number
        x, y = values
        if isinstance(x, TensorBase):
            if isinstance(y, TensorBase):
                return [x, y]
            if type(y) in _NUMBER_TYPES:
                return [x, _convert_literal(y, x.dtype)]
        elif type(x) in _NUMBER_TYPES and isinstance(y, TensorBase):
            return [_convert_literal(x, y.dtype), y]
    ref = next((v for v in values if isinstance(v, TensorBase)), None)
    dtype = ref.dtype if ref is not None and dtype_from is None else dtype_from
    if dtype is None:  # as TF's op wrappers: the first NumPy array fixes the dtype the Python literals take
        arr = next((v for v in values if isinstance(v, np.ndarray) and v.dtype.kind in "biuf"), None)
        dtype = None if arr is None else dtypes.as_dtype(arr.dtype)
    out = []
    for v in values:
        if isinstance(v, TensorBase):
            out.append(v)
        elif isinstance(v, np.ndarray) and dtype is not None and dtypes_differ(v, dtype):
            out.append(convert_to_tensor(v))
        else:
            out.append(_convert_literal(v, dtype))
    return out


def _convert_literal(value, dtype):
    try:
        if dtype is not None and type(value) in _NUMBER_TYPES:
            return number_constant(value, dtype)
        return convert_to_tensor(value, dtype)
    except OverflowError as e:  # a Python int that does not fit the other operand's dtype: name the user's line
        g = graph_mod.current()
        raise (e if g is None else _with_user_line(e, g)) from None


_NUMBER_TYPES = (float, int, bool)


def dtypes_differ(arr, dtype):
    return arr.dtype != dtype.np
