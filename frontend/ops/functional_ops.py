"""`tfn.scan`, `tfn.switch_case`, `tfn.case`, `tfn.vectorized_map`, `tfn.numpy_function`: TF's functional forms,
built on tfn.while_loop / TensorArray (scan, as map_fn is), tfn.cond (the cases), map_fn and py_function."""
import numpy as np

from tfn import nest
from tfn.core import graph as graph_mod
from tfn.core.api import export
from tfn.core.tensor import SymbolicTensor, convert_to_tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.ops import array_ops, fill_ops, math_ops, shape_ops, split_ops
from tfn.ops.assert_ops import literal, require
from tfn.ops.composite import user_error
from tfn.ops.control_flow import cond, while_loop
from tfn.ops.map_fn import map_fn
from tfn.ops.py_function import py_function
from tfn.ops.sequence_ops import add_n
from tfn.ops.tensor_array import TensorArray


@export("scan")
def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """`acc = fn(acc, x)` over the slices x of elems along dim 0 (from the last with `reverse`), every acc stacked.
    Without an initializer the first slice is the first acc (and the first result). Traced, one tfn.while_loop
    writing a TensorArray (fn traced once); the count of slices may be known only when the function runs."""
    if not callable(fn):
        raise user_error(TypeError(f"scan: fn must be callable, got {fn!r}"))
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat or any(e.ndim == 0 for e in flat):
        raise user_error(ValueError("scan: elems must be tensors of rank >= 1 with one first dim"))
    n = flat[0].shape[0]
    n = shape_ops.shape(flat[0])[0] if n is None else n

    def slice_at(i):
        return nest.pack_sequence_as(elems, [e[i] for e in flat])

    if initializer is None:
        first = (n - 1) if reverse else 0
        acc, start = slice_at(first), 1
    else:
        acc, start = initializer, 0
    acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]
    if graph_mod.current() is None or not any(isinstance(t, SymbolicTensor) for t in flat + acc_flat):
        return _eager_scan(fn, slice_at, acc, initializer is None, int(n), reverse)
    # the k-th step's acc at position k (the slices taken from the end with `reverse`), reversed once stacked; a
    # count known only at run time makes arrays that grow as they are written, their first write before the loop
    static = isinstance(n, int)
    arrays = [TensorArray(a.dtype, size=n if static else 0, dynamic_size=not static, element_shape=a.shape)
              for a in acc_flat]
    if initializer is None or not static:
        first = acc_flat if initializer is None else _step(fn, acc, acc_flat, slice_at(n - 1 if reverse else 0))
        arrays = [ta.write(0, a) for ta, a in zip(arrays, first)]
        acc_flat, start = first, 1

    def body(k, *state):
        carried, tas = state[:len(acc_flat)], state[len(acc_flat):]
        out_flat = _step(fn, acc, list(carried), slice_at(n - 1 - k if reverse else k))
        return (k + 1, *out_flat, *[ta.write(k, o) for ta, o in zip(tas, out_flat)])
    result = while_loop(lambda k, *_: k < n, body, [convert_to_tensor(start), *acc_flat, *arrays])
    stacked = [ta.stack() for ta in result[1 + len(acc_flat):]]
    return nest.pack_sequence_as(acc, [split_ops.reverse(t, [0]) for t in stacked] if reverse else stacked)


def _step(fn, acc, carried, x):
    """fn's new accumulator (flat, in the accumulator's dtypes) from the carried one and the slice x."""
    out_flat = [convert_to_tensor(o) for o in nest.flatten(fn(nest.pack_sequence_as(acc, list(carried)), x))]
    if len(out_flat) != len(carried):
        raise user_error(ValueError(f"scan: fn returned {len(out_flat)} tensor(s), the accumulator has "
                                    f"{len(carried)}"))
    return [math_ops.cast(o, a.dtype) if o.dtype != a.dtype else o for o, a in zip(out_flat, carried)]


def _eager_scan(fn, slice_at, acc, first_is_output, n, reverse):
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    outs = [acc] if first_is_output else []
    for i in order[1:] if first_is_output else order:
        acc = fn(acc, slice_at(i))
        outs.append(acc)
    if reverse:
        outs.reverse()
    flat = [[convert_to_tensor(o) for o in nest.flatten(x)] for x in outs]
    if not flat:  # no slices: an empty stack of the initializer's shape
        return nest.pack_sequence_as(acc, [fill_ops.zeros([0] + list(a.shape), a.dtype)
                                           for a in (convert_to_tensor(x) for x in nest.flatten(acc))])
    return nest.pack_sequence_as(acc, [array_ops.stack(list(column)) for column in zip(*flat)])


@export("switch_case")
def switch_case(branch_index, branch_fns, default=None, name=None):
    """`branch_fns[branch_index]()` (a list of callables, or a dict / pairs from ints); an index with no branch runs
    `default` (default: the last branch). Traced, nested tfn.cond, each branch traced once."""
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    elif branch_fns and all(isinstance(b, (list, tuple)) and len(b) == 2 for b in branch_fns):
        pairs = sorted((int(k), f) for k, f in branch_fns)
    else:
        pairs = list(enumerate(branch_fns or []))
    if not pairs:
        raise user_error(ValueError("switch_case: branch_fns must not be empty"))
    for k, f in pairs:
        if not callable(f):
            raise user_error(TypeError(f"switch_case: branch {k} is not callable: {f!r}"))
    if default is None:
        default = pairs[-1][1]
    index = convert_to_tensor(branch_index)
    if not index.dtype.is_integer or index.ndim != 0:
        raise user_error(TypeError(f"switch_case: branch_index must be a scalar int32 or int64 tensor, got "
                                   f"{index!r}"))

    def chain(rest):
        if not rest:
            return default()
        k, f = rest[0]
        return cond(math_ops.equal(index, math_ops.cast(k, index.dtype)), f, lambda: chain(rest[1:]))
    return chain(pairs)


@export("case")
def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first (pred, fn) whose pred holds, else `default()`. Without a default the last fn is it, and
    reaching it while its pred does not hold is an InvalidArgumentError when the function runs (TF's). With
    `exclusive`, more than one true pred is an InvalidArgumentError."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise user_error(TypeError("case: pred_fn_pairs must be a non-empty list of (predicate, callable) pairs"))
    for _, f in pairs:
        if not callable(f):
            raise user_error(TypeError(f"case: fn is not callable: {f!r}"))
    preds = [convert_to_tensor(p) for p, _ in pairs]
    if exclusive:
        count = add_n([math_ops.cast(p, "int32") for p in preds]) if len(preds) > 1 else \
            math_ops.cast(preds[0], "int32")
        require(math_ops.less_equal(count, 1),
                literal("Input error: exclusive=True and more than one predicate evaluated to True."))
    fns = [f for _, f in pairs]
    if default is None:
        last_pred, last_fn = preds.pop(), fns.pop()

        def default():
            require(last_pred, literal("None of the conditions evaluated as True."))
            return last_fn()

    def chain(i):
        if i == len(preds):
            return default()
        return cond(preds[i], fns[i], lambda: chain(i + 1))
    return chain(0)


@export("vectorized_map")
def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """fn on each slice of elems along dim 0, the results stacked (tfn.map_fn's loop), their structure and dtypes
    those fn returns: eagerly from the calls, traced from one trace of fn on a slice in a throw-away graph."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if graph_mod.current() is None:
        n = flat[0].shape[0]
        outs = [fn(nest.pack_sequence_as(elems, [e[i] for e in flat])) for i in range(n)]
        if not outs:
            return map_fn(fn, elems)
        columns = zip(*[[convert_to_tensor(o) for o in nest.flatten(out)] for out in outs])
        return nest.pack_sequence_as(outs[0], [array_ops.stack(list(c)) for c in columns])
    with graph_mod.FuncGraph("vectorized_map_probe"):
        slice_specs = [TensorSpec(e.shape[1:], e.dtype).placeholder_value() for e in flat]
        probe = fn(nest.pack_sequence_as(elems, slice_specs))
    signature = nest.map_structure(lambda t: TensorSpec(convert_to_tensor(t).shape, convert_to_tensor(t).dtype),
                                   probe)
    return map_fn(fn, elems, fn_output_signature=signature)


@export("numpy_function")
def numpy_function(func, inp, Tout, stateful=True, name=None):
    """`func` run in Python on the inputs as NumPy arrays (`tf.numpy_function`): tfn.py_function's call, with
    arrays instead of tensors."""
    def on_arrays(*tensors):
        return func(*[np.asarray(t.numpy()) for t in tensors])
    on_arrays.__name__ = getattr(func, "__name__", "numpy_function")
    return py_function(on_arrays, inp, Tout, name)


