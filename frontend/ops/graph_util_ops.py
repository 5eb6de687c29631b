"""TF's small top-level helpers: tf.no_op, tf.group, tf.identity_n, tf.get_static_value, tf.newaxis,
tf.broadcast_static_shape, tf.broadcast_dynamic_shape, tf.foldl / tf.foldr (a tfn.while_loop over the first dim),
and the tf.math / tf.linalg aliases of tf.nn's softmax, log_softmax, softsign and l2_normalize."""
import numpy as np

from tfn import nest
from tfn.core.api import export
from tfn.core.tensor import Tensor, TensorBase, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import rules
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import activation_ops, array_ops, control_flow, math_ops, nn_ops, normalization_ops, shape_ops, slicing_ops
from tfn.ops.composite import user_error

export("math.softmax")(nn_ops.softmax)
export("math.log_softmax")(nn_ops.log_softmax)
export("math.softsign")(activation_ops.softsign)
export("linalg.l2_normalize")(normalization_ops.l2_normalize)
newaxis = None
export("newaxis")(newaxis)


@export("no_op")
def no_op(name=None):
    """Nothing (eager and traced ops run in program order, so there is nothing to wait for)."""
    return None


@export("group")
def group(*inputs, **kwargs):
    """Nothing: TF's grouping of side effects (tfn runs ops in program order, so they are done already)."""
    return None


@export("identity_n")
def identity_n(input, name=None):  # noqa: A002
    """A list of the identities of each tensor of `input`."""
    return [math_ops.identity(convert_to_tensor(x)) for x in input]


@export("get_static_value")
def get_static_value(tensor, partial=False):
    """tensor's value as a NumPy array when it is known without running a traced function (an eager tensor, or a
    traced one computed from constants), else None."""
    if not isinstance(tensor, TensorBase):
        return np.asarray(tensor)
    value = known(tensor)
    return value.numpy() if isinstance(value, Tensor) else None


@export("broadcast_static_shape")
def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape both shapes broadcast to (ValueError when they are incompatible)."""
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    if x.rank is None or y.rank is None:
        return TensorShape(None)
    try:
        return TensorShape(rules.broadcast_shapes("BroadcastArgs", tuple(x.as_list()), tuple(y.as_list())))
    except InvalidArgumentError:
        raise user_error(ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")) from None


@export("broadcast_dynamic_shape")
def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (an int tensor) that shapes shape_x and shape_y (int tensors) broadcast to."""
    sx, sy = convert_to_tensor(shape_x), convert_to_tensor(shape_y)
    probe = array_ops.broadcast_to(convert_to_tensor(0, sx.dtype), sx) + array_ops.broadcast_to(
        convert_to_tensor(0, sx.dtype), math_ops.cast(sy, sx.dtype))
    return shape_ops.shape(probe, out_type=sx.dtype)


def _fold(fn, elems, initializer, reverse):
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    n = flat[0]._shape[0] if flat[0]._shape[0] is not None else shape_ops.shape(flat[0])[0]

    def item(i):
        return nest.pack_sequence_as(elems, [slicing_ops.gather(e, i) for e in flat])

    def index(k):
        return n - 1 - k if reverse else k
    if initializer is None:
        acc, k = item(index(0)), 1
    else:
        acc, k = initializer, 0
    acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]

    def body(k, *acc_flat):
        out = fn(nest.pack_sequence_as(acc, list(acc_flat)), item(index(k)))
        return (k + 1, *[convert_to_tensor(a) for a in nest.flatten(out)])
    result = control_flow.while_loop(lambda k, *_: math_ops.less(k, n), body, (convert_to_tensor(k), *acc_flat))
    return nest.pack_sequence_as(acc, list(result[1:]))


@export("foldl")
def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n - 1]) (initializer None: elems[0] starts)."""
    return _fold(fn, elems, initializer, False)


@export("foldr")
def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """foldl over elems in reverse order (initializer None: elems[-1] starts)."""
    return _fold(fn, elems, initializer, True)
