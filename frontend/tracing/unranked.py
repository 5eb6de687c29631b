"""ConcreteFunctions with parameters of unknown rank (`TensorSpec(shape=None)`): compiled once per rank.

The tfn dialect types every tensor with a rank, so a trace for an unranked parameter is specialised:
the Python function is traced again for each rank it is called with (every dimension unknown), and
each such trace compiles once. The function's signature stays unranked, ranked calls dispatch to it by
subtyping, and an output computed from an unranked input is typed `shape=<unknown>`. The first trace
(at rank 0, else the lowest rank up to 4 that traces) is made at once and fixes the output type; so
Python side effects of the body (a `print`) happen once per rank, and inside the body an unranked
parameter shows its specialised shape (`shape=(None, None)` at rank 2; TF shows `shape=<unknown>`).
"""
import numpy as np

from tfn.core.graph_stack import TRACE_LOCK
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.errors import OpError
from tfn.tracing import trace_type
from tfn.tracing.function import ConcreteFunction, _input_maker

_PROBE_RANKS = (0, 1, 2, 3, 4)


class RankPolymorphicFunction(ConcreteFunction):
    """A ConcreteFunction whose unranked tensor parameters are specialised per rank, lazily, under the hood."""

    def __init__(self, polymorphic, ftype):
        self._polymorphic = polymorphic
        self._input_type = ftype
        tensors = [t for t in ftype.flat_inputs if isinstance(t, TensorSpec)]
        self._unranked = [i for i, t in enumerate(tensors) if t.shape.rank is None]
        self.specializations = {}  # ranks of the unranked parameters -> ConcreteFunction
        probe, arg_numbers = self._probe()
        output = _unranked_outputs(probe, arg_numbers)
        super().__init__(probe.name, probe.graph, trace_type.FunctionType(ftype.params, output),
                         probe._out_structure, probe._out_leaves)

    def _probe(self):
        """The first specialisation: at the lowest rank that traces (the first failure is raised if none)."""
        first = None
        for rank in _PROBE_RANKS:
            ranks = (rank,) * len(self._unranked)
            try:
                arg_numbers = []
                return self._specialize(ranks, arg_numbers), arg_numbers
            except (ValueError, TypeError, IndexError, OpError) as e:
                first = first or e
        raise first

    def _specialize(self, ranks, arg_numbers=None):
        """The trace for these ranks of the unranked parameters, made on first use."""
        concrete = self.specializations.get(ranks)
        if concrete is not None:
            return concrete
        with TRACE_LOCK:  # another thread may be tracing these ranks
            concrete = self.specializations.get(ranks)
            if concrete is None:
                concrete = self.specializations[ranks] = self._trace_ranks(ranks, arg_numbers)
            return concrete

    def _trace_ranks(self, ranks, arg_numbers):
        it = iter(ranks)
        ftype = trace_type.FunctionType(
            (n, k, trace_type.map_leaves(t, lambda leaf: TensorSpec([None] * next(it), leaf.dtype)
                                         if trace_type.is_unranked(leaf) else leaf))
            for n, k, t in self._input_type.params)
        return self._polymorphic._trace(ftype, self._input_maker(arg_numbers), register=False)

    def _input_maker(self, arg_numbers):
        """An input maker that notes the argument numbers of the unranked parameters' inputs."""
        count = [0]

        def maker(graph, name):
            make = _input_maker(graph, name)

            def make_marked(spec):
                t = make(spec)
                if count[0] in self._unranked and arg_numbers is not None:
                    arg_numbers.append(t._mlir.arg_number)
                count[0] += 1
                return t
            return make_marked
        return maker

    def _for_arrays(self, arrays):
        return self._specialize(tuple(np.ndim(arrays[i]) for i in self._unranked))

    def __call__(self, *args, **kwargs):
        arrays = self._bind_arrays(args, kwargs)
        concrete = self._for_arrays(arrays)
        return concrete._pack_outputs(concrete._call_flat(arrays))

    def _run_leaves(self, flat):
        return self._for_arrays([flat[i] for i in self._arg_positions])._run_leaves(flat)

    def _call_flat(self, arrays):
        return self._for_arrays(arrays)._call_flat(arrays)

    @property
    def inference_fn(self):
        """Calls the specialisation for the ranks of its flat tensor arguments."""
        def call(*tensors):
            return self._for_arrays(tensors).inference_fn(*tensors)
        return call


def _unranked_outputs(probe, arg_numbers):
    """The probe's output type, with `shape=<unknown>` for each output computed from an unranked input."""
    output = probe.function_type.output
    if output is None:
        return None
    tainted = _tainted_results(probe.graph, arg_numbers)
    kinds = iter(probe._out_leaves)

    def widen(leaf):
        kind, v = next(kinds)
        return TensorSpec(None, leaf.dtype) if kind == "result" and tainted[v] else leaf
    return trace_type.map_leaves(output, widen)


def _tainted_results(graph, arg_numbers):
    """Per value the function returns, whether it depends on one of the block arguments `arg_numbers`."""
    tainted = {graph.block.arguments[i] for i in arg_numbers}
    ops = list(graph.block.operations)
    for op in ops[:-1]:
        if _uses_any(op, tainted):
            tainted.update(op.results)
    return [v in tainted for v in ops[-1].operands]


def _uses_any(op, values):
    """Whether `op`, or an op nested in its regions, reads one of `values`."""
    if any(o in values for o in op.operands):
        return True
    return any(_uses_any(inner, values) for region in op.regions for block in region for inner in block.operations)
