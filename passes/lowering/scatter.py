"""Lowering of tensor_scatter_update and tensor_scatter_add: an scf.for over the index rows, each a
tensor.insert_slice at run-time offsets into the loop-carried tensor (bufferized in place); for an add, the slice
inserted is the sum of the slice already there (tensor.extract_slice) and the update row. A row out of range
writes nothing and reports through the run-time error channel (runtime_errors.py)."""
from mlir import ir
from mlir.dialects import arith, scf, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import DETAIL_LEN
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors, scalar
from tfn.passes.lowering.common import dim, index, lowering, map_elementwise

DYN = ir.ShapedType.get_dynamic_size()
MAX_K = (DETAIL_LEN - 2) // 2  # details: row, k, then k indices and k bounds


def _format_scatter(details, op):
    k = details[1]
    shown = min(k, MAX_K)
    idx = details[2:2 + shown] + ["..."] * (k > shown)
    bounds = details[2 + shown:2 + 2 * shown]
    shape = ir.RankedTensorType(op.operands[0].type)
    dims = [str(bounds[i]) if i < len(bounds) else ("?" if shape.is_dynamic_dim(i) else str(shape.get_dim_size(i)))
            for i in range(shape.rank)]
    return (f"indices[{details[0]}] = [{', '.join(str(i) for i in idx)}] does not index into shape "
            f"[{','.join(dims)}]")


runtime_errors.may_fail(ops.tensor_scatter_update, _format_scatter)
runtime_errors.may_fail(ops.tensor_scatter_add, _format_scatter)


def _delinearize(n, sizes):
    """The multi-index (index values) of flat position n in a row-major shape of index-valued sizes."""
    if not sizes:
        return []
    coords = []
    for size in reversed(sizes[1:]):
        coords.append(arith.remui(n, size))
        n = arith.divui(n, size)
    return [n] + coords[::-1]  # (n < the product of the sizes: the outermost coordinate needs no remainder)


def _sizes(value, tt):
    return [index(d) if d is not None else dim(value, i) for i, d in enumerate(tt.shape)]


@lowering(ops.tensor_scatter_update, ops.tensor_scatter_add)
def lower_tensor_scatter(rw):
    """tfn.tensor_scatter_update/add -> scf.for row: check indices[row] against the dims, then insert
    updates[row] (a rank-reducing extract_slice), or its sum with the slice there, at those offsets (a
    rank-reducing insert_slice)."""
    dest, indices, updates = rw.operands
    tt, it, ut = rw.in_types
    k = it.shape[-1]
    batch = _sizes(indices, it)[:-1]
    rows = index(1)
    for b in batch:
        rows = arith.muli(rows, b)
    tail = TensorType(tt.shape[k:], tt.dtype)
    tail_sizes = _sizes(dest, tt)[k:]
    dims = _sizes(dest, tt)[:k]
    loop = scf.ForOp(index(0), rows, index(1), [dest])
    with ir.InsertionPoint(loop.body):
        n, acc = loop.induction_variable, loop.inner_iter_args[0]
        coords = _delinearize(n, batch)
        raw = [tensor.extract(indices, coords + [index(j)]) for j in range(k)]
        idx = [arith.index_cast(ir.IndexType.get(), v) for v in raw]
        bad = None
        for i, d in zip(idx, dims):
            out = arith.ori(arith.cmpi(arith.CmpIPredicate.slt, i, index(0)), arith.cmpi(arith.CmpIPredicate.sge, i, d))
            bad = out if bad is None else arith.ori(bad, out)
        if bad is None:  # k == 0: every row replaces the whole tensor
            bad = arith.constant(ir.IntegerType.get_signless(1), 0)
        runtime_errors.report(rw, bad, [n, k] + raw[:MAX_K] + dims[:MAX_K])
        guarded = scf.IfOp(bad, [acc.type], has_else=True)
        with ir.InsertionPoint(guarded.then_block):
            scf.YieldOp([acc])
        with ir.InsertionPoint(guarded.else_block):
            scf.YieldOp([_insert_row(updates, ut, coords, acc, tt, idx, tail, tail_sizes,
                                     rw.opdef is ops.tensor_scatter_add)])
        scf.YieldOp([guarded.results[0]])
    return [loop.results[0]]


def _insert_row(updates, ut, coords, acc, tt, idx, tail, tail_sizes, add):
    """acc with updates[coords] written at acc[idx] (added to what is there when `add`)."""
    nb = len(coords)
    row_type = ttypes.lowered_tensor_type(tail)
    dyn_tail = [s for s, d in zip(tail_sizes, tail.shape) if d is None]
    static_tail = [DYN if d is None else d for d in tail.shape]
    row = tensor.extract_slice(row_type, updates, coords, dyn_tail, [], [DYN] * nb + [0] * tail.rank,
                               [1] * nb + static_tail, [1] * ut.rank)
    k = len(idx)
    sizes = ([DYN] * k + [0] * tail.rank, [1] * k + static_tail, [1] * tt.rank)
    if add:
        there = tensor.extract_slice(row_type, acc, idx, dyn_tail, [], *sizes)
        row = map_elementwise([there, row], [tail, tail], tail, lambda a, b: scalar.add(tail.dtype, a, b))
    return tensor.insert_slice(row, acc, idx, dyn_tail, [], *sizes)
