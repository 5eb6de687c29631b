"""`tfn.map_fn`: fn applied to the slices of elems along their first dim, the results stacked. Eagerly a Python
loop; traced a `tfn.while_loop` writing each result into a `tfn.TensorArray` (so the number of slices may be known
only when the function runs, and fn is traced once)."""
from tfn import dtypes, nest
from tfn.core import graph as graph_mod
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.ops import array_ops, fill_ops, shape_ops
from tfn.ops.composite import user_error
from tfn.ops.control_flow import while_loop
from tfn.ops.tensor_array import TensorArray


def _signature(elems, flat, signature):
    """The structure of fn's results and, per leaf, (dtype, element shape or None)."""
    if signature is None:
        return elems, [(e.dtype, None) for e in flat]
    leaves = []
    for s in nest.flatten(signature):
        if isinstance(s, TensorSpec):
            leaves.append((s.dtype, None if s.shape.rank is None else s.shape))
        else:
            leaves.append((dtypes.as_dtype(s), None))
    return signature, leaves


def _check_results(results, leaves):
    flat = [convert_to_tensor(r) for r in nest.flatten(results)]
    if len(flat) != len(leaves):
        raise user_error(ValueError(f"map_fn: fn returned {len(flat)} tensor(s) but fn_output_signature (or the "
                                    f"structure of elems) names {len(leaves)}"))
    for r, (dt, _) in zip(flat, leaves):
        if r.dtype is not dt:
            raise user_error(TypeError(f"map_fn: fn returned a {r.dtype.name} tensor where {dt.name} was expected; "
                                       "pass fn_output_signature when fn's results differ from elems"))
    return flat


@export("map_fn")
def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """[fn(x) for x in elems] stacked: elems (a tensor or a nested structure of tensors with one leading size) is
    unstacked along dim 0; fn's results have the structure and dtypes of `fn_output_signature` (or `dtype`;
    default: those of elems)."""
    if not callable(fn):
        raise user_error(TypeError(f"map_fn: fn must be callable, got {fn!r}"))
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise user_error(ValueError(f"map_fn: elems must be a tensor or a nested structure of tensors, got {elems!r}"))
    if any(e.ndim == 0 for e in flat):
        raise user_error(ValueError("map_fn: the elements of elems must be 1+ dimensional"))
    sizes = {e._shape[0] for e in flat} - {None}
    if len(sizes) > 1:
        raise user_error(ValueError(f"map_fn: the tensors of elems have different first dims {sorted(sizes)}"))
    structure, leaves = _signature(elems, flat, fn_output_signature if fn_output_signature is not None else dtype)
    if graph_mod.current() is None:
        return _eager(fn, elems, flat, structure, leaves)
    n = next(iter(sizes)) if sizes else shape_ops.shape(flat[0])[0]
    # (a run-time count: arrays that grow as they are written, TensorArray's form for a size known only then)
    arrays = [TensorArray(dt, size=n, element_shape=shape) if sizes else
              TensorArray(dt, size=0, dynamic_size=True, element_shape=shape) for dt, shape in leaves]

    def body(i, *tas):
        results = _check_results(fn(nest.pack_sequence_as(elems, [e[i] for e in flat])), leaves)
        for r, (_, shape) in zip(results, leaves):
            if shape is None and None in r._shape:
                raise user_error(ValueError(f"map_fn: fn returned a tensor of shape {r.shape}, not fully known "
                                            "when traced; pass fn_output_signature=tfn.TensorSpec(<its static "
                                            "shape>, <dtype>)"))
        return (i + 1,) + tuple(ta.write(i, r) for ta, r in zip(tas, results))
    out = while_loop(lambda i, *tas: i < n, body, [convert_to_tensor(0)] + arrays)
    return nest.pack_sequence_as(structure, [ta.stack() for ta in out[1:]])


def _eager(fn, elems, flat, structure, leaves):
    n = flat[0]._shape[0]
    rows = [_check_results(fn(nest.pack_sequence_as(elems, [e[i] for e in flat])), leaves) for i in range(n)]
    if not rows:
        return nest.pack_sequence_as(structure, [fill_ops.zeros([0] + ([] if s is None else s.as_list()), dt)
                                                 for dt, s in leaves])
    return nest.pack_sequence_as(structure, [array_ops.stack([r[k] for r in rows]) for k in range(len(leaves))])
