"""`tfn.py_function`: run a Python function on eager tensors, also from compiled code at every call.

In a trace the call becomes `func.call @py_function_<site>` of a private declaration carrying `tfn.site` (its
operands and results have mixed types, which an IRDL variadic group cannot hold); tfn-to-linalg lowers it to a
run-time callback (passes/lowering/callbacks.py). A result's shape is unknown until the function runs: the trace
gives it the rank of the largest input with every dimension dynamic, unless Tout names a tfn.TensorSpec.
"""
import functools

from mlir import ir
from mlir.dialects import func as func_d

from tfn import dtypes
from tfn.core import graph as graph_mod
from tfn.core.tensor import Tensor, convert_to_tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.abi import declare_site
from tfn.dialects.types import TensorType
from tfn.state.variables import Variable


def _specs(Tout):
    """(list of TensorSpec or DType per result, whether Tout named a single result)."""
    if Tout is None:
        return [], False
    if isinstance(Tout, (list, tuple)):
        return [t if isinstance(t, TensorSpec) else dtypes.as_dtype(t) for t in Tout], False
    return [Tout if isinstance(Tout, TensorSpec) else dtypes.as_dtype(Tout)], True


def _as_results(value, specs, single, fname):
    """The function's return value as one tensor per spec, converted to the spec's dtype."""
    if not specs:
        return []
    values = [value] if single or (len(specs) == 1 and not isinstance(value, (list, tuple))) else list(value)
    if len(values) != len(specs):
        raise ValueError(f"py_function {fname} returned {len(values)} values, but Tout lists {len(specs)}")
    return [convert_to_tensor(v, s.dtype if isinstance(s, TensorSpec) else s) for v, s in zip(values, specs)]


def _out_type(spec, rank):
    if isinstance(spec, TensorSpec) and spec.shape.rank is not None:
        return TensorType(tuple(spec.shape), spec.dtype)
    return TensorType((None,) * rank, spec.dtype if isinstance(spec, TensorSpec) else spec)


def py_function(func=None, inp=None, Tout=None, name=None):
    """Wrap a Python function as an op (`tf.py_function`); with only Tout given, a decorator."""
    if func is None:
        return lambda f: _decorated(f, Tout, name)
    specs, single = _specs(Tout)
    inputs = [x.value() if isinstance(x, Variable) else convert_to_tensor(x) for x in (inp or [])]
    fname = getattr(func, "__name__", "function")
    g = graph_mod.current()
    if g is None:
        results = _as_results(func(*inputs), specs, single, fname)
    else:
        results = _trace(g, func, fname, inputs, specs, single)
    if single:
        return results[0]
    return None if Tout is None else results


def _decorated(f, Tout, name):
    @functools.wraps(f)
    def wrapper(*args):
        return py_function(f, list(args), Tout, name)
    return wrapper


def _trace(g, func, fname, inputs, specs, single):
    """Emit the call of a new callback site running `func` on the inputs' values; returns its results."""
    values = [g.as_symbolic(x) for x in inputs]
    g.check_accessible(values)
    in_types = [TensorType(x._shape, x._dtype) for x in values]
    rank = max((t.rank for t in in_types), default=0)
    out_types = [_out_type(s, rank) for s in specs]
    site = len(g.callbacks)

    def handler(arrays):
        args = [Tensor(a, t.dtype) for a, t in zip(arrays, in_types)]
        return [t._value for t in _as_results(func(*args), specs, single, fname)]

    g.callbacks.append(handler)
    with g.location():
        decl = declare_site(g.module, f"py_function_{site}", site, in_types, out_types)
        call = func_d.CallOp([t.to_mlir() for t in out_types], ir.FlatSymbolRefAttr.get(decl.name.value),
                             [v._mlir for v in values], ip=g.ip)
    name = g.unique_name("py_function")
    return [g.wrap(r, t, f"{name}:{i}") for i, (r, t) in enumerate(zip(call.results, out_types))]

