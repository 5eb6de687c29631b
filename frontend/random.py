"""`tfn.random`: seeded random tensors that run eagerly and inside compiled functions alike.

The generator is Philox 4x32-10 (Salmon et al., SC'11; TF and JAX use it), counter based: a draw of n numbers
encrypts the counters c, c + 1, ..., c + n/4 under the key (global seed, op seed), where c is an int64
tfn.Variable that each draw advances. So a compiled function draws new numbers on every call, the same numbers
for the same seed, and eager and compiled runs agree bit for bit. The rounds are one op, tfn.philox4x32 (a NumPy
kernel eagerly, one loop over the counter blocks compiled).
Streams are not TF's: TF derives its keys and counters from seeds differently.
"""
import math as _pymath

import numpy as np

from tfn import dtypes
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects import ops
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.ops_random import blocks_of
from tfn.dialects.types import check_size
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.slicing_ops import gather
from tfn.state.variables import Variable, init_scope

# The public surface (what `dir(tfn.random)` lists); the rest are this module's helpers and imports.
__all__ = ["bitwise_xor", "normal", "philox4x32", "set_seed", "shuffle", "truncated_normal", "uniform"]

_PRIME = 2**31 - 1  # seeds are kept modulo this
_DEFAULT_SEED = 87654321
_2_32 = 2**32


class _State:
    """The global seed, the draw counter (created on first use, outside any trace) and the NumPy generator."""

    seed = None
    counter = None  # int64 Variables, read when the draw runs (not when it is traced)
    seed_var = None
    numpy_rng = np.random.default_rng()


def set_seed(seed):
    """Fix the global seed (`tf.random.set_seed`): later draws, shuffles and initialisers repeat run to run."""
    _State.seed = int(seed)
    _State.numpy_rng = np.random.default_rng(int(seed))
    if _State.counter is not None:
        with init_scope():
            _State.counter.assign(np.int64(0))
            _State.seed_var.assign(np.int64(int(seed) % _PRIME))


def get_global_generator_seed():
    """The global seed in effect (the default one when set_seed was never called)."""
    return _DEFAULT_SEED if _State.seed is None else _State.seed


def numpy_generator():
    """The NumPy generator seeded by set_seed, for host-side randomness (initialisers, fit's shuffling)."""
    return _State.numpy_rng


def _variables():
    """(counter, seed) variables: made once, lifted out of whatever trace first draws."""
    if _State.counter is None:
        with init_scope():
            _State.counter = Variable(np.int64(0), trainable=False, name="random_counter")
            _State.seed_var = Variable(np.int64(get_global_generator_seed() % _PRIME), trainable=False,
                                       name="random_seed")
    return _State.counter, _State.seed_var


def _draw_shape(shape, op):
    """`shape` as (sizes, dims): Python ints, -1 where a size is known only when the function runs, and those
    sizes as int64 scalar tensors in order. `shape` is a list or tuple of ints and scalar int tensors, a 1-D int
    tensor (of known length while tracing) or a fully defined TensorShape."""
    shape = known(shape)
    if isinstance(shape, TensorShape):
        if shape.rank is None or None in shape.as_list():
            raise ValueError(f"{op}: the shape {shape} is not fully defined; pass tfn.shape(x) for sizes known "
                             "only when the function runs")
        shape = shape.as_list()
    if isinstance(shape, (TensorBase, np.ndarray)):
        if shape.ndim != 1 or not dtypes.as_dtype(shape.dtype).is_integer:
            raise InvalidArgumentError(f"shape must be a vector of {{int32,int64}}, got "
                                       f"{dtypes.as_dtype(shape.dtype).name} of shape {list(shape.shape)} [Op:{op}]")
        if isinstance(shape, SymbolicTensor):
            if shape._shape[0] is None:
                raise ValueError(f"{op}: a shape computed at run time must be a 1-D tensor of known length, got "
                                 f"{shape!r}")
            shape = [shape[i] for i in range(shape._shape[0])]
        else:
            shape = np.asarray(shape.numpy() if isinstance(shape, Tensor) else shape).tolist()
    if not isinstance(shape, (list, tuple)):
        raise InvalidArgumentError(f"shape must be a vector of {{int32,int64}}, got {shape!r} [Op:{op}]")
    sizes, dims = [], []
    for d in shape:
        d = known(d)
        if isinstance(d, Tensor) and d.ndim == 0 and d.dtype.is_integer:
            d = int(d.numpy())
        if isinstance(d, SymbolicTensor) and d.ndim == 0 and d.dtype.is_integer:
            sizes.append(-1)
            dims.append(math_ops.cast(d, dtypes.int64))
        elif isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)):
            if d < 0:
                raise InvalidArgumentError(f"Dimension {d} must be >= 0 [Op:{op}]")
            sizes.append(int(d))
        elif isinstance(d, (list, tuple)) or getattr(d, "ndim", 0):
            raise InvalidArgumentError(f"shape must be a vector of {{int32,int64}}, got {shape!r} [Op:{op}]")
        else:
            raise TypeError(f"{op}: each size of the shape must be an int or a scalar int tensor, got {d!r}")
    check_size([d for d in sizes if d >= 0], dtypes.int64)  # (TF's overflow error before the count of draws)
    return sizes, dims


@op_api(ops.bitwise_xor)
def bitwise_xor(x, y, name=None):
    """x ^ y on integer tensors (TF's tf.bitwise.bitwise_xor)."""
    return apply(ops.bitwise_xor, tensors(x, y))


@op_api(ops.philox4x32)
def philox4x32(counter_low, counter_high, key0, key1, count):
    """`count` words (int64 tensor, each < 2**32) of Philox 4x32-10: the four words of block b encrypt the counter
    (low, high word of counter_low + b, low, high word of counter_high) under the key (key0, key1) (low 32 bits
    each); int64 scalars read as their bit patterns (tfn.dialects.ops_random). `count` is an int or, known only
    when the function runs, a scalar int tensor."""
    words = [convert_to_tensor(v, dtypes.int64) for v in (counter_low, counter_high, key0, key1)]
    sizes, dims = _draw_shape([count], "Philox4x32")
    return apply(ops.philox4x32, words + dims, {"shape": tuple(sizes)})


def _words(shape, seed):
    """int64 tensor of `shape` ((sizes, dims) of _draw_shape) holding 32 random bits per element, the global
    counter advanced by their blocks (a quarter of their count)."""
    counter, global_seed = _variables()
    start = counter.value()
    sizes, dims = shape
    if dims:  # max(ceil(count / 4), 1) blocks, computed when the function runs
        count = dims[0] * np.int64(_pymath.prod(d for d in sizes if d != -1))
        for d in dims[1:]:
            count = count * d
        counter.assign_add(math_ops.maximum(math_ops.floordiv(count + 3, 4), np.int64(1)))
    else:
        counter.assign_add(np.int64(blocks_of(_pymath.prod(sizes))))
    key1 = np.int64(0 if seed is None else int(seed) % _2_32)
    words = [start, convert_to_tensor(np.int64(0)), global_seed.value(), convert_to_tensor(key1)]
    return apply(ops.philox4x32, words + dims, {"shape": tuple(sizes)})


def _unit(shape, seed):
    """Uniform float32 in [0, 1) on a 2**-23 grid (the top 23 bits of each word)."""
    return math_ops.cast(math_ops.floordiv(_words(shape, seed), 512), dtypes.float32) * np.float32(2.0**-23)


_UNIFORM_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform numbers in [minval, maxval) (`tf.random.uniform`; maxval defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         f"{', '.join(d.name for d in _UNIFORM_DTYPES)}.")
    dims = _draw_shape(shape, "RandomUniform")
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype")
        lo, hi = int(minval), int(maxval)
        if lo >= hi:  # (a draw modulo max(hi - lo, 1) was minval every time)
            raise InvalidArgumentError(f"Need minval < maxval: {lo} >= {hi} [Op:RandomUniformInt]")
        draw = math_ops.floormod(_words(dims, seed), max(hi - lo, 1)) + lo
        return math_ops.cast(draw, dtype)
    maxval = 1.0 if maxval is None else maxval
    u = _unit(dims, seed)
    return math_ops.cast(u * (math_ops.cast(maxval, dtypes.float32) - minval) + minval, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers (`tf.random.normal`), by the Box-Muller transform of two uniform draws."""
    return _normal(_draw_shape(shape, "RandomStandardNormal"), mean, stddev, dtype, seed)


def _float_dtype(dtype):
    """A normal draw's dtype, checked: an integer cast of normal draws is mostly 0 and +-1."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        "values: float16, float32, float64")
    return dtype


def _normal(dims, mean, stddev, dtype, seed):
    _float_dtype(dtype)
    u1 = 1.0 - _unit(dims, seed)  # in (0, 1]: log stays finite
    u2 = _unit(dims, seed)
    z = math_ops.sqrt(-2.0 * math_ops.log(u1)) * math_ops.cos(u2 * np.float32(2 * _pymath.pi))
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers within two standard deviations (`tf.random.truncated_normal`).

    Samples outside are redrawn four times, then clipped: the chance one survives 4 redraws is 0.0455**5 ~ 2e-7."""
    _float_dtype(dtype)
    dims = _draw_shape(shape, "TruncatedNormal")
    z = _normal(dims, 0.0, 1.0, dtypes.float32, seed)
    for _ in range(4):
        z = math_ops.where(math_ops.abs(z) > 2.0, _normal(dims, 0.0, 1.0, dtypes.float32, seed), z)
    z = math_ops.minimum(math_ops.maximum(z, -2.0), 2.0)
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted (`tf.random.shuffle`), by sorting random keys."""
    value = convert_to_tensor(value)
    if value.ndim == 0:
        raise ValueError(f"tfn.random.shuffle needs a tensor of rank >= 1, got a scalar {value!r}")
    n = value.shape[0]
    if n is None:  # known when the function runs
        n = shape_ops.shape(value, dtypes.int64)[0]
    keys = _words(_draw_shape([n], "RandomShuffle"), seed)
    # rank of each key among all keys (ties broken by position): an n x n comparison, fine for the sizes shuffled
    ki, kj = array_ops.expand_dims(keys, 1), array_ops.expand_dims(keys, 0)
    pos = fill_ops.range(0, n, dtype=dtypes.int64)
    pi, pj = array_ops.expand_dims(pos, 1), array_ops.expand_dims(pos, 0)
    before = math_ops.logical_or(kj < ki, math_ops.logical_and(math_ops.equal(kj, ki), pj < pi))
    rank = reduction_ops.reduce_sum(math_ops.cast(before, dtypes.int64), axis=1)
    # the element whose rank is r goes to position r
    order = reduction_ops.argmax(math_ops.cast(math_ops.equal(array_ops.expand_dims(rank, 0), pi), dtypes.int32),
                            axis=1)
    return gather(value, order)


def __dir__():
    return list(__all__)
