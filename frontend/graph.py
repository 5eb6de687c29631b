"""A trace in progress: a `func.func` in the tfn dialect that ops append to, with user source locations."""
import os
import re
import sys
import threading

from mlir import ir
from mlir.dialects import func

import tfn.dialects
import tfn.passes
import tfn.runtime
from tfn.dialects import attrs as attr_codec
from tfn.dialects import context, optable
from tfn.dialects.types import TensorType
from tfn.tensor import SymbolicTensor

# tfn's own source folders, wherever the package is installed; frames there are internal.
_TFN_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                  for m in (sys.modules["tfn"], tfn.dialects, tfn.passes, tfn.runtime))
_state = threading.local()


def current():
    """The innermost graph being traced on this thread, or None when executing eagerly."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def user_frame():
    """The innermost stack frame outside tfn's own source (the user's line)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_TFN_DIRS):
        f = f.f_back
    return f


class FuncGraph:
    """Builds one traced function. Use as a context manager while the Python function runs."""

    def __init__(self, name):
        self.name = name
        # The symbol is prefixed so a function named like a C library function (tanh, exp) never
        # interposes that function in the process.
        self.symbol = "__inference_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
        self.ctx = context.shared_context()
        self._names = {}
        self.inputs = []
        self.closed = False
        with self.ctx, ir.Location.unknown():
            self.module = ir.Module.create()
            with ir.InsertionPoint(self.module.body):
                self.func = func.FuncOp(self.symbol, ir.FunctionType.get([], []))
            self.func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            self.block = self.func.add_entry_block()
        self.ip = ir.InsertionPoint(self.block)

    def __enter__(self):
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self)
        self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self.ctx.__exit__(*exc)
        _state.stack.pop()
        return False

    def unique_name(self, base):
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def location(self):
        f = user_frame()
        if f is None:
            return ir.Location.unknown()
        return ir.Location.file(f.f_code.co_filename, f.f_lineno, 1)

    def add_input(self, ttype, name):
        """A new function argument of a tfn tensor type; returns its symbolic tensor."""
        arg = self.block.add_argument(ttype.to_mlir(), ir.Location.unknown())
        t = SymbolicTensor(arg, ttype, self, f"{self.unique_name(name)}:0")
        self.inputs.append(t)
        return t

    def emit(self, opdef, operands, attr_values, result_types):
        """Append one tfn op; returns its results as symbolic tensors."""
        attributes = {n: attr_codec.to_mlir(k, attr_values.get(n)) for n, k in opdef.attrs.items()}
        op = ir.Operation.create(opdef.full_name, results=[t.to_mlir() for t in result_types],
                                 operands=[o._mlir for o in operands], attributes=attributes,
                                 loc=self.location(), ip=self.ip)
        name = self.unique_name(opdef.name)
        return [SymbolicTensor(r, t, self, f"{name}:{i}") for i, (r, t) in enumerate(zip(op.results, result_types))]

    def constant(self, tensor):
        """Embed an eager tensor's value as a tfn.constant."""
        tt = TensorType(tensor.shape, tensor.dtype)
        return self.emit(optable.OPS["constant"], [], {"value": (tensor._value, tt)}, [tt])[0]

    def finish(self, outputs):
        """Return `outputs` (symbolic tensors) from the function and fix its type."""
        with self.ctx, ir.Location.unknown():
            func.ReturnOp([o._mlir for o in outputs], ip=self.ip)
            ftype = ir.FunctionType.get([t._mlir.type for t in self.inputs], [o._mlir.type for o in outputs])
            self.func.attributes["function_type"] = ir.TypeAttr.get(ftype)
        self.closed = True
