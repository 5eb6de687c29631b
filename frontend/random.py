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
from tfn.ops import array_ops, math_ops, reduction_ops, shape_ops, sort_ops
from tfn.ops.slicing_ops import gather
from tfn.state.variables import Variable, init_scope

# The public surface (what `dir(tfn.random)` lists); the rest are this module's helpers and imports.
__all__ = ["bitwise_xor", "categorical", "normal", "philox4x32", "set_seed", "shuffle", "stateless_categorical",
           "stateless_normal", "stateless_truncated_normal", "stateless_uniform", "truncated_normal", "uniform"]

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


class _Stateless:
    """The words of a stateless draw (`tf.random.stateless_*`): Philox under the key `seed` (a shape [2] int
    tensor), counters 0, 1, ... of stream `part` (the high counter word), which each draw of one op advances (a
    normal draw takes two uniform ones). Nothing global is read or advanced: the same seed, the same numbers."""

    def __init__(self, seed, op):
        seed = convert_to_tensor(seed)
        if not seed.dtype.is_integer:
            raise InvalidArgumentError(f"seed must be an int32 or int64 tensor, got {seed.dtype.name} [Op:{op}]")
        if list(seed.shape) != [2]:
            raise InvalidArgumentError(f"seed must have shape [2], not {list(seed.shape)} [Op:{op}]")
        seed = math_ops.cast(seed, dtypes.int64)
        self.key = [seed[0], seed[1]]
        self.part = 0

    def __call__(self, shape):
        sizes, dims = shape
        stream = [convert_to_tensor(np.int64(0)), convert_to_tensor(np.int64(self.part))]
        self.part += 1
        return apply(ops.philox4x32, stream + self.key + dims, {"shape": tuple(sizes)})


def _stateful(seed):
    """The word source of the stateful draws: the global counter, advanced by each (_words)."""
    return lambda shape: _words(shape, seed)


def _unit(shape, words):
    """Uniform float32 in [0, 1) on a 2**-23 grid (the top 23 bits of each word of `words(shape)`)."""
    return math_ops.cast(math_ops.floordiv(words(shape), 512), dtypes.float32) * np.float32(2.0**-23)


_UNIFORM_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform numbers in [minval, maxval) (`tf.random.uniform`; maxval defaults to 1 for floats)."""
    return _uniform(_draw_shape(shape, "RandomUniform"), minval, maxval, dtype, _stateful(seed))


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"):
    """`tf.random.stateless_uniform`: uniform numbers that depend on `seed` (shape [2]) alone (_Stateless)."""
    return _uniform(_draw_shape(shape, "StatelessRandomUniformV2"), minval, maxval, dtype,
                    _Stateless(seed, "StatelessRandomUniformV2"))


def _uniform(dims, minval, maxval, dtype, words):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         f"{', '.join(d.name for d in _UNIFORM_DTYPES)}.")
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype")
        lo, hi = int(minval), int(maxval)
        if lo >= hi:  # (a draw modulo max(hi - lo, 1) was minval every time)
            raise InvalidArgumentError(f"Need minval < maxval: {lo} >= {hi} [Op:RandomUniformInt]")
        draw = math_ops.floormod(words(dims), max(hi - lo, 1)) + lo
        return math_ops.cast(draw, dtype)
    maxval = 1.0 if maxval is None else maxval
    u = _unit(dims, words)
    return math_ops.cast(u * (math_ops.cast(maxval, dtypes.float32) - minval) + minval, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers (`tf.random.normal`), by the Box-Muller transform of two uniform draws."""
    return _normal(_draw_shape(shape, "RandomStandardNormal"), mean, stddev, dtype, _stateful(seed))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """`tf.random.stateless_normal`: normal numbers that depend on `seed` (shape [2]) alone (_Stateless)."""
    op = "StatelessRandomNormalV2"
    return _normal(_draw_shape(shape, op), mean, stddev, dtype, _Stateless(seed, op))


def _float_dtype(dtype):
    """A normal draw's dtype, checked: an integer cast of normal draws is mostly 0 and +-1."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        "values: float16, float32, float64")
    return dtype


def _normal(dims, mean, stddev, dtype, words):
    _float_dtype(dtype)
    u1 = 1.0 - _unit(dims, words)  # in (0, 1]: log stays finite
    u2 = _unit(dims, words)
    z = math_ops.sqrt(-2.0 * math_ops.log(u1)) * math_ops.cos(u2 * np.float32(2 * _pymath.pi))
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers within two standard deviations (`tf.random.truncated_normal`).

    Samples outside are redrawn four times, then clipped: the chance one survives 4 redraws is 0.0455**5 ~ 2e-7."""
    return _truncated(_draw_shape(shape, "TruncatedNormal"), mean, stddev, dtype, _stateful(seed))


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                               alg="auto_select"):
    """`tf.random.stateless_truncated_normal`: truncated_normal's numbers from `seed` (shape [2]) alone."""
    op = "StatelessTruncatedNormalV2"
    return _truncated(_draw_shape(shape, op), mean, stddev, dtype, _Stateless(seed, op))


def _truncated(dims, mean, stddev, dtype, words):
    _float_dtype(dtype)
    z = _normal(dims, 0.0, 1.0, dtypes.float32, words)
    for _ in range(4):
        z = math_ops.where(math_ops.abs(z) > 2.0, _normal(dims, 0.0, 1.0, dtypes.float32, words), z)
    z = math_ops.minimum(math_ops.maximum(z, -2.0), 2.0)
    return math_ops.cast(z * stddev + mean, dtypes.as_dtype(dtype))


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: num_samples class indices per row of logits [batch, classes], class j drawn with
    probability softmax(logits)[j]: the Gumbel-max draw, argmax over j of logits + G (G = -log(-log(u)), u
    uniform in (0, 1)); a class whose logit is -inf is never drawn."""
    return _categorical(logits, num_samples, dtype, _stateful(seed), "Multinomial")


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`tf.random.stateless_categorical`: categorical's draw from `seed` (shape [2]) alone."""
    op = "StatelessMultinomial"
    return _categorical(logits, num_samples, dtype, _Stateless(seed, op), op)


def _categorical(logits, num_samples, dtype, words, op):
    logits = convert_to_tensor(logits)
    if not logits.dtype.is_floating:
        raise InvalidArgumentError(f"logits must be a float tensor, got {logits.dtype.name} [Op:{op}]")
    if logits.ndim != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape {list(logits.shape)} [Op:{op}]")
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"output dtype must be int32 or int64, got {dtype.name} [Op:{op}]")
    batch, classes = logits.shape
    batch = shape_ops.shape(logits, dtypes.int64)[0] if batch is None else batch
    classes = shape_ops.shape(logits, dtypes.int64)[1] if classes is None else classes
    dims = _draw_shape([batch, num_samples, classes], op)
    u = _unit(dims, words) + np.float32(2.0**-24)  # in (0, 1): both logs finite
    gumbel = -math_ops.log(-math_ops.log(u))
    scores = array_ops.expand_dims(math_ops.cast(logits, dtypes.float32), 1) + gumbel
    return math_ops.cast(reduction_ops.argmax(scores, axis=2), dtype)


def shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted (`tf.random.shuffle`): the positions ordered by random
    keys (a stable argsort: equal keys keep their order), O(n) compiled."""
    value = convert_to_tensor(value)
    if value.ndim == 0:
        raise ValueError(f"tfn.random.shuffle needs a tensor of rank >= 1, got a scalar {value!r}")
    n = value.shape[0]
    if n is None:  # known when the function runs
        n = shape_ops.shape(value, dtypes.int64)[0]
    keys = _words(_draw_shape([n], "RandomShuffle"), seed)
    return gather(value, sort_ops.argsort(keys, stable=True))


def __dir__():
    return list(__all__)
