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
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.dialects.ops_random import blocks_of
from tfn.ops import array_ops, fill_ops, math_ops, reduction_ops
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


def _static_shape(shape):
    dims = [int(d) for d in (shape.numpy().tolist() if hasattr(shape, "numpy") else shape)]
    if any(d < 0 for d in dims):
        raise ValueError(f"shape must have non-negative dimensions, got {dims}")
    return dims


@op_api(ops.bitwise_xor)
def bitwise_xor(x, y, name=None):
    """x ^ y on integer tensors (TF's tf.bitwise.bitwise_xor)."""
    return apply(ops.bitwise_xor, tensors(x, y))


@op_api(ops.philox4x32)
def philox4x32(counter_low, counter_high, key0, key1, count):
    """`count` words (int64 tensor, each < 2**32) of Philox 4x32-10: the four words of block b encrypt the counter
    (low, high word of counter_low + b, low, high word of counter_high) under the key (key0, key1) (low 32 bits
    each); int64 scalars read as their bit patterns (tfn.dialects.ops_random)."""
    words = [convert_to_tensor(v, dtypes.int64) for v in (counter_low, counter_high, key0, key1)]
    return apply(ops.philox4x32, words, {"count": int(count)})


def _words(dims, seed):
    """int64 tensor of `dims` holding 32 random bits per element (the counter advanced by a quarter of the count)."""
    n = int(np.prod(dims, dtype=np.int64))
    counter, global_seed = _variables()
    start = counter.value()
    counter.assign_add(np.int64(blocks_of(n)))
    key1 = np.int64(0 if seed is None else int(seed) % _2_32)
    return array_ops.reshape(philox4x32(start, np.int64(0), global_seed.value(), key1, n), dims)


def _unit(dims, seed):
    """Uniform float32 in [0, 1) on a 2**-23 grid (the top 23 bits of each word)."""
    return math_ops.cast(math_ops.floordiv(_words(dims, seed), 512), dtypes.float32) * np.float32(2.0**-23)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform numbers in [minval, maxval) (`tf.random.uniform`; maxval defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    dims = _static_shape(shape)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype")
        lo, hi = int(minval), int(maxval)
        draw = math_ops.floormod(_words(dims, seed), max(hi - lo, 1)) + lo
        return math_ops.cast(draw, dtype)
    maxval = 1.0 if maxval is None else maxval
    u = _unit(dims, seed)
    return math_ops.cast(u * (math_ops.cast(maxval, dtypes.float32) - minval) + minval, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers (`tf.random.normal`), by the Box-Muller transform of two uniform draws."""
    dims = _static_shape(shape)
    u1 = 1.0 - _unit(dims, seed)  # in (0, 1]: log stays finite
    u2 = _unit(dims, seed)
    z = math_ops.sqrt(-2.0 * math_ops.log(u1)) * math_ops.cos(u2 * np.float32(2 * _pymath.pi))
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers within two standard deviations (`tf.random.truncated_normal`).

    Samples outside are redrawn four times, then clipped: the chance one survives 4 redraws is 0.0455**5 ~ 2e-7."""
    dims = _static_shape(shape)
    z = normal(dims, seed=seed)
    for _ in range(4):
        z = math_ops.where(math_ops.abs(z) > 2.0, normal(dims, seed=seed), z)
    z = math_ops.minimum(math_ops.maximum(z, -2.0), 2.0)
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted (`tf.random.shuffle`), by sorting random keys."""
    value = convert_to_tensor(value)
    n = value.shape[0]
    if n is None:
        raise ValueError("tfn.random.shuffle needs a static first dimension")
    keys = _words([n], seed)
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
