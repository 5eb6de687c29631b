"""A trace in progress: a `func.func` in the tfn dialect that ops append to, with user source locations."""
import contextlib
import os
import re
import sys
import weakref

from mlir import ir
from mlir.dialects import func

import tfn.dialects
import tfn.passes
import tfn.runtime
from tfn.core import graph_stack
from tfn.core.graph_stack import current  # noqa: F401  (callers ask graph.current() for the graph being traced)
from tfn.core.tensor import SymbolicTensor
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects import attrs as attr_codec
from tfn.dialects import context, optable
from tfn.dialects.errors import InaccessibleTensorError
from tfn.dialects.locations import frame_position, with_excerpt
from tfn.dialects.types import TensorType, tensor_type

# tfn's own source folders, wherever the package is installed; frames there are internal.
_TFN_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                  for m in (sys.modules["tfn"], tfn.dialects, tfn.passes, tfn.runtime))
_CONSTANT = optable.OPS["constant"]
_EAGER_CONST_THRESHOLD = 128  # TF's: larger eager tensors closed over by a function are captured as inputs


def user_stacklevel():
    """The `warnings.warn` stacklevel, counted from its caller, of the innermost frame outside tfn."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_TFN_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def user_frame(skip=1):
    """The innermost stack frame outside tfn's own source (the user's line), from `skip` frames above the caller
    (frames skipped must be tfn's)."""
    f = sys._getframe(skip)
    internal, external = _INTERNAL_FILES, _EXTERNAL_FILES
    while f is not None:
        name = f.f_code.co_filename
        if name in internal:  # (asked of ~10 frames per traced op: set lookups, not dict.get calls)
            f = f.f_back
        elif name in external:
            return f
        elif name.startswith(_TFN_DIRS):
            internal.add(name)
        else:
            external.add(name)
    return None


_INTERNAL_FILES = set()  # source files that are tfn's
_EXTERNAL_FILES = set()  # source files that are not


def user_position():
    """`(file, line, col)` of the user's expression running now (the innermost frame outside tfn), or None."""
    f = user_frame()
    return None if f is None else frame_position(f)


# Whether a new trace records its ops in Python first and builds its MLIR only when something needs it (see
# FuncGraph.materialize), or builds MLIR as it goes (False: test_recorded_traces compares the two).
DEFER = True


class Scope:
    """A region of a control-flow op being traced (a tfn.cond branch, a tfn.while_loop body)."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what


class FuncGraph:
    """Builds one traced function. Use as a context manager while the Python function runs."""

    def __init__(self, name):
        self.name = name
        # The symbol is prefixed so a function named like a C library function (tanh, exp) never
        # interposes that function in the process.
        self.symbol = "__inference_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
        self._names = {}
        self._op_names = {}  # ir.Operation -> its name, as the symbolic tensors it made are named (see op_names)
        self._new_names = []  # (ir.Operation, name) of ops emitted since op_names was last read
        self.inputs = []
        self.closed = False
        # Effect state (a variable's current value) by key; control flow carries the keys its regions change.
        self.state = {}
        self.captures = []  # (outside value, its input, its trace type) per captured eager tensor or variable
        self._captured = {}  # id(outside value) -> its input (the captures list keeps the value alive)
        self.variable_creation = True  # False on a tfn.function's later traces: its variables are singletons
        self.created_variables = []
        self.writebacks = []  # per result after the user's: the setter of the variable it is the new value of
        self.callbacks = []  # handler(arrays) -> arrays per run-time callback site (runtime/callbacks.py)
        self.name_scope = ""  # the open tfn.name_scope: a prefix of the op names, "" or ending in "/"
        self._scopes = []  # the open control-flow regions, innermost last
        self._scope_of = {}  # id(tensor) -> (weakref, Scope) for tensors made inside a region
        self.placement = None  # the runtime Device a tfn.function placed on a GPU is traced for (core/device_scope.py)
        self.forced_location = None  # set while a tape emits the backward ops of a forward op: that op's location
        self._positions = {}  # (code object, instruction offset) -> its (file, line, col) (see _position())
        self._locations = {}  # (file, line, col) -> its ir.Location (see _location_at())
        self.output_types = None  # the TensorTypes of the function's results, once finished
        self._outputs = None  # the symbolic tensors returned, while the trace is only recorded
        self._entries = []  # per open `with` of this graph: whether it entered the MLIR context
        # The ops of a trace recorded without MLIR (see `materialize`), else None: MLIR holds the trace.
        self._recorded = [] if DEFER else None
        self._ctx = self._module = self._func = self._block = self._ip = None
        if self._recorded is None:
            self._build_function()

    def _build_function(self):
        """The module holding the empty function, in the shared context."""
        self._ctx = context.shared_context()
        with self._ctx, ir.Location.unknown():
            self._module = ir.Module.create()
            with ir.InsertionPoint(self._module.body):
                self._func = func.FuncOp(self.symbol, ir.FunctionType.get([], []))
            self._func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            self._block = self._func.add_entry_block()
        self._ip = ir.InsertionPoint(self._block)

    # The MLIR of the trace: asking for any of these builds the MLIR of a recorded trace.
    ctx = property(lambda self: self._built("_ctx"))
    module = property(lambda self: self._built("_module"))
    func = property(lambda self: self._built("_func"))
    block = property(lambda self: self._built("_block"))
    ip = property(lambda self: self._built("_ip"), lambda self, value: setattr(self, "_ip", value))

    def _built(self, field):
        if self._recorded is not None:
            self.materialize()
        return getattr(self, field)

    @property
    def recorded(self):
        """Whether the trace is still only recorded: no MLIR built for it yet (see `materialize`)."""
        return self._recorded is not None

    def __enter__(self):
        graph_stack.push(self)
        entered = self._recorded is None
        if entered:
            self._ctx.__enter__()
        self._entries.append(entered)
        return self

    def __exit__(self, *exc):
        if self._entries.pop():
            self._ctx.__exit__(*exc)
        graph_stack.pop()
        return False

    def materialize(self):
        """Build the MLIR of a trace recorded so far; from then on its ops go straight into MLIR.

        A trace starts as a record of its ops in Python (`DEFER`): a function whose compiled code the artifact
        cache holds is found by its record's key (core/record_key.py) and runs without building its IR, and in a
        new process without loading MLIR at all (~70 ms). Whatever needs the IR (a cache
        miss, control flow, a tape, the IR shown) asks for it through `module`, `block`, `ip`, a tensor's
        `_mlir` ...; this builds it then. The graphs traced around this one on the thread are built too, and each
        open `with` of them enters the context, so the MLIR code after that point runs as in a trace built
        directly."""
        if self._recorded is None:
            return
        with graph_stack.TRACE_LOCK:  # (a run-time error of the compiled code may ask from another thread)
            for g in [*(g for g in graph_stack.stack() if g is not None and g is not self), self]:
                if g._recorded is not None:
                    g._replay()

    def _replay(self):
        """Build the recorded ops (only private fields here: the properties would replay again)."""
        recorded = self._recorded
        self._build_function()
        with self._ctx, ir.Location.unknown() as unknown:
            for t in self.inputs:
                t._ir = self._block.add_argument(t._type.to_mlir(), unknown)
            ip, names, create, location_at = self._ip, self._new_names, ir.Operation.create, self._location_at
            dense = attr_codec.dense_attr
            for opdef, operands, attr_values, result_types, position, name, results in recorded:
                attributes = None
                if opdef is _CONSTANT:
                    attributes = {"value": dense(*attr_values["value"])}
                elif opdef.attrs:
                    attributes = {n: attr_codec.to_mlir(k, attr_values.get(n)) for n, k in opdef.attrs.items()}
                loc = location_at(position)
                op = create(opdef.full_name, results=[t._shared_mlir or t.to_mlir() for t in result_types],
                            operands=[o._ir for o in operands], attributes=attributes, loc=loc, ip=ip)
                names.append((op, name))
                if len(results) == 1:
                    results[0]._ir = op.result
                else:
                    for t, value in zip(results, op.results):
                        t._ir = value
            if self._outputs is not None:
                self._return(self._outputs)
                self._outputs = None
        self._recorded = None
        if self._entries:  # entered while recorded: enter the context now, left by the outermost `with`
            self._ctx.__enter__()
            self._entries[0] = True

    @property
    def op_names(self):
        """{ir.Operation: its node name in as_graph_def()}, as the symbolic tensors it made are named."""
        if self._recorded is not None:
            self.materialize()
        if self._new_names:  # (filled here, not per op: hashing an Operation costs a tenth of emitting one)
            self._op_names.update(self._new_names)
            self._new_names.clear()
        return self._op_names

    def unique_name(self, base):
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def location(self):
        """The MLIR location of the user's expression running now (file, line and column)."""
        if self._recorded is not None:
            self.materialize()
        if self.forced_location is not None:  # a tape emitting the backward ops of a forward op
            return self.forced_location
        return self._location_at(self._position())

    def _location_at(self, position):
        """The ir.Location of a `(file, line, col)` (None: unknown location), one per position: an op and the
        constants of its Python operands share it, and a loop traced many times emits ops at the same few."""
        loc = self._locations.get(position)
        if loc is None:
            loc = self._locations[position] = ir.Location.unknown() if position is None else \
                ir.Location.file(*position)
        return loc

    def _position(self):
        """The user's `(file, line, col)` running now, or None (one frame_position per code position)."""
        f = user_frame(3)  # (the frames skipped are tfn's: this method's callers and theirs)
        if f is None:
            return None
        key = (f.f_code, f.f_lasti)
        position = self._positions.get(key)
        if position is None:
            position = self._positions[key] = frame_position(f)
        return position

    def add_input(self, ttype, name):
        """A new function argument of a tfn tensor type; returns its symbolic tensor."""
        arg = None  # (added to the block when the recorded trace is built)
        if self._recorded is None:
            arg = self._block.add_argument(ttype.to_mlir(), ir.Location.unknown())
        t = SymbolicTensor(arg, ttype, self, f"{self.unique_name(name)}:0")
        self.inputs.append(t)
        return t

    def capture(self, source, ttype, name, spec):
        """The function input standing for an outside value (a large eager tensor, a variable), added once."""
        t = self._captured.get(id(source))
        if t is None:
            t = self._captured[id(source)] = self.add_input(ttype, name)
            self.captures.append((source, t, spec))
        return t

    def captured_input(self, source):
        """The input capturing `source`, or None."""
        return self._captured.get(id(source))

    def read_state(self, key):
        """State `key`'s value here (a variable): its latest write, else its value at the call's start (an input)."""
        t = self.state.get(key)
        if t is None:
            t = self.state[key] = key._initial_state(self)
        return t

    def as_symbolic(self, tensor):
        """A tensor as a value of this trace: an eager one of at most 128 elements as a constant, else captured."""
        # as TF: a large tensor is an input read at every call, not baked into the IR (and its cache key)
        if isinstance(tensor, SymbolicTensor):
            return tensor
        if tensor._value.size <= _EAGER_CONST_THRESHOLD or tensor.dtype.is_string:
            return self.constant(tensor)
        tt = TensorType(tensor._shape, tensor._dtype)
        return self.capture(tensor, tt, "capture", TensorSpec(tensor._shape, tensor._dtype))

    @contextlib.contextmanager
    def inside(self, block, scope=None):
        """Emit ops at the end of `block` (of a control-flow op) within `scope` until the `with` ends."""
        saved = self.ip
        self.ip = ir.InsertionPoint(block)
        self._scopes.append(scope or Scope("a control-flow region"))
        try:
            yield self._scopes[-1]
        finally:
            self._scopes.pop()
            self.ip = saved

    def wrap(self, value, ttype, name):
        """A symbolic tensor for an MLIR value made at the current insertion point (in the current scope)."""
        t = SymbolicTensor(value, ttype, self, name)
        if self._scopes:
            key = id(t)
            self._scope_of[key] = (weakref.ref(t, lambda _, d=self._scope_of: d.pop(key, None)), self._scopes[-1])
        return t

    def check_accessible(self, tensors):
        """Raise InaccessibleTensorError for a tensor made in a control-flow region that is not open now."""
        if not self._scope_of:
            return
        for t in tensors:
            ref, scope = self._scope_of.get(id(t), (None, None))
            if ref is not None and ref() is t and not any(s is scope for s in self._scopes):
                at = user_position()
                where = f"\n  in tfn.function '{self.name}' at {at[0]}:{at[1]}" if at else ""
                raise InaccessibleTensorError(with_excerpt(
                    f"The tensor {t!r} cannot be accessed here: it is defined in {scope.what}, which is a "
                    "different code block. Return it from that function (or make it a loop variable) to use it "
                    "outside." + where, at))

    def emit(self, opdef, operands, attr_values, result_types):
        """Append one tfn op; returns its results as symbolic tensors."""
        if self._scope_of:
            self.check_accessible(operands)
        # (loops written out: a comprehension is a call of its own, and this runs twice per op of a `x * 2.0`)
        if self._recorded is not None:
            return self._record(opdef, operands, attr_values, result_types)
        attributes = None
        if opdef.attrs:
            attributes = {}
            for n, k in opdef.attrs.items():
                attributes[n] = attr_codec.to_mlir(k, attr_values.get(n))
        mlir_operands = []
        for o in operands:
            mlir_operands.append(o._mlir)
        if len(result_types) == 1:
            return [self._emit_one(opdef, mlir_operands, attributes, result_types[0])]
        op = ir.Operation.create(opdef.full_name, results=[t.to_mlir() for t in result_types],
                                 operands=mlir_operands, attributes=attributes, loc=self.location(), ip=self.ip)
        name = self.unique_name(self.name_scope + opdef.name)
        self._new_names.append((op, name))
        return [self.wrap(r, t, f"{name}:{i}") for i, (r, t) in enumerate(zip(op.results, result_types))]

    def _record(self, opdef, operands, attr_values, result_types):
        """emit() of a recorded trace: the op noted, its results symbolic tensors without MLIR values yet."""
        name = self.unique_name(self.name_scope + opdef.name)
        if len(result_types) == 1:
            results = [SymbolicTensor(None, result_types[0], self, name + ":0")]
        else:
            results = [SymbolicTensor(None, t, self, f"{name}:{i}") for i, t in enumerate(result_types)]
        # (no control-flow region is open here: regions are MLIR blocks, so their trace is built)
        self._recorded.append((opdef, operands, attr_values, result_types, self._position(), name, results))
        return results

    def _emit_one(self, opdef, mlir_operands, attributes, out_type):
        """emit() of an op with one result, its symbolic tensor (written out: this runs twice per `x * 2.0`)."""
        mlir_type = out_type._shared_mlir  # (self.ctx is the shared context: the type it keeps there)
        if mlir_type is None:
            mlir_type = out_type.to_mlir()
        op = ir.Operation.create(opdef.full_name, results=[mlir_type], operands=mlir_operands,
                                 attributes=attributes, loc=self.location(), ip=self.ip)
        base = self.name_scope + opdef.name  # unique_name
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        name = base if n == 0 else f"{base}_{n}"
        self._new_names.append((op, name))  # the op's node name in as_graph_def()
        if self._scopes:
            return self.wrap(op.result, out_type, name + ":0")
        return SymbolicTensor(op.result, out_type, self, name + ":0")

    def constant(self, tensor):
        """Embed an eager tensor's value as a tfn.constant."""
        tt = tensor_type(tensor._shape, tensor._dtype)
        if self._recorded is not None:
            t = self._record(_CONSTANT, (), {"value": (tensor._value, tt)}, [tt])[0]
            t._const = tensor._value
            return t
        t = self._emit_one(_CONSTANT, [], {"value": attr_codec.dense_attr(tensor._value, tt)}, tt)
        t._const = tensor._value
        return t

    def as_graph_def(self):
        """The trace as TF's GraphDef: `.node` lists inputs, ops and outputs with `.name`, `.op`, `.input`."""
        from tfn.core import graph_def  # start-up cost: loaded when a program inspects a trace

        return graph_def.as_graph_def(self)

    def get_operations(self):
        """The trace's nodes as Operations (`.name`, `.type`, `.inputs`, `.outputs`), in program order."""
        from tfn.core import graph_def  # start-up cost: as in as_graph_def

        return graph_def.get_operations(self)

    def finish(self, outputs):
        """Return `outputs` (symbolic tensors) from the function and fix its type."""
        self.check_accessible(outputs)
        self.closed = True
        if self._recorded is not None:
            self._outputs = list(outputs)
            self.output_types = [o._type for o in outputs]
            return
        with self._ctx, ir.Location.unknown():
            self._return(outputs)

    def _return(self, outputs):
        """The function's return of `outputs` and its type (called with the context entered)."""
        func.ReturnOp([o._ir for o in outputs], ip=self._ip)
        ftype = ir.FunctionType.get([t._ir.type for t in self.inputs], [o._ir.type for o in outputs])
        self._func.attributes["function_type"] = ir.TypeAttr.get(ftype)
        self.output_types = [TensorType.from_mlir(t) for t in ftype.results]
