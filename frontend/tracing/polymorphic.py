"""`tfn.function`: a PolymorphicFunction traces its Python function once per input FunctionType (each trace a
ConcreteFunction, compiled) and dispatches every call to the most specific trace it fits."""
import collections
import functools
import inspect
import warnings
import weakref

from tfn import autograph, nest
from tfn.config import _RUN_EAGERLY
from tfn.core import device_scope, leaks
from tfn.core import graph as graph_mod
from tfn.core.device_scope import OPEN as _DEVICE_SCOPES
from tfn.core.graph_stack import TRACE_LOCK
from tfn.core.tensor import SymbolicTensor, Tensor, eager_constant
from tfn.core.tensor_spec import TensorSpec
from tfn.gradients import function_call
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import tapes_here
from tfn.state import variables
from tfn.tracing import staging, trace_type, unranked
from tfn.tracing.function import _PLAIN_KINDS, _VAR_POSITIONAL, ConcreteFunction, _input_maker, _key

_CACHE_LIMIT = 1024  # exact call keys remembered per function (misses fall back to dispatch by subtype)


class RetracingWarning(UserWarning):
    """A tfn.function traces on many of its calls."""


class PolymorphicFunction:
    """A Python function traced once per input FunctionType; calls dispatch to compiled code."""

    def __init__(self, python_function, input_signature=None, name=None, reduce_retracing=False, autograph=True,
                 jit_device=None, placement=None):
        self.python_function = python_function
        # Placement (core/device_scope.py): jit_device, the (kind, index) every call is placed on, else the caller's
        # device scope; a function placed on a GPU runs as a child PolymorphicFunction whose `placement` is that
        # runtime Device (its traces compile for it), one per device in `_placed`.
        self._jit_device = device_scope.parse(jit_device)
        self._placement = placement
        self._placed = {}
        self._autograph = bool(autograph)
        self._converted_fn = None  # what traces run: AutoGraph's conversion of python_function (made lazily)
        self._name = name or getattr(python_function, "__name__", "function")
        self.input_signature = _check_input_signature(input_signature)
        self._reduce_retracing = bool(reduce_retracing)
        self._signature = inspect.signature(python_function)
        params = list(self._signature.parameters.values())
        # A call with exactly this many positional arguments and no keywords binds to them as given.
        self._n_plain = len(params) if all(p.kind in _PLAIN_KINDS for p in params) else -1
        self._positional = [p.name for p in params if p.kind in _PLAIN_KINDS]
        self._kinds = {p.name: p.kind for p in params}
        self._var_positional = next((p.name for p in params if p.kind is _VAR_POSITIONAL), "args")
        self._cache = {}  # exact call key -> ConcreteFunction
        self._traced = False  # traced once: later traces may not create variables
        self._concretes = []
        self._tracing_count = 0  # Python traces run (a first trace creating variables is followed by another)
        self._calls = 0
        self._recent_traces = collections.deque(maxlen=5)  # call numbers of the latest traces
        self._warnings = 0
        self._trace_log = []
        self._bound = {}  # id(instance) -> (weakref, bound function)
        functools.update_wrapper(self, python_function)

    def __get__(self, instance, owner):
        """The function bound to `instance`, one per live instance (by identity) so its traces are kept."""
        if instance is None:
            return self
        ref, bound = self._bound.get(id(instance), (None, None))
        if ref is not None and ref() is instance:
            return bound
        with TRACE_LOCK:  # threads binding one instance at once share one bound function (and its traces)
            ref, bound = self._bound.get(id(instance), (None, None))
            if ref is not None and ref() is instance:
                return bound
            return self._new_bound(instance, owner)

    def _new_bound(self, instance, owner):
        try:
            key = id(instance)
            ref = weakref.ref(instance, lambda _, d=self._bound, k=key: d.pop(k, None))
        except TypeError:  # no weak references to this object: a fresh bound function per access
            return PolymorphicFunction(self.python_function.__get__(instance, owner), self.input_signature,
                                       self._name, self._reduce_retracing, self._autograph, self._jit_device,
                                       self._placement)
        bound = PolymorphicFunction(_weak_method(self.python_function, instance, owner, ref), self.input_signature,
                                    self._name, self._reduce_retracing, self._autograph, self._jit_device,
                                    self._placement)
        self._bound[key] = (ref, bound)
        return bound

    def _bind(self, args, kwargs):
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._name}(): {e}") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def __call__(self, *args, **kwargs):
        if _RUN_EAGERLY[0]:
            return self.python_function(*args, **kwargs)
        if graph_mod.current() is not None:
            return self._call_in_trace(args, kwargs)
        if (_DEVICE_SCOPES[0] or self._jit_device is not None) and self._placement is None:
            placed = self._on_device()
            if placed is not self:
                return placed(*args, **kwargs)
        if _TAPES and tapes_here():  # recorded as one op, with a compiled backward function
            return function_call.call(self, args, kwargs)
        self._calls += 1
        if kwargs or len(args) != self._n_plain:
            args, kwargs = self._bind(args, kwargs)
        key = tuple(map(_key, args))
        if kwargs:
            key = (key, tuple((k, _key(v)) for k, v in kwargs.items()))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._new_entry(key, args, kwargs)
        concrete, aligned = entry
        if not aligned:  # values the input_signature converts (Python lists for tensors): bind and check
            return concrete(*args, **kwargs)
        if concrete._leaf_params and not kwargs:
            return concrete._run_leaves(args)
        return concrete._run_leaves(nest.flatten(list(args) + list(kwargs.values())))

    def _on_device(self):
        """The function this call runs: itself on the CPU, or its child placed on the GPU that jit_device or the
        caller's device scope names (soft placement: the CPU where that GPU does not exist)."""
        spec = self._jit_device or device_scope.current()
        if spec is None:
            return self
        placed = device_scope.resolve(spec, f"tfn.function {self._name}")
        if not placed.is_gpu:
            return self
        child = self._placed.get(placed)
        if child is None:
            with TRACE_LOCK:
                child = self._placed.get(placed)
                if child is None:
                    child = self._placed[placed] = PolymorphicFunction(
                        self.python_function, self.input_signature, self._name, self._reduce_retracing,
                        self._autograph, placement=placed)
        return child

    def _new_entry(self, key, args, kwargs):
        """The cache entry of a call key not seen yet, made under the trace lock: another thread may be making it."""
        with TRACE_LOCK:
            entry = self._cache.get(key)
            if entry is None:
                entry = self._dispatch(args, kwargs)
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[key] = entry
            return entry

    def _dispatch(self, args, kwargs):
        """`(concrete, aligned)` for a new call key: aligned when the values' structure is the trace's."""
        call_type = self._call_type(args, kwargs)
        concrete = self._concrete_for(call_type, args, kwargs)
        # A dataset or iterator passes tensors of its own: those calls bind through the trace's types.
        composite = any(trace_type.has_composites(t) for ftype in (call_type, concrete.function_type)
                        for _, _, t in ftype.params)
        return concrete, call_type.is_subtype_of(concrete.function_type) and not composite

    def _concrete_for(self, call_type, args, kwargs):
        """The most specific existing trace this call fits, or a new trace (generalized if reduce_retracing)."""
        ftype = call_type
        if self.input_signature is not None:
            ftype = trace_type.FunctionType(self._check_signature(call_type.params, args, kwargs))
        concrete = self._lookup(ftype)
        if concrete is not None:
            return concrete
        if self._reduce_retracing:
            for c in self._concretes:
                ftype = ftype.supertype(c.function_type) or ftype
        return self._trace(ftype)

    def _lookup(self, ftype):
        fits = [c for c in self._concretes if ftype.is_subtype_of(c.function_type)]
        for c in fits:
            if all(c.function_type.is_subtype_of(o.function_type) for o in fits):
                return c
        return fits[0] if fits else None

    def _call_type(self, args, kwargs):
        """The FunctionType of a bound call's values."""
        params = []
        for i, a in enumerate(args):
            if i < len(self._positional):
                params.append((self._positional[i], self._kinds[self._positional[i]], trace_type.of(a)))
            else:
                params.append((f"{self._var_positional}_{i - len(self._positional)}", _VAR_POSITIONAL,
                               trace_type.of(a)))
        for k, v in kwargs.items():
            params.append((k, self._kinds.get(k, inspect.Parameter.VAR_KEYWORD), trace_type.of(v)))
        return trace_type.FunctionType(params)

    def _check_signature(self, params, args, kwargs):
        """Replace the leading parameters' types by the input_signature's, which each value must fit."""
        sig = self.input_signature
        rest = [p for p in list(self._signature.parameters.values())[len(sig):] if p.kind in _PLAIN_KINDS]
        missing = [p.name for p in rest if p.default is inspect.Parameter.empty]
        if missing:  # as TF: every parameter beyond the signature needs a default
            raise TypeError(f"input_signature missing type constraint for {missing[0]}")
        if len(params) < len(sig):
            raise TypeError(f"{self._name}() takes {len(sig)} arguments matching its input_signature, "
                            f"got {len(params)}")
        values = list(args) + list(kwargs.values())
        out = []
        for (name, kind, t), spec, value in zip(params, sig, values):
            spec_type = trace_type.of(spec)
            if not trace_type.is_subtype(t, spec_type):
                try:
                    if isinstance(value, TensorSpec):
                        raise trace_type.CastError(f"Can not cast {t!r} to {spec_type!r}", True)
                    trace_type.cast(spec_type, value, [])  # converts Python values for tensors
                except trace_type.CastError as e:
                    shown = ", ".join(f"{n}: {trace_type.of(s)!r}" for (n, _, _), s in zip(params, sig))
                    raise TypeError(f"Binding inputs to tfn.function failed due to `{e}`. Received args: "
                                    f"{tuple(args)!r} and kwargs: {dict(kwargs)!r} for signature: ({shown}).") from None
            out.append((name, kind, spec_type))
        defaults = {p.name: p.default for p in rest}
        for (name, _, t), value in zip(params[len(sig):], values[len(sig):]):
            if name in defaults and t != trace_type.of(defaults[name]):  # as TF: fixed to the Python default
                raise TypeError(f"Binding inputs to tfn.function failed due to `Can not cast {value!r} to "
                                f"{trace_type.of(defaults[name])!r}`: with an input_signature, parameter "
                                f"{name!r} of {self._name}() keeps its default {defaults[name]!r}.")
        return out + list(params[len(sig):])

    def _call_in_trace(self, args, kwargs):
        """A call made while tracing runs inline; one re-entering this function with equal types cannot end."""
        b_args, b_kwargs = self._bind(args, kwargs)
        with trace_type.tracing_call(self, self._call_type(b_args, b_kwargs)):
            return self._traced_function()(*args, **kwargs)

    def _traced_function(self):
        """The function a trace runs: python_function converted by AutoGraph, unless autograph=False."""
        if self._converted_fn is None:
            self._converted_fn = autograph.for_trace(self.python_function) if self._autograph else \
                self.python_function
        return self._converted_fn

    def _trace(self, ftype, input_maker=None, register=True):
        """A new ConcreteFunction for `ftype` (kept in this function's traces if `register`)."""
        with TRACE_LOCK:
            return self._trace_locked(ftype, input_maker, register)

    def _trace_locked(self, ftype, input_maker, register):
        if register and any(trace_type.is_unranked(t) for t in ftype.flat_inputs):
            return self._register(unranked.RankPolymorphicFunction(self, ftype))
        graph = graph_mod.FuncGraph(self._name)
        graph.placement = self._placement
        self._tracing_count += 1
        graph.variable_creation, self._traced = not self._traced, True  # as TF: only the first trace creates
        with graph, trace_type.tracing_call(self, ftype):
            values = [trace_type.placeholder(t, (input_maker or _input_maker)(graph, name), graph)
                      for name, _, t in ftype.params]
            n_pos = sum(1 for _, k, _ in ftype.params if k in _PLAIN_KINDS or k is _VAR_POSITIONAL)
            s_kwargs = {n: v for (n, _, _), v in zip(ftype.params[n_pos:], values[n_pos:])}
            before = [_contents(v) for v in values]
            outputs = variables.read_outputs(self._run_user_code(values[:n_pos], s_kwargs))
            self._check_unmodified(ftype, values, before)
            out_leaves, results = _output_leaves(self._name, graph, outputs)
            graph.finish(results + variables.written_state(graph))
        if graph.created_variables:  # as TF: trace again without creating any; the first trace initialises
            first = ConcreteFunction(self._name, graph, ftype, outputs, out_leaves)
            return variables.traced_again(self._trace(ftype, input_maker, register), first)
        ftype = trace_type.FunctionType(ftype.params, _output_type(outputs), variables.capture_types(graph))
        concrete = ConcreteFunction(self._name, graph, ftype, outputs, out_leaves)
        return self._register(concrete) if register else concrete

    def _run_user_code(self, args, kwargs):
        """The traced function's outputs; with AutoGraph, what it raises has the error class TF's trace gives."""
        try:
            return self._traced_function()(*args, **kwargs)
        except Exception as e:
            if not self._autograph or staging.keeps_class(e):
                raise
            raise staging.staging_error(e) from e

    def _check_unmodified(self, ftype, values, before):
        """ValueError (TF's) when the function changed a list or dict it was given."""
        changed = [n for (n, _, _), v, b in zip(ftype.params, values, before) if _contents(v) != b]
        if changed:
            raise ValueError(f"{self._name}{ftype.inputs_str()} should not modify its Python input arguments. "
                             "Modifying a copy is allowed. The following parameter(s) were modified: "
                             + ", ".join(changed))

    def experimental_get_tracing_count(self):
        """How many times the Python function has been traced (TF counts a variable-creating trace and the
        trace that follows it)."""
        return self._tracing_count + sum(c._tracing_count for c in self._placed.values())

    def _register(self, concrete):
        self._note_trace(concrete.function_type)
        self._concretes.append(concrete)
        concrete._function = self
        return concrete

    def _note_trace(self, ftype):
        """Log a trace and warn (at most twice) when 5 of the last 10 calls traced."""
        n = len(self._concretes) + 1
        if not self._concretes:
            self._trace_log.append(f"trace 1: {self._name}{ftype.inputs_str()}")
        else:
            change = trace_type.describe_changes(self._concretes[-1].function_type, ftype)
            self._trace_log.append(f"trace {n}: {self._name}: {change}")
        self._recent_traces.append(self._calls)
        if len(self._recent_traces) == 5 and self._calls - self._recent_traces[0] < 10 and self._warnings < 2:
            self._warnings += 1
            self._recent_traces.clear()
            warnings.warn(
                f"5 out of the last {min(self._calls, 10)} calls to {self._name} triggered tfn.function retracing "
                f"(trace {n}: {self._trace_log[-1].split(': ', 2)[-1]}). Tracing is expensive; the excessive "
                f"tracing could be due to (1) passing tensors with different shapes or dtypes, (2) passing "
                f"Python values instead of tensors, (3) creating a tfn.function repeatedly in a loop. Consider "
                f"reduce_retracing=True or an input_signature with None dimensions; see "
                f"{self._name}.experimental_trace_log().", RetracingWarning, stacklevel=graph_mod.user_stacklevel())

    def experimental_trace_log(self):
        """One line per trace of this function: the first trace's types, then what changed for each retrace."""
        return list(self._trace_log)

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (tensors, TensorSpecs or Python values), tracing if new."""
        if self.input_signature is not None and not args and not kwargs:
            args = self.input_signature
        args, kwargs = self._bind(args, kwargs)
        with TRACE_LOCK:
            return self._concrete_for(self._call_type(args, kwargs), args, kwargs)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """The signatures of all traces, separated by blank lines."""
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._concretes)

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """`fn(stage='tfn')` returning the IR text of the trace for these arguments at a stage."""
        concrete = self.get_concrete_function(*args, **kwargs)

        def get(stage="tfn"):
            return concrete.ir(stage)
        return get


def _contents(value):
    """What a list or dict argument holds, as a comparable snapshot: its structure and its leaves' identities."""
    if not isinstance(value, (list, dict, tuple)):
        return None
    return nest.structure_key(value), tuple(map(id, nest.flatten(value)))


def _check_input_signature(input_signature):
    """The input_signature as a tuple; TypeError (TF's) unless a sequence of TensorSpecs (nested allowed)."""
    if input_signature is None:
        return None
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(f"input_signature must be either a tuple or a list, got {type(input_signature)}.")
    bad = [x for x in nest.flatten(input_signature) if not isinstance(x, TensorSpec)]
    if bad:
        raise TypeError("input_signature must be a possibly nested sequence of TensorSpec objects, got invalid "
                        f"args {bad} with types {[type(x) for x in bad]}.")
    return tuple(input_signature)


def _weak_method(fn, instance, owner, ref):
    """`fn` bound to the instance behind weakref `ref` (a cached bound function must not keep it alive)."""
    def method(*args, **kwargs):
        return fn(ref(), *args, **kwargs)
    functools.update_wrapper(method, fn)
    method.__signature__ = inspect.signature(fn.__get__(instance, owner))
    del method.__wrapped__
    method.__ag_method__ = (fn, ref)  # AutoGraph converts fn and binds it the same way
    return method


def _output_leaves(name, graph, outputs):
    """Per output leaf ("result", i) or ("const", value), and the symbolic tensors the graph returns."""
    out_leaves, results = [], []
    for leaf in nest.flatten(outputs):
        if isinstance(leaf, SymbolicTensor):
            if leaf._graph is not graph:
                raise leaks.out_of_scope(leaf)
            out_leaves.append(("result", len(results)))
            results.append(leaf)
        elif leaf is None:
            out_leaves.append(("const", None))
        elif isinstance(leaf, Tensor):
            out_leaves.append(("const", leaf))
        else:
            out_leaves.append(("const", _constant_output(name, leaf)))  # a Python output: as it is
    return out_leaves, results


def _constant_output(name, leaf):
    """A Python value the function returns, as a constant tensor; TF's TypeError for one no tensor can hold (a
    generator, a coroutine, any object), not the conversion's message about a string tensor."""
    try:
        return eager_constant(leaf)
    except (TypeError, ValueError):
        raise TypeError(f"To be compatible with tfn.function, Python functions must return zero or more Tensors or "
                        f"None values; in compilation of {name}, found return value of type {type(leaf)}, which is "
                        "not a Tensor.") from None


def _output_type(outputs):
    if outputs is None:
        return None
    leaves = [TensorSpec(leaf.shape, leaf.dtype) if isinstance(leaf, (Tensor, SymbolicTensor))
              else leaf if leaf is None else eager_constant(leaf) for leaf in nest.flatten(outputs)]
    return trace_type.of(nest.pack_sequence_as(outputs, leaves))


def function(func=None, input_signature=None, autograph=True, reduce_retracing=False, jit_compile=None,
             name=None, jit_device=None):
    """Decorator compiling a Python function with tfn (`tf.function`). jit_device ('/GPU:0', 'GPU', 'CPU:0', ...):
    the device every call is compiled for and runs on, whatever the caller's `tfn.device` scope (tfn's option;
    soft placement runs it on the CPU where that device does not exist)."""
    if func is None:
        return lambda f: PolymorphicFunction(f, input_signature, name, reduce_retracing, autograph, jit_device)
    return PolymorphicFunction(func, input_signature, name, reduce_retracing, autograph, jit_device)
