"""Lowering of tfn.philox4x32: one linalg.generic over the counter blocks running the ten rounds on 32-bit words
(arith.mului_extended gives each 32 x 32 -> 64-bit product's halves), yielding the block's four words as four
tensors, and a second generic interleaving them (word j of block b at 4 b + j) widened to int64."""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import dtypes, ops
from tfn.dialects.ops_random import M0, M1, ROUNDS, W0, W1, blocks_of
from tfn.dialects.types import TensorType
from tfn.passes.lowering.common import affine_map, empty, generic, identity_map, lowering, parallel


def _i32(value):
    """An i32 constant of the 32-bit pattern `value` (taken modulo 2**32)."""
    value &= 0xFFFFFFFF
    return arith.constant(ir.IntegerType.get_signless(32), value - (1 << 32) if value >= 1 << 31 else value)


def _halves(word64):
    """(low, high) 32-bit halves of an i64."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    return arith.trunci(i32, word64), arith.trunci(i32, arith.shrui(word64, arith.constant(i64, 32)))


@lowering(ops.philox4x32)
def lower_philox4x32(rw):
    """tfn.philox4x32(counter_low, counter_high, key0, key1) -> the rounds per block (4 x i32 results), then the
    words interleaved."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    counter, high, key0, key1 = (tensor.extract(v, []) for v in rw.operands)
    count = rw.attrs["count"]
    blocks = blocks_of(count)
    k0, k1 = arith.trunci(i32, key0), arith.trunci(i32, key1)

    def rounds():
        ctr = arith.addi(counter, arith.index_cast(i64, linalg.IndexOp(0).result))
        c0, c1 = _halves(ctr)
        c2, c3 = _halves(high)
        for r in range(ROUNDS):
            lo0, hi0 = arith.mului_extended(c0, _i32(M0))
            lo1, hi1 = arith.mului_extended(c2, _i32(M1))
            key_a, key_b = arith.addi(k0, _i32(r * W0)), arith.addi(k1, _i32(r * W1))
            c0, c1, c2, c3 = arith.xori(arith.xori(hi1, c1), key_a), lo1, arith.xori(arith.xori(hi0, c3), key_b), lo0
        return [c0, c1, c2, c3]
    words_type = TensorType([blocks], dtypes.int32)
    words = generic([], [], [empty(words_type) for _ in range(4)], [identity_map(1)] * 4, parallel(1),
                    lambda *_: rounds())

    def interleave(w0, w1, w2, w3, _out):
        j = linalg.IndexOp(1).result
        word = w0
        for k, w in ((1, w1), (2, w2), (3, w3)):
            word = arith.select(arith.cmpi(arith.CmpIPredicate.eq, j, arith.constant(ir.IndexType.get(), k)), w,
                                word)
        return arith.extui(i64, word)
    by_block = affine_map(2, [ir.AffineDimExpr.get(0)])
    grid = generic(words, [by_block] * 4, [empty(TensorType([blocks, 4], dtypes.int64))], [identity_map(2)],
                   parallel(2), interleave)[0]
    flat = tensor.collapse_shape(ir.RankedTensorType.get([4 * blocks], i64), grid, [[0, 1]])
    if count == 4 * blocks:
        return [flat]
    return [tensor.extract_slice(ir.RankedTensorType.get([count], i64), flat, [], [], [], [0], [count], [1])]
