"""Lowering of reductions to linalg.reduce over a linalg.fill of the identity, and argmax/argmin to a
linalg.generic carrying (value, index) pairs."""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import dtypes, ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import DETAIL_LEN
from tfn.dialects.ops_reduction import extreme, reduced_shape
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import (
    affine_map,
    dim,
    dynamic_sizes,
    empty,
    generic,
    identity_map,
    index,
    lowering,
    map_elementwise,
    parallel,
    reduction,
)

# op -> (identity(dtype), combine(dtype, element, accumulator))
REDUCERS = {
    ops.reduce_sum: (lambda dt: 0, s.add),
    ops.reduce_mean: (lambda dt: 0, s.add),
    ops.reduce_prod: (lambda dt: 1, s.mul),
    ops.reduce_max: (lambda dt: extreme(dt, True), s.maximum),
    ops.reduce_min: (lambda dt: extreme(dt, False), s.minimum),
    ops.reduce_any: (lambda dt: 0, lambda dt, a, b: arith.ori(a, b)),
    ops.reduce_all: (lambda dt: 1, lambda dt, a, b: arith.andi(a, b)),
}


def accumulator_dtype(name, dtype):
    """float16 sums, means and products accumulate in float32 (as the NumPy kernels do)."""
    if dtype is dtypes.float16 and name in ("reduce_sum", "reduce_mean", "reduce_prod"):
        return dtypes.float32
    return dtype


def fill(dtype, value, init):
    """linalg.fill of a scalar of `dtype` into the tensor `init`."""
    return linalg.fill(s.const(dtype, value), outs=[init])


def reduce_axes(x, x_type, axes, acc_dtype, identity, combine):
    """linalg.reduce of `x` over `axes` into a tensor of acc_dtype filled with `identity`."""
    out_type = TensorType(reduced_shape(x_type.shape, axes, False), acc_dtype)
    kept = [i for i in range(x_type.rank) if i not in axes]
    init = empty(out_type, dynamic_sizes(out_type, [(x, x_type, [kept.index(i) if i in kept else None
                                                                    for i in range(x_type.rank)])]))
    init = fill(acc_dtype, identity, init)
    op = linalg.ReduceOp([init.type], [x], [init], ir.DenseI64ArrayAttr.get(list(axes)))
    block = op.regions[0].blocks.append(ttypes.element_type(x_type.dtype), ttypes.element_type(acc_dtype))
    with ir.InsertionPoint(block):
        elem, acc = block.arguments
        linalg.YieldOp([combine(acc_dtype, s.convert(x_type.dtype, acc_dtype, elem), acc)])
    return op.results[0], out_type


def reduced_count(x, x_type, axes):
    """The number of elements reduced into each output element, as an i64 value."""
    count = index(1)
    static = 1
    for a in axes:
        if x_type.shape[a] is None:
            count = arith.muli(count, dim(x, a))
        else:
            static *= x_type.shape[a]
    count = arith.muli(count, index(static))
    return arith.index_cast(ir.IntegerType.get_signless(64), count)


def mean_of(total, total_type, count, out_dtype):
    """total / count elementwise: float division, or integer division truncating toward zero (0 when empty)."""
    acc = total_type.dtype
    out_type = TensorType(total_type.shape, out_dtype)
    i64 = ir.IntegerType.get_signless(64)
    if acc.is_floating:
        n = arith.sitofp(ttypes.element_type(acc), count)
        return map_elementwise([total], [total_type], out_type,
                               lambda t: s.convert(acc, out_dtype, arith.divf(t, n)))
    one = arith.constant(i64, 1)
    n = arith.maxsi(count, one)
    divide = arith.divui if acc.is_unsigned else arith.divsi
    return map_elementwise([total], [total_type], out_type,
                           lambda t: s.convert(dtypes.int64, out_dtype, divide(s.convert(acc, dtypes.int64, t), n)))


def keep_dims(value, value_type, axes, out_type):
    """tensor.expand_shape re-inserting the reduced axes as size-1 dims."""
    kept = [i for i in range(out_type.rank) if i not in axes]
    groups, current = [], []
    for i in range(out_type.rank):
        current.append(i)
        if i in kept and kept.index(i) < len(kept) - 1:
            groups.append(current)
            current = []
    if kept:
        groups.append(current)
    sizes = [dim(value, kept.index(i)) for i in range(out_type.rank) if out_type.shape[i] is None]
    static = [ir.ShapedType.get_dynamic_size() if d is None else d for d in out_type.shape]
    return tensor.expand_shape(ttypes.lowered_tensor_type(out_type), value,
                               ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(
                                   ir.IntegerType.get_signless(64), j) for j in g]) for g in groups]),
                               sizes, static)


@lowering(*REDUCERS)
def lower_reduction(rw):
    """tfn.reduce_<op>(x) -> linalg.reduce(linalg.fill(identity)) [-> divide by count] [-> expand_shape]."""
    name, x, x_type, out = rw.opdef.name, rw.operands[0], rw.in_types[0], rw.out
    axes = tuple(rw.attrs["axis"])
    if not axes:
        return [x]
    identity, combine = REDUCERS[rw.opdef]
    acc = accumulator_dtype(name, x_type.dtype)
    result, result_type = reduce_axes(x, x_type, axes, acc, identity(acc), combine)
    if name == "reduce_mean":
        result = mean_of(result, result_type, reduced_count(x, x_type, axes), x_type.dtype)
    elif acc is not x_type.dtype:
        result = map_elementwise([result], [result_type], TensorType(result_type.shape, x_type.dtype),
                                 lambda t: s.convert(acc, x_type.dtype, t))
    if rw.attrs["keepdims"]:
        result = keep_dims(result, result_type, axes, out)
    return [result]


def _better(dt, is_max, v, i, best, best_i):
    """Whether (v, i) replaces (best, best_i): a strictly better value, or an equal one at a smaller index;
    a NaN beats every number, and the first NaN wins (NumPy's argmax/argmin)."""
    earlier = arith.cmpi(arith.CmpIPredicate.slt, i, best_i)
    beats = s.cmp(dt, "gt" if is_max else "lt", v, best)
    equal = s.cmp(dt, "eq", v, best)
    take = arith.ori(beats, arith.andi(equal, earlier))
    if not dt.is_floating:
        return take
    v_nan = arith.cmpf(arith.CmpFPredicate.UNO, v, v)
    best_nan = arith.cmpf(arith.CmpFPredicate.UNO, best, best)
    return arith.select(best_nan, arith.andi(v_nan, earlier), arith.ori(v_nan, take))


def _format_empty_axis(details, op):
    rank = ir.RankedTensorType(op.operands[0].type).rank
    shape = [str(d) for d in details[1:1 + min(rank, DETAIL_LEN - 1)]]
    shape += ["..."] * (rank > DETAIL_LEN - 1)
    return f"Reduction axis {details[0]} is empty in shape [{','.join(shape)}]"


runtime_errors.may_fail(ops.argmax, _format_empty_axis)
runtime_errors.may_fail(ops.argmin, _format_empty_axis)


@lowering(ops.argmax, ops.argmin)
def lower_arg_reduction(rw):
    """tfn.argmax/argmin(x) -> linalg.generic reducing (value, linalg.index) pairs into two filled outputs."""
    x, x_type, out = rw.operands[0], rw.in_types[0], rw.out
    axis, is_max = rw.attrs["axis"], rw.opdef is ops.argmax
    dt, idx_dt = x_type.dtype, out.dtype
    rank = x_type.rank
    out_axes = [i - (i > axis) if i != axis else None for i in range(rank)]
    sizes = dynamic_sizes(out, [(x, x_type, out_axes)])
    if x_type.shape[axis] is None:
        n = dim(x, axis)
        shape = [n if i == axis else dim(x, i) if d is None else d for i, d in enumerate(x_type.shape)]
        runtime_errors.report(rw, arith.cmpi(arith.CmpIPredicate.eq, n, index(0)),
                              [axis] + shape[:DETAIL_LEN - 1])
    best = fill(dt, extreme(dt, is_max), empty(TensorType(out.shape, dt), sizes))
    best_i = fill(idx_dt, 0, empty(out, sizes))
    out_map = affine_map(rank, [ir.AffineDimExpr.get(i) for i in range(rank) if i != axis])
    iterators = parallel(rank)
    iterators[axis] = reduction()

    def body(v, acc, acc_i):
        i = arith.index_cast(ttypes.element_type(idx_dt), linalg.IndexOp(axis).result)
        take = _better(dt, is_max, v, i, acc, acc_i)
        return [arith.select(take, v, acc), arith.select(take, i, acc_i)]
    return [generic([x], [identity_map(rank)], [best, best_i], [out_map, out_map], iterators, body)[1]]
