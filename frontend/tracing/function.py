"""A ConcreteFunction: one trace of a `tfn.function` for one FunctionType, compiled through MLIR, and its calls."""
import inspect
import threading

import numpy as np

from tfn import nest, runtime
from tfn.core import device_scope, graph_stack, record_key
from tfn.core.device_tensor import DeviceTensor
from tfn.core.graph_stack import TRACE_LOCK
from tfn.core.tensor import Tensor, TensorBase, constant, convert_to_tensor
from tfn.core.tensor_shape import TensorShape
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.errors import UnimplementedError
from tfn.dialects.types import TensorType
from tfn.gradients import function_call
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import tapes_here
from tfn.runtime.driver import NoGpuKernelError
from tfn.state import variables
from tfn.tracing import atomic, trace_type

_PLAIN_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_SCALARS = frozenset((int, float, bool, str, bytes, type(None), complex))


def _key(x):
    """A hashable key of one argument's exact trace type (the hot path of every call)."""
    t = type(x)
    if t is Tensor:
        return (x._dtype, x._shape)
    if t in _SCALARS:
        return (t, x)
    return _slow_key(x, t)


def _slow_key(x, t):
    if isinstance(x, Tensor):
        return (x._dtype, x._shape)
    if isinstance(x, (list, tuple)):
        return ("seq", t, tuple(map(_key, x)))
    if isinstance(x, dict):
        return ("map", t, tuple((k, _key(x[k])) for k in sorted(x, key=nest._key_order)))
    if isinstance(x, np.ndarray):
        return ("nd", x.dtype.str, x.shape)
    if hasattr(x, "__tf_tracing_type__"):
        return ("tt", x.__tf_tracing_type__(None))
    return ("obj", trace_type.of(x))  # by weak reference: the cache must not keep arguments alive


class ConcreteFunction:
    """One trace of a PolymorphicFunction for one FunctionType, with its compiled executable."""

    def __init__(self, name, graph, function_type, out_structure, out_leaves):
        self.name = name
        self.graph = graph
        self.function_type = function_type
        flat_types = [leaf for _, _, t in function_type.params for leaf in trace_type.leaves(t)]
        self._arg_positions = [i for i, t in enumerate(flat_types) if isinstance(t, TensorSpec)]
        self._arg_specs = [flat_types[i] for i in self._arg_positions]
        self._leaf_params = all(len(trace_type.leaves(t)) == 1 and type(t) not in (trace_type.Seq, trace_type.Mapping)
                                and not trace_type.is_composite(t) for _, _, t in function_type.params)
        self._param_index = {n: i for i, (n, _, _) in enumerate(function_type.params)}
        self._out_structure = out_structure
        self._out_leaves = out_leaves  # per output leaf: ("result", i) | ("const", value)
        self._executable = None
        self._call_keys = set()  # exact argument keys of __call__ that bound without conversion
        self._stage_text = {}
        self._out_dtypes = [t.dtype for t in graph_output_types(graph)]
        # State (frontend/state/variables.py): arrays of captured inputs appended to the arguments', and setters of
        # the variables whose new values follow the user's results; a first trace that creates variables runs
        # once first as `_initializer`, to initialise those whose initial value it computes.
        self._capture_sources = variables.capture_sources(graph)
        self._writebacks = list(graph.writebacks)
        self._user_dtypes = self._out_dtypes[:len(self._out_dtypes) - len(self._writebacks)]
        self._initializer = None
        # One thread runs the initializer. Not under the trace lock: it writes variables, whose locks a call may
        # hold while its py_function waits for the trace lock.
        self._initializing = threading.Lock()
        self._function = None  # the PolymorphicFunction that traced it (its backward function traces from it)
        self._state_lock = variables.StateLock(graph)  # held by a call: its variable updates are atomic
        # The GPU the trace is placed on (a runtime Device), or None: its executable takes and returns device
        # buffers, its results are DeviceTensors (core/device_tensor.py).
        self.placement = graph.placement if graph.placement is not None and graph.placement.is_gpu else None

    @property
    def structured_input_signature(self):
        """`(args, kwargs)` as TF's: TensorSpecs named by their path (`x`, `ys_0`, `d_a`), Python values as they
        are, lists, tuples and dicts rebuilt."""
        params = self.function_type.params
        return (tuple(_signature_value(t, n) for n, k, t in params if k in _PLAIN_KINDS or k is _VAR_POSITIONAL),
                {n: _signature_value(t, n) for n, k, t in params if k not in _PLAIN_KINDS and k is not _VAR_POSITIONAL})

    @property
    def inference_fn(self):
        """The compiled code as a callable on the flat input tensors, without binding (TF's AtomicFunction)."""
        return atomic.AtomicFunction(self)

    def ir(self, stage="tfn"):
        """The function's IR text at a stage: tfn, linalg, bufferized, llvm."""
        with TRACE_LOCK:
            if stage not in self._stage_text:
                self._stage_text[stage] = runtime.stage_ir(self.graph.module, stage, self.name)
            return self._stage_text[stage]

    def _compile(self):
        with TRACE_LOCK:  # once, and MLIR work is one thread's at a time
            if self._executable is None:
                self._compile_locked()

    def _compile_locked(self):
        graph = self.graph
        in_types = [TensorType(t._shape, t._dtype) for t in graph.inputs]
        # A trace recorded without MLIR goes by its record's key; its module is built only if the cache misses.
        trace_key = record_key.key(graph) if graph.recorded and self.placement is None else None
        module = (lambda: graph.module) if trace_key is not None else graph.module
        try:
            self._executable = runtime.compile(module, symbol=graph.symbol, in_types=in_types,
                                               out_types=graph_output_types(graph), handlers=graph.callbacks,
                                               name=self.name, device=self.placement, trace_key=trace_key)
        except NoGpuKernelError:
            if not device_scope.SOFT[0]:
                raise
            self.placement = None  # soft placement (TF's): what has no GPU kernel runs on the CPU
            self._compile_locked()
            return
        if self.placement is not None:
            self._run_leaves = self._run_on_device  # inputs on the device stay there (no host copy)
            return
        run = _fast_runner(self)
        if run is not None:
            self._run_leaves = run  # shadows the method: cache hits go straight to the executable's plan
        if self._executable.upgrade is not None:  # quick code: its optimised code replaces it once loaded
            self._executable.upgrade.on_ready(self._adopt)

    def _adopt(self, executable):
        """Run `executable` (the optimised code of this trace, runtime/tiering.py) from now on. Each call reads the
        executable, or the fast runner holding it, once: it runs one tier or the other, whole."""
        self._executable = executable
        if "_run_leaves" in self.__dict__:
            run = _fast_runner(self)
            if run is not None:
                self._run_leaves = run

    @property
    def _stateful(self):
        """Whether calls pass captured values, write variables back or first run an initializer."""
        return bool(self._capture_sources or self._writebacks or self._initializer is not None)

    def _call_flat(self, arrays):
        if self._executable is None:
            self._compile()
        if self._stateful:
            return self._call_stateful(arrays)
        results = self._executable(arrays)
        if self.placement is not None:
            return [DeviceTensor(b, dt) for b, dt in zip(results, self._out_dtypes)]
        return [Tensor._trusted(a, dt) for a, dt in zip(results, self._out_dtypes)]

    def _call_stateful(self, arrays):
        """Run with the captured values after the arguments; write the extra results back into their variables."""
        if self._initializer is not None:
            with self._initializing:  # one thread runs the initializer; the others wait for it, then run this trace
                init = self._initializer
                if init is not None:
                    results = init._call_flat(arrays)
                    self._initializer = None
                    return results
        with self._state_lock:
            results = self._executable([*arrays, *[read() for read in self._capture_sources]])
            if self._writebacks:
                n = len(results) - len(self._writebacks)
                for write, array in zip(self._writebacks, results[n:]):
                    write(array.to_host() if self.placement is not None else array)  # variables live on the host
        if self.placement is not None:
            return [DeviceTensor(b, dt) for b, dt in zip(results, self._user_dtypes)]
        return [Tensor._trusted(a, dt) for a, dt in zip(results, self._user_dtypes)]

    def _pack_outputs(self, results):
        leaves = [results[v] if kind == "result" else v for kind, v in self._out_leaves]
        return nest.pack_sequence_as(self._out_structure, leaves)

    def _run_leaves(self, flat):
        """Run on the flattened arguments of a call whose exact type already matched this trace."""
        if self.placement is not None:
            return self._run_on_device(flat)
        arrays = [x._value if type(x) is Tensor else _as_array(x, spec)
                  for x, spec in zip([flat[i] for i in self._arg_positions], self._arg_specs)]
        return self._pack_outputs(self._call_flat(arrays))

    def _run_on_device(self, flat):
        """`_run_leaves` of a trace placed on a GPU: a DeviceTensor goes as its buffer (used where it is if on this
        device), any other value as a host array the executable copies to the device."""
        values = [x._buffer if type(x) is DeviceTensor else x._value if type(x) is Tensor else _as_array(x, spec)
                  for x, spec in zip([flat[i] for i in self._arg_positions], self._arg_specs)]
        return self._pack_outputs(self._call_flat(values))

    def __call__(self, *args, **kwargs):
        if _TAPES and self._function is not None and graph_stack.current() is None and tapes_here():  # recorded
            return function_call.call(self._function, args, kwargs, self)
        if not kwargs and self._leaf_params:
            key = tuple(map(_key, args))
            if key in self._call_keys:  # these exact types bound to the parameters before: no binding
                return self._run_leaves(args)
            arrays = self._bind_arrays(args, kwargs)
            if len(args) == len(self.function_type.params) and all(type(a) is Tensor or type(a) in _SCALARS
                                                                    for a in args):
                self._call_keys.add(key)
            return self._pack_outputs(self._call_flat(arrays))
        return self._pack_outputs(self._call_flat(self._bind_arrays(args, kwargs)))

    def _bind_arrays(self, args, kwargs):
        """Bind a call to the parameters (by position, then keyword) and check each against its type."""
        params = self.function_type.params
        positional = [i for i, (_, k, _) in enumerate(params) if k in _PLAIN_KINDS or k is _VAR_POSITIONAL]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments but {len(args)} were given")
        values = dict(zip(positional, args))
        for name, v in kwargs.items():
            i = self._param_index.get(name)
            if i is None or params[i][1] in (inspect.Parameter.POSITIONAL_ONLY, _VAR_POSITIONAL):
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{name}'")
            if i in values:
                raise TypeError(f"{self.name}() got multiple values for argument '{name}'")
            values[i] = v
        arrays = []
        for i, (name, _, t) in enumerate(params):
            if i not in values and trace_type.has_tensors(t):
                raise TypeError(f"{self.name}() missing required argument: '{name}'")
            try:
                trace_type.cast(t, values[i], arrays) if i in values else None
            except trace_type.CastError as e:
                return trace_type.bind_or_fallback(self.name, self.function_type, e, args, kwargs)
        return arrays

    @property
    def output_shapes(self):
        """The TensorShape of each output, in the outputs' structure (TF's)."""
        return nest.map_structure(lambda x: TensorShape(None) if x is None else TensorShape(_as_output(x).shape),
                                  self._out_structure)

    @property
    def output_dtypes(self):
        """The DType of each output, in the outputs' structure (TF's)."""
        return nest.map_structure(lambda x: None if x is None else _as_output(x).dtype, self._out_structure)

    @property
    def structured_outputs(self):
        """The trace's outputs in the structure the Python function returned (TF's): symbolic tensors of the
        graph, a Python value returned as a constant, None kept."""
        return nest.map_structure(lambda x: None if x is None else _as_output(x), self._out_structure)

    @property
    def outputs(self):
        """The output tensors, flat (TF's)."""
        return [x for x in nest.flatten(self.structured_outputs) if x is not None]

    @property
    def inputs(self):
        """The graph's placeholders, flat: the tensor arguments', then one per captured value (TF's)."""
        return list(self.graph.inputs)

    def pretty_printed_signature(self, verbose=True):
        """The parameters with their kinds and types, the output type and the captures, as TF prints them;
        verbose=False: TF's one line, `(x: TensorSpec(...), y: Literal[2]) -> TensorSpec(...)`."""
        if not verbose:
            return self._signature_line()
        lines = ["Input Parameters:"]
        lines += [f"  {n} ({k.name}): {t!r}" for n, k, t in self.function_type.params]
        lines += ["Output Type:", f"  {trace_type.format_output(self.function_type.output)}", "Captures:"]
        lines += variables.capture_lines(self.graph)
        return "\n".join(lines)

    def _signature_line(self):
        """The function type as a Python signature whose annotations are the trace types (TF's str of it)."""
        params = self.function_type.params
        # as TF's FunctionType: with *args every positional parameter is positional-only, **kwargs keyword-only
        varargs = any(k is _VAR_POSITIONAL for _, k, _ in params)
        kinds = {_VAR_POSITIONAL: inspect.Parameter.POSITIONAL_ONLY,
                 inspect.Parameter.VAR_KEYWORD: inspect.Parameter.KEYWORD_ONLY}
        if varargs:
            kinds[inspect.Parameter.POSITIONAL_OR_KEYWORD] = inspect.Parameter.POSITIONAL_ONLY
        params = [inspect.Parameter(n, kinds.get(k, k), annotation=_Shown(repr(t))) for n, k, t in params]
        out = _Shown(trace_type.format_output(self.function_type.output))
        return str(inspect.Signature(params, return_annotation=out))

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at 0x{id(self):X}>"


_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL


class _Shown:
    """An annotation that prints as the given text (inspect shows a non-type annotation by its repr)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _signature_value(t, name):
    """A parameter's trace type as TF's structured_input_signature shows it."""
    if isinstance(t, TensorSpec):
        return TensorSpec(t.shape, t.dtype, t.name or name)
    if type(t) is trace_type.Literal:
        return t.value
    if type(t) is trace_type.Seq:
        items = [_signature_value(x, f"{name}_{i}") for i, x in enumerate(t.items)]
        return t.cls(*items) if hasattr(t.cls, "_fields") else t.cls(items)
    if type(t) is trace_type.Mapping:
        return nest.mapping_like(t.cls, [(k, _signature_value(x, f"{name}_{k}")) for k, x in t.items])
    return t


def _as_output(x):
    """An output leaf as a tensor: Python values are returned as constants."""
    return x if isinstance(x, TensorBase) else convert_to_tensor(x)


def _fast_runner(concrete):
    """`run(flat)` for cache hits of a compiled trace, or None where the generic `_run_leaves` is needed.

    The runner hands the call's leaves and the trace's tensor positions to the executable in one call (the C
    trampoline reads each tensor's array itself) and wraps the results as tensors without copying. Traces
    with captured inputs or write-backs keep the generic path."""
    if concrete._stateful:
        return None
    call, positions = concrete._executable.call, tuple(concrete._arg_positions)
    trusted, dtypes = Tensor._trusted, concrete._out_dtypes
    leaves, structure = concrete._out_leaves, concrete._out_structure
    if leaves == [("result", 0)] and not nest.is_nested(structure):
        dtype = dtypes[0]
        return lambda flat: trusted(call(flat, positions)[0], dtype)

    def run(flat):
        results = [trusted(a, dt) for a, dt in zip(call(flat, positions), dtypes)]
        return nest.pack_sequence_as(structure, [results[v] if kind == "result" else v for kind, v in leaves])
    return run


def graph_output_types(graph):
    return list(graph.output_types)


def _as_array(x, spec):
    if isinstance(x, Tensor):
        arr = x._value
    else:
        arr = constant(x, spec.dtype)._value
    if arr.dtype != spec.dtype.np:
        raise TypeError(f"expected a {spec.dtype.name} tensor, got {arr.dtype}")
    return arr




def _input_maker(graph, name):
    """`make(spec)`: a new graph input for each tensor leaf of the parameter `name`."""
    def make(spec):
        if spec.shape.rank is None:
            raise UnimplementedError(f"tfn.function cannot trace argument '{name}' of unknown rank ({spec!r}) "
                                     f"yet; give its rank, with None for unknown dimensions")
        return graph.add_input(TensorType(tuple(spec.shape), spec.dtype), name)
    return make
