"""The random-number op: philox4x32, tfn.random's counter-based generator (Philox 4x32-10, Salmon et al., SC'11).

Block b of a draw encrypts the 128-bit counter whose four 32-bit words are (low, high word of counter_low + b
(modulo 2**64), low, high word of counter_high) under the key (low 32 bits of key0, low 32 bits of key1) in ten
rounds; the draw is the blocks' four 32-bit words in order, the first `count` of them, each held in an int64
(0 <= word < 2**32). Integers are read as their 64-bit two's-complement patterns. One op, so the compiled
generator is one loop over the blocks (written with elementwise int64 ops it was ~200 loops)."""
import numpy as np

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.optable import define
from tfn.dialects.types import TensorType

M0, M1 = 0xD2511F53, 0xCD9E8D57  # the round multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # the key bumps (Weyl sequence)
ROUNDS = 10
OPERANDS = ("counter_low", "counter_high", "key0", "key1")
_MASK = np.uint64(0xFFFFFFFF)


def blocks_of(count):
    """The 128-bit blocks a draw of `count` words encrypts (at least one)."""
    return max(-(-count // 4), 1)


def _infer(types, attrs):
    for what, t in zip(OPERANDS, types):
        if t.rank != 0 or t.dtype != dtypes.int64:
            raise InvalidArgumentError(f"{what} must be an int64 scalar, got {t.dtype.name} of shape {list(t.shape)} "
                                       "[Op:Philox4x32]")
    if attrs["count"] < 0:
        raise InvalidArgumentError(f"count must be >= 0, got {attrs['count']} [Op:Philox4x32]")
    return TensorType([attrs["count"]], dtypes.int64)


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


define("philox4x32", list(OPERANDS), _infer,
       lambda a, at: philox_words(*(x[()] for x in a), at["count"]), {"count": "i64"},
       summary="`count` random 32-bit words (as int64) of Philox 4x32-10 from the counter blocks (counter_low + b, "
       "counter_high) under the key (key0, key1)", differentiable=False, tf_api=())
