"""tf.nn.embedding_lookup: rows of params (a tensor, or a list of shards split by TF's "div" strategy: the shards in
order hold consecutive ids, so they are concatenated) gathered at ids; the gradient is gather's (a scatter-add of
the output gradient's rows into zeros of params' shape). max_norm rescales each looked-up row whose l2 norm is
above it, as TF's."""
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tfn.ops.composite import user_error


@export("nn.embedding_lookup")
def embedding_lookup(params, ids, max_norm=None, name=None):
    """params[ids] along the first dim: shape ids.shape + params.shape[1:]."""
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise user_error(ValueError("embedding_lookup: params must not be empty"))
    shards = [convert_to_tensor(p) for p in shards]
    table = shards[0] if len(shards) == 1 else array_ops.concat(shards, 0)
    ids = convert_to_tensor(ids)
    if not ids.dtype.is_integer:
        raise user_error(TypeError(f"embedding_lookup: ids must be int32 or int64, got {ids.dtype.name}"))
    out = slicing_ops.gather(table, ids)
    if max_norm is None:
        return out
    row_axes = list(range(ids.ndim, out.ndim))
    if not row_axes:
        return math_ops.minimum(math_ops.maximum(out, -max_norm), max_norm)
    norm = math_ops.sqrt(reduction_ops.reduce_sum(out * out, row_axes, keepdims=True))
    scale = math_ops.where(math_ops.greater(norm, max_norm), max_norm / math_ops.maximum(norm, 1e-30),
                           norm * 0 + 1)
    return out * scale
