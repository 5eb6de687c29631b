"""Lowering of tfn.matmul: linalg.matmul (2-D), linalg.batch_matmul (3-D, equal batches), otherwise a
broadcasting linalg.generic contraction; the accumulator is a linalg.fill of zero."""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.ops_linalg import pretty
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import (
    affine_map,
    dim,
    dynamic_sizes,
    empty,
    generic,
    lowering,
    parallel,
    reduction,
)


def _zeros(out, sizes):
    return linalg.fill(s.const(out.dtype, 0), outs=[empty(out, sizes)])


def _operand_axes(tt, transpose, out_rank, is_lhs):
    """For dynamic_sizes: the output dim each operand dim equals (its batch dims, and M for a or N for b)."""
    batch = tt.rank - 2
    axes = [out_rank - 2 - batch + i for i in range(batch)] + [None, None]
    if is_lhs:
        axes[batch + (1 if transpose else 0)] = out_rank - 2
    else:
        axes[batch + (0 if transpose else 1)] = out_rank - 1
    return axes


def _clamp(rw, a, ta, b, tb, trans_a, trans_b, out):
    """Slice both operands to the smaller size of each dim pair that must agree (K and the unbroadcast batch
    dims) where one is dynamic: a mismatch found only at run time never reads out of bounds, and is reported."""
    pairs = [(ta.rank - 2 if trans_a else ta.rank - 1, tb.rank - 1 if trans_b else tb.rank - 2)]
    batch = out.rank - 2
    for j in range(batch):
        ia, ib = j - (batch - ta.rank + 2), j - (batch - tb.rank + 2)
        if ia >= 0 and ib >= 0 and ta.shape[ia] != 1 and tb.shape[ib] != 1:
            pairs.append((ia, ib))
    cut_a, cut_b = {}, {}
    for kind, (ia, ib) in enumerate(pairs):
        if ta.shape[ia] is None or tb.shape[ib] is None:
            da, db = dim(a, ia), dim(b, ib)
            runtime_errors.report(rw, arith.cmpi(arith.CmpIPredicate.ne, da, db), [min(kind, 1), da, db])
            cut_a[ia] = cut_b[ib] = arith.minui(da, db)
    return _slice(a, ta, cut_a), _slice(b, tb, cut_b)


def _format_mismatch(details, op):
    kind, da, db = details[:3]
    ta, tb = (TensorType.from_mlir(v.type) for v in op.operands)
    shapes = f"In[0]: {pretty(ta.shape)}, In[1]: {pretty(tb.shape)}"
    if kind == 0:
        return f"Matrix size-incompatible: contraction sizes {da} vs. {db} at run time ({shapes})"
    return (f"In[0] and In[1] must have compatible batch dimensions: {da} vs. {db} at run time ({shapes}; "
            "a batch dim known only at run time is never broadcast)")


runtime_errors.may_fail(ops.matmul, _format_mismatch)


def _slice(value, tt, cuts):
    """tensor.extract_slice of `value` whose dims in `cuts` (axis -> index value) become that long."""
    if not cuts:
        return value
    dyn = ir.ShapedType.get_dynamic_size()
    sizes = [cuts[i] if i in cuts else dim(value, i) for i in range(tt.rank) if i in cuts or tt.shape[i] is None]
    static = [dyn if i in cuts or d is None else d for i, d in enumerate(tt.shape)]
    result = ir.RankedTensorType.get(static, ttypes.element_type(tt.dtype))
    return tensor.extract_slice(result, value, [], sizes, [], [0] * tt.rank, static, [1] * tt.rank)


def _transposed(value, tt):
    """linalg.transpose swapping the last two dims."""
    perm = list(range(tt.rank - 2)) + [tt.rank - 1, tt.rank - 2]
    shape = [tt.shape[p] for p in perm]
    t_type = TensorType(shape, tt.dtype)
    sizes = dynamic_sizes(t_type, [(value, tt, [perm.index(i) for i in range(tt.rank)])])
    return linalg.transpose(value, outs=[empty(t_type, sizes)], permutation=perm).result


def _needs_broadcast(tt, out):
    batch_out = out.shape[:-2]
    off = len(batch_out) - (tt.rank - 2)
    return off > 0 or any(d == 1 and batch_out[off + i] != 1 for i, d in enumerate(tt.shape[:-2]))


def _operand_map(tt, k_first, out, row_expr, k_expr):
    """The indexing map of an operand in the (batch..., m, n, k) iteration space, broadcasting batch dims."""
    batch_out = out.shape[:-2]
    off = len(batch_out) - (tt.rank - 2)
    exprs = [ir.AffineConstantExpr.get(0) if d == 1 and batch_out[off + i] != 1 else ir.AffineDimExpr.get(off + i)
             for i, d in enumerate(tt.shape[:-2])]
    pair = [k_expr, row_expr] if k_first else [row_expr, k_expr]
    return affine_map(out.rank + 1, exprs + pair)


def _contraction(a, ta, b, tb, out, init, trans_a, trans_b):
    """linalg.generic over (batch..., m, n, k) computing init[..., m, n] += a[..., m, k] * b[..., k, n]."""
    r = out.rank
    d = ir.AffineDimExpr.get
    a_map = _operand_map(ta, trans_a, out, d(r - 2), d(r))
    b_map = _operand_map(tb, not trans_b, out, d(r - 1), d(r))
    out_map = affine_map(r + 1, [d(i) for i in range(r)])
    dt = out.dtype
    return generic([a, b], [a_map, b_map], [init], [out_map], parallel(r) + [reduction()],
                   lambda x, y, acc: s.add(dt, acc, s.mul(dt, x, y)))[0]


def _retyped(value, tt):
    """The tfn type of a (possibly sliced) operand: its current shape with the original dtype."""
    shape = ir.RankedTensorType(value.type).shape
    return TensorType([None if ir.ShapedType.is_dynamic_size(d) else d for d in shape], tt.dtype)


@lowering(ops.matmul)
def lower_matmul(rw):
    """tfn.matmul(a, b) -> linalg.matmul / linalg.batch_matmul (after linalg.transpose) or a linalg.generic."""
    a, b = rw.operands
    ta, tb = rw.in_types
    out = rw.out
    trans_a, trans_b = rw.attrs["transpose_a"], rw.attrs["transpose_b"]
    a, b = _clamp(rw, a, ta, b, tb, trans_a, trans_b, out)
    ta, tb = _retyped(a, ta), _retyped(b, tb)
    init = _zeros(out, dynamic_sizes(out, [(a, ta, _operand_axes(ta, trans_a, out.rank, True)),
                                           (b, tb, _operand_axes(tb, trans_b, out.rank, False))]))
    named = ta.rank == tb.rank and ta.rank in (2, 3) and not (_needs_broadcast(ta, out) or _needs_broadcast(tb, out))
    if not named:
        return [_contraction(a, ta, b, tb, out, init, trans_a, trans_b)]
    if trans_a:
        a = _transposed(a, ta)
    if trans_b:
        b = _transposed(b, tb)
    op = linalg.matmul if ta.rank == 2 else linalg.batch_matmul
    return [op(a, b, outs=[init])]

