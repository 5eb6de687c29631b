"""`tfn.function`: trace Python into the tfn dialect, compile through MLIR, cache and dispatch calls."""
import functools
import inspect

import numpy as np
from mlir import ir

from tfn import graph as graph_mod
from tfn import nest
from tfn.dialects.errors import CompileError
from tfn.dialects.types import TensorType
from tfn.passes import pipelines, registry
from tfn.passes.lowering import runtime_errors
from tfn.runtime import cache, compiler
from tfn.runtime.executable import Executable
from tfn.tensor import SymbolicTensor, Tensor, TensorBase, constant
from tfn.tensor_spec import TensorSpec

_RUN_EAGERLY = [False]


def _arg_spec(x):
    """The trace key of one flattened argument: tensors by dtype and shape, Python values by value."""
    if isinstance(x, Tensor):
        return ("T", x._dtype.name, x._shape)
    if isinstance(x, np.ndarray):
        return ("T", x.dtype.str, x.shape)
    if isinstance(x, TensorSpec):
        return ("T", x.dtype.name, tuple(x.shape))
    if isinstance(x, SymbolicTensor):
        return ("T", x._dtype.name, x._shape)
    try:
        hash(x)
    except TypeError:
        return ("O", id(x))
    return ("P", type(x).__name__, x)


class ConcreteFunction:
    """One trace of a PolymorphicFunction for one input signature, with its compiled executable."""

    def __init__(self, name, graph, arg_positions, arg_specs, out_structure, out_leaves):
        self.name = name
        self.graph = graph
        self._arg_positions = arg_positions  # indices of tensor leaves among the flattened arguments
        self._arg_specs = arg_specs
        self._out_structure = out_structure
        self._out_leaves = out_leaves  # per output leaf: ("result", i) | ("const", value)
        self._executable = None
        self._stage_text = {}
        self._out_dtypes = [t.dtype for t in graph_output_types(graph)]

    @property
    def structured_input_signature(self):
        return self._arg_specs

    def ir(self, stage="tfn"):
        """The function's IR text at a stage: tfn, linalg, bufferized, llvm."""
        if stage not in pipelines.STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(pipelines.STAGES)}")
        if stage not in self._stage_text:
            with self.graph.ctx:
                module = self._copy_module()
                for s in pipelines.STAGES[1:pipelines.STAGES.index(stage) + 1]:
                    _run_pipeline(module.operation, pipelines.STAGE_PIPELINES[s], self.name)
                self._stage_text[stage] = str(module)
        return self._stage_text[stage]

    def _copy_module(self):
        """A fresh ir.Module holding the traced IR, locations included (passes rewrite it in place)."""
        return ir.Module.parse(self.graph.module.operation.get_asm(enable_debug_info=True))

    def _compile(self):
        with self.graph.ctx:
            text = str(self.graph.module)
            k = cache.key(text, pipelines.PIPELINES["tfn-pipeline"].text)
            hit = cache.lookup(k)
            if hit:
                so, scratch = hit, None
            else:
                module = self._copy_module()
                _run_pipeline(module.operation, "tfn-pipeline", self.name)
                so, scratch = compiler.compile_cached(module, k)
        in_types = [TensorType(t._shape, t._dtype) for t in self.graph.inputs]
        self._executable = Executable(so, self.graph.symbol, in_types, graph_output_types(self.graph), scratch,
                                      on_error=self._error_message)

    def _error_message(self, code, details):
        """The message of a run-time error the compiled code reported: the op and the user's line."""
        with self.graph.ctx:
            return runtime_errors.describe(self.graph.module.operation, code, details, self.graph.symbol)

    def _call_flat(self, arrays):
        if self._executable is None:
            self._compile()
        results = self._executable(arrays)
        return [Tensor._trusted(a, dt) for a, dt in zip(results, self._out_dtypes)]

    def _pack_outputs(self, results):
        leaves = [results[v] if kind == "result" else v for kind, v in self._out_leaves]
        return nest.pack_sequence_as(self._out_structure, leaves)

    def __call__(self, *args, **kwargs):
        flat = nest.flatten((args, kwargs))
        arrays = [_as_array(flat[i], spec) for i, spec in zip(self._arg_positions, self._arg_specs)]
        return self._pack_outputs(self._call_flat(arrays))


def graph_output_types(graph):
    ftype = ir.FunctionType(ir.TypeAttr(graph.func.attributes["function_type"]).value)
    return [TensorType.from_mlir(t) for t in ftype.results]


def _as_array(x, spec):
    if isinstance(x, Tensor):
        arr = x._value
    else:
        arr = constant(x, spec.dtype)._value
    if arr.dtype != spec.dtype.np:
        raise TypeError(f"expected a {spec.dtype.name} tensor, got {arr.dtype}")
    return arr


def _run_pipeline(module_op, pipeline, fname):
    try:
        registry.pass_manager(pipeline).run(module_op)
    except ir.MLIRError as e:
        raise CompileError(f"compiling '{fname}' failed in {pipeline}:\n{e}") from None


class PolymorphicFunction:
    """A Python function traced once per input signature; calls dispatch to compiled code."""

    def __init__(self, python_function, input_signature=None, name=None):
        self.python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self._signature = inspect.signature(python_function)
        self._cache = {}
        functools.update_wrapper(self, python_function)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = PolymorphicFunction(self.python_function.__get__(instance, owner), self.input_signature,
                                    self._name)
        return bound

    def _bind(self, args, kwargs):
        if self.input_signature is not None:
            if kwargs or len(args) != len(self.input_signature):
                raise TypeError(f"{self._name}() takes {len(self.input_signature)} positional arguments "
                                f"matching its input_signature, got {len(args)} and {len(kwargs)} keyword")
            return tuple(args), {}
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args), dict(bound.kwargs)

    def __call__(self, *args, **kwargs):
        if _RUN_EAGERLY[0] or graph_mod.current() is not None:
            return self.python_function(*args, **kwargs)
        args, kwargs = self._bind(args, kwargs)
        concrete = self._concrete_for(args, kwargs)
        return concrete(*args, **kwargs)

    def _concrete_for(self, args, kwargs):
        flat = nest.flatten((args, kwargs))
        key = (nest.structure_key((args, kwargs)), tuple(_arg_spec(x) for x in flat))
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._trace(args, kwargs)
            self._cache[key] = concrete
        return concrete

    def _specs_for(self, flat):
        if self.input_signature is not None:
            return self._check_signature(flat)
        specs = {}
        for i, x in enumerate(flat):
            if isinstance(x, (Tensor, TensorSpec, SymbolicTensor)):
                specs[i] = TensorSpec(x.shape, x.dtype)
            elif isinstance(x, np.ndarray):
                specs[i] = TensorSpec(x.shape, x.dtype)
        return specs

    def _check_signature(self, flat):
        sig = nest.flatten(self.input_signature)
        if len(sig) != len(flat):
            raise TypeError(f"{self._name}: expected {len(sig)} tensors matching the input_signature, "
                            f"got {len(flat)}")
        for x, spec in zip(flat, sig):
            t = x if isinstance(x, (TensorBase, TensorSpec)) else constant(x) if not isinstance(
                x, np.ndarray) else Tensor(x)
            if not spec.is_compatible_with(t):
                raise TypeError(f"Binding inputs to tfn.function failed: Can not cast "
                                f"{TensorSpec(t.shape, t.dtype)!r} to {spec!r}")
        return dict(enumerate(sig))

    def _trace(self, args, kwargs):
        flat = nest.flatten((args, kwargs))
        specs = self._specs_for(flat)
        graph = graph_mod.FuncGraph(self._name)
        names = _leaf_names(self._signature, args, kwargs, len(flat))
        with graph:
            sym = list(flat)
            for i, spec in specs.items():
                sym[i] = graph.add_input(TensorType(tuple(spec.shape), spec.dtype), names[i])
            s_args, s_kwargs = nest.pack_sequence_as((args, kwargs), sym)
            outputs = self.python_function(*s_args, **s_kwargs)
            out_leaves, results = [], []
            for leaf in nest.flatten(outputs):
                if isinstance(leaf, SymbolicTensor):
                    if leaf._graph is not graph:
                        raise TypeError(f"{leaf!r} returned from '{self._name}' is out of scope: it belongs "
                                        f"to the trace of '{leaf._graph.name}'")
                    out_leaves.append(("result", len(results)))
                    results.append(leaf)
                elif leaf is None:
                    out_leaves.append(("const", None))
                elif isinstance(leaf, Tensor):
                    out_leaves.append(("const", leaf))
                else:
                    out_leaves.append(("const", constant(leaf)))
            graph.finish(results)
        positions = sorted(specs)
        return ConcreteFunction(self._name, graph, positions, [specs[i] for i in positions], outputs, out_leaves)

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (tensors, TensorSpecs or Python values), tracing if new."""
        if self.input_signature is not None and not args and not kwargs:
            args = self.input_signature
        args, kwargs = self._bind(args, kwargs)
        return self._concrete_for(args, kwargs)

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """`fn(stage='tfn')` returning the IR text of the trace for these arguments at a stage."""
        concrete = self.get_concrete_function(*args, **kwargs)

        def get(stage="tfn"):
            return concrete.ir(stage)
        return get


def _leaf_names(signature, args, kwargs, n):
    """Argument names for the flattened leaves: the parameter's name, suffixed for nested leaves."""
    names = []
    params = list(signature.parameters)
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"arg{i}"
        k = len(nest.flatten(a))
        names += [base] * k
    for key in sorted(kwargs):
        names += [key] * len(nest.flatten(kwargs[key]))
    return names + ["arg"] * (n - len(names))


def function(func=None, input_signature=None, autograph=True, reduce_retracing=False, jit_compile=None,
             name=None):
    """Decorator compiling a Python function with tfn (`tf.function`)."""
    if func is None:
        return lambda f: PolymorphicFunction(f, input_signature, name)
    return PolymorphicFunction(func, input_signature, name)
