"""Lowering of tfn.philox4x32: one linalg.generic over the counter blocks running the ten rounds on 32-bit words
(arith.mului_extended gives each 32 x 32 -> 64-bit product's halves), yielding the block's four words as four
tensors, and a second generic interleaving them (word j of block b at 4 b + j) widened to int64, the first `count`
of them expanded to the result's shape. Sizes known at run time are checked (negative, more elements than int64
or the machine's memory hold): a bad one is reported and the draw is empty."""
import math

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import dtypes, ops, optable
from tfn.dialects import types as ttypes
from tfn.dialects.errors import ResourceExhaustedError
from tfn.dialects.ops_random import (
    M0,
    M1,
    OPERANDS,
    ROUNDS,
    W0,
    W1,
    blocks_of,
    negative_dim_message,
    too_many_message,
)
from tfn.dialects.types import TensorType, lowered_tensor_type
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import affine_map, empty, generic, identity_map, index, lowering, parallel


def _i32(value):
    """An i32 constant of the 32-bit pattern `value` (taken modulo 2**32)."""
    value &= 0xFFFFFFFF
    return arith.constant(ir.IntegerType.get_signless(32), value - (1 << 32) if value >= 1 << 31 else value)


def _halves(word64):
    """(low, high) 32-bit halves of an i64."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    return arith.trunci(i32, word64), arith.trunci(i32, arith.shrui(word64, arith.constant(i64, 32)))


def _sizes(rw):
    """The result's sizes as index values (static ones constant); a bad run-time size (negative, or the sizes'
    product past int64 or the machine's memory) is reported here, and then every run-time size is taken as 0."""
    shape, out = rw.attrs["shape"], rw.out
    dims = iter(rw.operands[len(OPERANDS):])
    runtime = [tensor.extract(next(dims), []) for d in shape if d == -1]
    if not runtime:
        return [index(d) for d in shape]
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    zero = arith.constant(i64, 0)
    negative = [arith.cmpi(arith.CmpIPredicate.slt, d, zero) for d in runtime]
    for bad, d in zip(negative, runtime):
        runtime_errors.report(rw, bad, [_NEGATIVE, d])
    # the product as an f64 (exact enough to tell 2**63 apart), then as an index once it is known to fit
    product = arith.constant(f64, float(math.prod(d for d in shape if d != -1)))
    for d in runtime:
        product = arith.mulf(product, arith.sitofp(f64, arith.maxsi(d, zero)))
    overflow = arith.cmpf(arith.CmpFPredicate.OGE, product, arith.constant(f64, 2.0 ** 63))
    runtime_errors.report(rw, overflow, [_TOO_MANY] + runtime)
    bad = overflow
    for b in negative:
        bad = arith.ori(bad, b)
    safe = [arith.index_cast(ir.IndexType.get(), arith.select(bad, zero, d)) for d in runtime]
    count = index(1)
    for d in safe:
        count = arith.muli(count, d)
    count = arith.muli(count, index(math.prod(d for d in shape if d != -1)))
    too_big = runtime_errors.exceeds_memory(rw.op, count, out.dtype.np.itemsize)
    runtime_errors.report(rw, too_big, [_OUT_OF_MEMORY] + runtime)
    safe = [arith.select(too_big, index(0), d) for d in safe]
    it = iter(safe)
    return [next(it) if d == -1 else index(d) for d in shape]


_NEGATIVE, _TOO_MANY, _OUT_OF_MEMORY = 0, 1, 2


def _format_philox(details, op):
    """The message of a bad run-time size: details are [kind, the run-time sizes (the bad one for _NEGATIVE)...]."""
    kind = details[0]
    if kind == _NEGATIVE:
        return negative_dim_message(details[1])
    runtime = iter(details[1:])
    shape = optable.decode_attrs(ops.philox4x32, op)["shape"]
    sizes = [next(runtime, None) if d == -1 else d for d in shape]
    if kind == _TOO_MANY:
        return too_many_message(sizes)
    return ResourceExhaustedError, ttypes.oom_message(sizes, dtypes.int64)


runtime_errors.may_fail(ops.philox4x32, _format_philox)


@lowering(ops.philox4x32)
def lower_philox4x32(rw):
    """tfn.philox4x32(counter_low, counter_high, key0, key1, dims...) -> the rounds per block (4 x i32 results),
    the words interleaved, the first `count` of them expanded to the result's shape."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    out = rw.out
    sizes = _sizes(rw)
    static = None not in out.shape
    count = math.prod(out.shape) if static else None
    if static:
        blocks, block_sizes = blocks_of(count), []
    else:  # max(ceil(count / 4), 1), count the product of the sizes
        n = index(1)
        for d in sizes:
            n = arith.muli(n, d)
        count = n
        blocks = None
        block_sizes = [arith.maxui(arith.ceildivui(n, index(4)), index(1))]

    def rounds(counter, high, key0, key1, *_outs):
        k0, k1 = arith.trunci(i32, key0), arith.trunci(i32, key1)
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
    # The counter and key are inputs read by the kernel itself (rank 0, the same at every block), not extracted
    # before it: on a GPU they are device memory, which the host code cannot read.
    scalars = list(rw.operands[:len(OPERANDS)])
    words = generic(scalars, [affine_map(1, [])] * len(scalars), [empty(words_type, block_sizes) for _ in range(4)],
                    [identity_map(1)] * 4, parallel(1), rounds)

    def interleave(w0, w1, w2, w3, _out):
        j = linalg.IndexOp(1).result
        word = w0
        for k, w in ((1, w1), (2, w2), (3, w3)):
            word = arith.select(arith.cmpi(arith.CmpIPredicate.eq, j, arith.constant(ir.IndexType.get(), k)), w,
                                word)
        return arith.extui(i64, word)
    by_block = affine_map(2, [ir.AffineDimExpr.get(0)])
    grid = generic(words, [by_block] * 4, [empty(TensorType([blocks, 4], dtypes.int64), block_sizes)],
                   [identity_map(2)], parallel(2), interleave)[0]
    flat_blocks = None if blocks is None else 4 * blocks
    flat = tensor.collapse_shape(lowered_tensor_type(TensorType([flat_blocks], dtypes.int64)), grid, [[0, 1]])
    if not static:
        flat = tensor.extract_slice(lowered_tensor_type(TensorType([None], dtypes.int64)), flat, [], [count], [],
                                    [0], [ir.ShapedType.get_dynamic_size()], [1])
    elif count != flat_blocks:
        flat = tensor.extract_slice(ir.RankedTensorType.get([count], i64), flat, [], [], [], [0], [count], [1])
    if out.rank == 1:
        return [flat]
    if out.rank == 0:
        return [tensor.collapse_shape(lowered_tensor_type(out), flat, [])]
    if static:
        return [tensor.expand_shape(lowered_tensor_type(out), flat, [list(range(out.rank))], [], list(out.shape))]
    # (tensor.expand_shape takes one run-time size per group at most)
    shape = tensor.from_elements(ir.RankedTensorType.get([out.rank], i64), [arith.index_cast(i64, d) for d in sizes])
    return [tensor.reshape(lowered_tensor_type(out), flat, shape)]
