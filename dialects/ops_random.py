"""The random-number op: philox4x32, tfn.random's counter-based generator (Philox 4x32-10, Salmon et al., SC'11).

Block b of a draw encrypts the 128-bit counter whose four 32-bit words are (low, high word of counter_low + b
(modulo 2**64), low, high word of counter_high) under the key (low 32 bits of key0, low 32 bits of key1) in ten
rounds; the draw is the blocks' four 32-bit words in order, the first `count` of them, each held in an int64
(0 <= word < 2**32), laid out row-major in the result's shape (count = its number of elements). Integers are read
as their 64-bit two's-complement patterns. One op, so the compiled generator is one loop over the blocks (written
with elementwise int64 ops it was ~200 loops).

The `shape` attribute holds the result's sizes; a -1 is a size known only when the function runs, taken from the
int64 scalar operands `dims` in order. The words of a draw depend on its element count only, so a shape given at
run time draws the numbers the same shape given while tracing does."""
import math

import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType, check_memory

M0, M1 = 0xD2511F53, 0xCD9E8D57  # the round multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # the key bumps (Weyl sequence)
ROUNDS = 10
OPERANDS = ("counter_low", "counter_high", "key0", "key1")
_MASK = np.uint64(0xFFFFFFFF)


def blocks_of(count):
    """The 128-bit blocks a draw of `count` words encrypts (at least one)."""
    return max(-(-count // 4), 1)


def negative_dim_message(d):
    return f"Dimension {d} must be >= 0"


def too_many_message(sizes):
    return f"Shape [{','.join('?' if d is None else str(d) for d in sizes)}] would have more than 2**63 - 1 elements"


def _infer(types, attrs):
    for what, t in zip(OPERANDS + ("dims",) * (len(types) - len(OPERANDS)), types):
        if t.rank != 0 or t.dtype != dtypes.int64:
            raise InvalidArgumentError(f"{what} must be an int64 scalar, got {t.dtype.name} of shape {list(t.shape)} "
                                       "[Op:Philox4x32]")
    shape = attrs["shape"]
    for d in shape:
        if d < -1:
            raise InvalidArgumentError(negative_dim_message(d) + " [Op:Philox4x32]")
    if shape.count(-1) != len(types) - len(OPERANDS):
        raise InvalidArgumentError(f"shape {list(shape)} has {shape.count(-1)} sizes known at run time (-1) but "
                                   f"{len(types) - len(OPERANDS)} dims were given [Op:Philox4x32]")
    return TensorType([None if d == -1 else d for d in shape], dtypes.int64)


def draw_sizes(shape, dims):
    """The sizes of a draw: `shape` with each -1 replaced by the next of `dims` (ints); InvalidArgumentError as TF
    for a negative size or an element count past int64."""
    dims = iter(dims)
    sizes = [int(next(dims)) if d == -1 else int(d) for d in shape]
    for d in sizes:
        if d < 0:
            raise InvalidArgumentError(negative_dim_message(d) + " [Op:Philox4x32]")
    if math.prod(sizes) >= 2**63:
        raise InvalidArgumentError(too_many_message(sizes) + " [Op:Philox4x32]")
    return sizes


def _kernel(arrays, attrs):
    sizes = draw_sizes(attrs["shape"], (a[()] for a in arrays[len(OPERANDS):]))
    check_memory(TensorType(sizes, dtypes.int64))
    return philox_words(*(a[()] for a in arrays[:len(OPERANDS)]), math.prod(sizes)).reshape(sizes)


def philox_words(counter_low, counter_high, key0, key1, count):
    """The NumPy kernel: `count` words (int64 array) of the draw described in the module docstring."""
    with np.errstate(over="ignore"):
        ctr = np.arange(blocks_of(count), dtype=np.uint64) + np.uint64(int(counter_low) & 0xFFFFFFFFFFFFFFFF)
        high = int(counter_high) & 0xFFFFFFFFFFFFFFFF
        c0, c1 = ctr & _MASK, ctr >> np.uint64(32)
        c2, c3 = np.full_like(ctr, high & 0xFFFFFFFF), np.full_like(ctr, high >> 32)
        k0, k1 = int(key0) & 0xFFFFFFFF, int(key1) & 0xFFFFFFFF
        for r in range(ROUNDS):
            p0, p1 = c0 * np.uint64(M0), c2 * np.uint64(M1)  # 32 x 32 -> 64 bits: no overflow
            key_a, key_b = np.uint64((k0 + r * W0) & 0xFFFFFFFF), np.uint64((k1 + r * W1) & 0xFFFFFFFF)
            c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ key_a, p1 & _MASK,
                              (p0 >> np.uint64(32)) ^ c3 ^ key_b, p0 & _MASK)
    return np.stack([c0, c1, c2, c3], 1).reshape(-1)[:count].astype(np.int64)


define("philox4x32", list(OPERANDS) + ["*dims"], _infer, _kernel, {"shape": "i64s"},
       summary="a tensor of `shape` (-1: the next of `dims`, known at run time) holding random 32-bit words (as "
       "int64) of Philox 4x32-10 from the counter blocks (counter_low + b, counter_high) under the key (key0, key1)",
       differentiable=False, tf_api=())
