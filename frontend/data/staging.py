"""Datasets in a trace: `for x in dataset` as one scf.while whose body is traced once.

In-memory pipelines (from_tensor_slices, from_tensors, range, zip, map, batch, take, skip, repeat, cache,
prefetch) are indexed by compiled code: the loop counts k and element k is computed from the source tensors.
A filter of such a pipeline (then maps and filters of that) is scanned by compiled code: k is the next index whose
element passes, found by an inner loop. Their functions run in the trace, so they may use its tensors.
Any other pipeline stays in Python: compiled code pulls its elements through run-time callbacks
(runtime/callbacks.py), so its loop's size does not depend on the data either. Such a pipeline built inside the
function on symbolic tensors is rebuilt at every call from its source tensors' values, which the callback that
starts the loop receives. A dataset argument passed as state words (frontend/data/native.py) is looped over by
asking the call's producer for element k (`state_iteration`, lowered by passes/lowering/dataset_calls.py).
"""
import threading

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf
from mlir.dialects import func as func_d
from mlir.dialects import tensor as tensor_d

from tfn import dtypes, nest
from tfn.control_flow import statement
from tfn.core import graph as graph_mod
from tfn.core.tensor import Tensor, convert_to_tensor, is_tensor
from tfn.data import structure
from tfn.data.handles import lookup
from tfn.dialects import optable
from tfn.dialects.abi import DATASET_ATTR, DATASET_FETCH, DATASET_HANDLE, DATASET_TAKE, declare_site
from tfn.dialects.errors import OutOfRangeError
from tfn.dialects.locations import with_excerpt
from tfn.dialects.types import TensorType
from tfn.ops import fill_ops, math_ops, shape_ops
from tfn.ops.control_flow import cond, while_loop
from tfn.ops.tensor_array import TensorArray
from tfn.tracing.polymorphic import PolymorphicFunction, function

# The length of an endless dataset (repeat(), enumerate's counter): larger than any loop will run.
_ENDLESS = 1 << 62


def iteration(ds):
    """(initial counter, has_next(k), advance(k) -> (element, next k)) for a loop over `ds` in the current trace."""
    g = graph_mod.current()
    if ds._indexable():
        n, get, _ = index(g, ds)
        n = _tensor(g, n)
        spec = ds.element_spec
        return (_tensor(g, 0), lambda k: math_ops.less(k, n),
                lambda k: (structure.pack_like(spec, get(k)), k + 1))
    scanned = _scanned(g, ds)
    if scanned is not None:
        n, passes, get = scanned
        return _scanned_loop(g, ds.element_spec, _tensor(g, n), passes, get)
    inputs, make, example = pipeline_source(g, ds)
    state = threading.local()
    token = start_site(g, "dataset_iterator", state, make, inputs)
    return pulled_loop(g, ds.element_spec, component_types(ds.element_spec, example), state, token)


def _scanned(g, ds):
    """(length, passes(k) -> bool, get(k) -> flat element) over the indices of an indexable pipeline for a filter
    of it (then maps and filters of that), whose elements are those k that pass; None for any other pipeline."""
    kind = getattr(ds, "_index_kind", None)
    if kind == "filter":
        parent = ds._parent
        if parent._indexable():
            n, get, _ = index(g, parent)
            inner = None
        else:
            inner = _scanned(g, parent)
            if inner is None:
                return None
            n, _, get = inner
        spec = parent.element_spec

        def passes(k):
            ok = ds._fn(*structure.as_args(structure.pack_like(spec, get(k))))
            return ok if inner is None else math_ops.logical_and(inner[1](k), ok)
        return n, passes, get
    if kind == "map" and not ds._indexable():
        inner = _scanned(g, ds._parent)
        if inner is None:
            return None
        n, passes, pget = inner
        return n, passes, _mapped(g, ds, pget)
    return None


def _scanned_loop(g, spec, n, passes, get):
    """The loop over a scanned pipeline: k is the next index that passes (or n), found by an inner loop."""
    def scan(k):
        def more(j):
            return cond(math_ops.less(j, n), lambda: math_ops.logical_not(passes(j)),
                        lambda: g.as_symbolic(Tensor(np.bool_(False))))
        return while_loop(more, lambda j: (j + 1,), (k,))[0]
    return (scan(_tensor(g, 0)), lambda k: math_ops.less(k, n),
            lambda k: (structure.pack_like(spec, get(k)), scan(k + 1)))


def reduce(ds, initial_state, reduce_func):
    """Dataset.reduce: a Python loop over a compiled reduce_func eagerly, one tensor loop in a trace."""
    fn = reduce_func if isinstance(reduce_func, PolymorphicFunction) else function(reduce_func)
    state = structure.to_tensors(initial_state)
    if graph_mod.current() is None:
        spec = ds.element_spec
        for flat in ds._gen():
            state = structure.to_tensors(fn(state, structure.pack(spec, flat)))
        return state
    k0, has_next, advance = ds._tfn_staged_iteration()

    def body(k, s):
        item, k = advance(k)
        return k, structure.to_tensors(fn(s, item))
    return while_loop(lambda k, s: has_next(k), body, (k0, state))[1]


# --- functions using the enclosing function's tensors -------------------------------------------------------

def inline_outputs(fn, spec):
    """What `fn` returns on elements of `spec` when traced into the current trace (a map using the enclosing
    function's tensors, which it cannot be traced without): traced in a region that is then dropped."""
    g = graph_mod.current()
    snapshot = dict(g.state)
    with g.location():
        never = arith.constant(ir.IntegerType.get_signless(1), 0, ip=g.ip)
        region = scf.IfOp(never, [], ip=g.ip)
    try:
        with g.inside(region.then_block, graph_mod.Scope("a dataset function's trial trace")):
            flat = []
            for i, s in enumerate(nest.flatten(spec)):
                t = TensorType(tuple(s.shape), s.dtype)
                with g.location():
                    sizes = [d if d is not None else arith.constant(ir.IndexType.get(), 0, ip=g.ip) for d in t.shape]
                    empty = tensor_d.EmptyOp(sizes, ir.RankedTensorType(t.to_mlir()).element_type, ip=g.ip)
                flat.append(g.wrap(empty.result, t, f"element:{i}"))
            return fn(*structure.as_args(structure.pack_like(spec, flat)))
    finally:
        g.state = snapshot
        statement.erase(g, region.operation)
        never.owner.erase()


def captured_message(what, leaked, why):
    return with_excerpt(
        f"{what}: the function uses {leaked.name!r}, a tensor of the enclosing tfn.function; {why} and cannot "
        "capture the enclosing function's tensors. Pass the value in the elements instead, e.g. "
        "Dataset.zip((dataset, Dataset.from_tensors(value).repeat())), or make the dataset outside the function.",
        graph_mod.user_position())


def check_no_captures(ds, pulled=None):
    """Raise for a pipeline pulled through Python whose map or filter uses a tensor of the enclosing function: its
    elements are made while the function runs, by the function's own compiled code, which cannot see that tensor."""
    pulled = pulled or ds
    captured = getattr(ds, "_captured", None)
    if captured is not None:
        what, leaked = captured
        raise TypeError(captured_message(
            what, leaked, "such a function runs only in pipelines compiled code runs (sources, map, batch, zip, "
            f"take, skip, repeat, then filter and map), but {type(pulled).__name__} has its elements pulled through "
            "Python"))
    for c in ds._children:
        check_no_captures(c, pulled)


# --- compiled indexing ----------------------------------------------------------------------------------------

def _tensor(g, x):
    """An int64 scalar of the trace (a Python int becomes a constant)."""
    if isinstance(x, int):
        return g.as_symbolic(Tensor(np.int64(x)))
    return x if x.dtype.name == "int64" else math_ops.cast(x, dtypes.int64)


def _min(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return math_ops.minimum(a, b)


def _max(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return math_ops.maximum(a, b)


def index(g, ds):
    """(length, get(k) -> flat element, slice(a, b) -> flat batch or None) of an indexable dataset."""
    return _INDEXERS[ds._index_kind](g, ds)


def _slices(g, ds):
    xs = [g.as_symbolic(t) for t in ds._flat]
    n = ds._rows()
    if n is None:
        n = math_ops.cast(shape_ops.shape(xs[0])[0], dtypes.int64)
    return n, lambda k: [x[k] for x in xs], lambda a, b: [x[a:b] for x in xs]


def _tensors(g, ds):
    xs = [g.as_symbolic(t) for t in ds._flat]
    return 1, lambda k: list(xs), None


def _range(g, ds):
    start, _, step = ds._range
    n = ds._len()
    dtype = ds._dtype

    def get(k):
        return [math_ops.cast(k * step + start, dtype)]

    def window(a, b):
        return [math_ops.cast(fill_ops.range(a, b, dtype=dtypes.int64) * step + start, dtype)]
    return _ENDLESS if n is None else n, get, window


def _zip(g, ds):
    parts = [index(g, c) for c in ds._children]
    n = parts[0][0]
    for p in parts[1:]:
        n = _min(n, p[0])

    def get(k):
        return [x for _, part_get, _ in parts for x in part_get(k)]
    window = None
    if all(p[2] is not None for p in parts):
        def window(a, b):
            return [x for _, _, part_slice in parts for x in part_slice(a, b)]
    return n, get, window


def _applied(g, ds):
    """flat input -> flat output of a map dataset's function, in the current trace."""
    pspec = ds._parent.element_spec

    def apply(flat):
        out = ds._fn(*structure.as_args(structure.pack_like(pspec, flat)))
        return [g.as_symbolic(convert_to_tensor(v, s.dtype)) if not is_tensor(v) else v
                for v, s in zip(nest.flatten(out), nest.flatten(ds.element_spec))]
    return apply


def _mapped(g, ds, pget):
    apply = _applied(g, ds)
    return lambda k: apply(pget(k))


def _map(g, ds):
    n, pget, pslice = index(g, ds._parent)
    apply = _applied(g, ds)
    window = None
    if pslice is not None and elementwise(ds._fn, ds._parent.element_spec):  # map then batch: once per batch
        def window(a, b):
            return apply(pslice(a, b))
    return n, lambda k: apply(pget(k)), window


_ELEMENTWISE_MODULE = "tfn.dialects.ops_elementwise"


def elementwise(fn, spec):
    """Whether the tfn.function `fn` on elements of `spec` (all scalars) is elementwise: traced on vectors of
    them it computes the same ops, each elementwise, on scalar constants only, so it maps a batch to the batch of
    its results. Then compiled code applies it to a whole batch at once."""
    specs = nest.flatten(spec)
    if any(s.shape.rank != 0 for s in specs):
        return False
    try:
        scalar = fn.get_concrete_function(*structure.as_args(spec))
        vector = fn.get_concrete_function(*structure.as_args(structure.batched(spec, None)))
    except (TypeError, ValueError, NotImplementedError):  # the function does not take vectors
        return False
    ops = _elementwise_ops(scalar.graph, len(specs))
    return ops is not None and ops == _elementwise_ops(vector.graph, len(specs))


def _elementwise_ops(graph, n_inputs):
    """The names of a trace's ops when all are elementwise (or scalar constants) and it has no state, else None."""
    if graph.callbacks or graph.writebacks or len(graph.block.arguments) != n_inputs:
        return None
    names = []
    for op in graph.block.operations:
        name = op.operation.name
        if name == "func.return":
            continue
        if name == "tfn.constant":
            if TensorType.from_mlir(op.results[0].type).rank != 0:
                return None
        else:
            opdef = optable.OPS.get(name[len("tfn."):]) if name.startswith("tfn.") else None
            if opdef is None or getattr(opdef.kernel, "__module__", None) != _ELEMENTWISE_MODULE:
                return None
        names.append(name)
    return names


def _batch(g, ds):
    pn, pget, pslice = index(g, ds._parent)
    size = ds._size
    if isinstance(pn, int):
        n = pn // size if ds._drop else -(-pn // size)
    else:
        n = pn // size if ds._drop else (pn + (size - 1)) // size
    pspec = nest.flatten(ds._parent.element_spec)

    def get(k):
        a = k * size
        b = a + size if ds._drop else math_ops.minimum(a + size, _tensor(g, pn))
        if pslice is not None:
            return pslice(a, b)
        if ds._drop:
            return _gather(g, pget, pspec, a, size, size)
        return [x[:b - a] for x in _gather(g, pget, pspec, a, b - a, size)]
    return n, get, None


def _gather(g, pget, specs, a, m, size):
    """The elements a, a+1, ..., a+m-1 (m <= size) in the first rows of `size` stacked rows (one inner loop)."""
    arrays = tuple(TensorArray(s.dtype, size=size, element_shape=s.shape) for s in specs)
    m = _tensor(g, m)

    def body(j, *tas):
        values = pget(a + j)
        return (j + 1,) + tuple(ta.write(j, v) for ta, v in zip(tas, values))
    out = while_loop(lambda j, *tas: math_ops.less(j, m), body, (_tensor(g, 0),) + arrays)
    return [ta.stack() for ta in out[1:]]


def _repeat(g, ds):
    pn, pget, _ = index(g, ds._parent)
    if ds._count < 0:
        n = _ENDLESS
    elif isinstance(pn, int):
        n = min(pn * ds._count, _ENDLESS)
    else:
        n = pn * ds._count
    pn_t = _tensor(g, pn)
    return n, lambda k: pget(k % pn_t), None


def _take(g, ds):
    pn, pget, pslice = index(g, ds._parent)
    return (pn if ds._count < 0 else _min(pn, ds._count)), pget, pslice


def _skip(g, ds):
    pn, pget, pslice = index(g, ds._parent)
    c = ds._count
    window = None if pslice is None else (lambda a, b: pslice(a + c, b + c))
    return _max(pn - c, 0), (lambda k: pget(k + c)), window


def _same(g, ds):
    return index(g, ds._parent)


_INDEXERS = {
    "slices": _slices,
    "tensors": _tensors,
    "range": _range,
    "zip": _zip,
    "map": _map,
    "batch": _batch,
    "repeat": _repeat,
    "take": _take,
    "skip": _skip,
    "same": _same,
}


# --- dataset arguments passed as state words (frontend/data/native.py) -----------------------------------------

def state_iteration(g, state, spec):
    """A loop over the dataset argument whose state words are `state`: element k from the call's producer."""
    types = [TensorType(tuple(s.shape), s.dtype) for s in nest.flatten(spec)]
    site = len(g.callbacks)  # raises the producer's error; also numbers the loop

    def failed(arrays):
        lookup(int(arrays[0][DATASET_HANDLE])).raise_error()
    g.callbacks.append(failed)
    bool_type = TensorType((), dtypes.bool)

    ranks = [t.rank for t in types]

    def has_next(k):
        return _declared_call(g, f"dataset_fetch_{site}", (DATASET_FETCH, site, site, *ranks), [state, k],
                              [bool_type])[0]

    def advance(k):
        out = _declared_call(g, f"dataset_take_{site}", (DATASET_TAKE, site, site, *ranks), [state], types)
        return structure.pack_like(spec, out), k + 1
    return _tensor(g, 0), has_next, advance


def _declared_call(g, name, attr, inputs, out_types):
    """Emit a call of a new private declaration carrying `tfn.dataset` = attr (lowering/dataset_calls.py)."""
    in_types = [TensorType(x._shape, x._dtype) for x in inputs]
    with g.location():
        with ir.InsertionPoint(g.module.body):
            decl = func_d.FuncOp(name, ir.FunctionType.get([t.to_mlir() for t in in_types],
                                                           [t.to_mlir() for t in out_types]), visibility="private")
        decl.attributes[DATASET_ATTR] = ir.DenseI64ArrayAttr.get(list(attr))
        call = func_d.CallOp([t.to_mlir() for t in out_types], ir.FlatSymbolRefAttr.get(name),
                             [x._mlir for x in inputs], ip=g.ip)
    label = g.unique_name(name)
    return [g.wrap(r, t, f"{label}:{i}") for i, (r, t) in enumerate(zip(call.results, out_types))]


# --- run-time callbacks ---------------------------------------------------------------------------------------

def _call(g, label, handler, inputs, out_types):
    """Emit a call of a new callback site running `handler(arrays) -> arrays`; its symbolic results."""
    site = len(g.callbacks)
    g.callbacks.append(handler)
    in_types = [TensorType(x._shape, x._dtype) for x in inputs]
    with g.location():
        decl = declare_site(g.module, f"{label}_{site}", site, in_types, out_types)
        call = func_d.CallOp([t.to_mlir() for t in out_types], ir.FlatSymbolRefAttr.get(decl.name.value),
                             [x._mlir for x in inputs], ip=g.ip)
    name = g.unique_name(label)
    return [g.wrap(r, t, f"{name}:{i}") for i, (r, t) in enumerate(zip(call.results, out_types))]


def component_types(spec, example):
    """The TensorTypes of an element's components; unknown ranks are learned from `example`'s first element."""
    specs = nest.flatten(spec)
    if all(s.shape.rank is not None for s in specs):
        return [TensorType(tuple(s.shape), s.dtype) for s in specs]
    first = next(example._gen(), None) if example is not None else None
    if first is None:
        raise ValueError(f"the element spec {spec!r} has components of unknown rank, and no element to learn them "
                         "from: give from_generator an output_signature with shapes")
    return [TensorType(tuple(s.shape) if s.shape.rank is not None else (None,) * a.ndim, s.dtype)
            for s, a in zip(specs, first)]


def callback_iteration(g, ds, handle, example, owned=None):
    """A loop over the dataset that the int64 `handle` names at run time (or over `owned`, a dataset the trace
    itself holds), its elements pulled from Python."""
    if owned is not None:
        def make(arrays):
            return owned._gen()
    else:
        _, make, _ = handle_source(handle, example)
    state = threading.local()
    token = start_site(g, "dataset_iterator", state, make, [handle])
    return pulled_loop(g, ds.element_spec, component_types(ds.element_spec, example), state, token)


def pipeline_source(g, ds):
    """(inputs, make(arrays) -> a Python iterator over the flat elements, example) for a dataset of the current
    trace that compiled code pulls through callbacks: one built on symbolic tensors is rebuilt at run time from its
    source tensors' values (as TF runs a pipeline made inside a function anew at every call)."""
    if not ds._symbolic():
        return [_tensor(g, 0)], lambda arrays: ds._gen(), ds
    check_no_captures(ds)
    sources = ds._sources()
    inputs = [g.as_symbolic(t) for t in sources]

    def make(arrays):
        return ds._rebuild(iter([Tensor(a) for a in arrays]))._gen()
    return inputs, make, None  # no example: a symbolic pipeline has no element to learn unknown ranks from


def handle_source(handle, example):
    """pipeline_source of a dataset argument passed as a handle."""
    return [handle], lambda arrays: lookup(arrays[0])._gen(), example


def start_site(g, label, state, make, inputs):
    """Emit a callback that sets `state.it = make(arrays)` when it runs; its int64 token (the later callbacks
    take it as an operand, which orders them after it)."""
    def start(arrays):
        state.it = make(arrays)
        state.item = None
        return [np.int64(0)]
    return _call(g, label, start, inputs, [TensorType((), dtypes.int64)])[0]


def pulled_loop(g, spec, types, state, token):
    """(token, has_next(k), advance(k)) of a loop over the Python iterator `state.it` (see start_site)."""
    def has_next(arrays):
        state.item = next(state.it, None)
        if state.item is None:
            state.it = iter(())  # let the pipeline go now (a file cache's lock, a generator's resources)
        return [np.bool_(state.item is not None)]

    def get(arrays):
        item, state.item = state.item, None
        return list(item)

    def advance(k):
        return structure.pack_like(spec, _call(g, "dataset_get_next", get, [k], types)), k
    return token, lambda k: _call(g, "dataset_has_next", has_next, [k], [TensorType((), dtypes.bool)])[0], advance


def next_site(g, types, inputs, pull, optional=False):
    """`next` on a Python iterator that `pull(arrays)` returns at run time: the components (OutOfRangeError at
    the end), or with `optional`, (has_value, components) with zeros when it has none."""
    def get_next(arrays):
        item = next(pull(arrays), None)
        if item is None and not optional:
            raise OutOfRangeError("End of sequence")
        if optional:
            if item is None:
                return [np.bool_(False)] + [np.zeros([d or 0 for d in t.shape], t.dtype.np) for t in types]
            return [np.bool_(True)] + list(item)
        return list(item)
    out_types = ([TensorType((), dtypes.bool)] if optional else []) + types
    return _call(g, "iterator_get_next", get_next, inputs, out_types)


def iterator_next(g, handle, spec, example, optional=False):
    """`next(iterator)` on the Iterator that `handle` names at run time (see next_site)."""
    return next_site(g, component_types(spec, example), [handle], lambda arrays: lookup(arrays[0])._flat_iter,
                     optional)
