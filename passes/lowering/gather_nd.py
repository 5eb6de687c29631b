"""Lowering of gather_nd: a linalg.generic over the result reading the index row of each batch position with
tensor.extract, then params at those coordinates. A row out of range yields zeros there and reports through the
run-time error channel (runtime_errors.py)."""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import ops
from tfn.dialects.abi import DETAIL_LEN
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import dim, dynamic_sizes, empty, generic, identity_map, index, lowering, parallel
from tfn.passes.lowering.gather import _out_of_range, _pick

MAX_K = (DETAIL_LEN - 2) // 2  # details: row, k, then k indices and k bounds


def _format_gather_nd(details, op):
    k = details[1]
    shown = min(k, MAX_K)
    idx = [str(i) for i in details[2:2 + shown]] + ["..."] * (k > shown)
    shape = ir.RankedTensorType(op.operands[0].type)
    bounds = details[2 + shown:2 + 2 * shown]
    dims = [str(bounds[i]) if i < len(bounds) else ("?" if shape.is_dynamic_dim(i) else str(shape.get_dim_size(i)))
            for i in range(shape.rank)]
    return f"indices[{details[0]}] = [{', '.join(idx)}] does not index into param shape [{','.join(dims)}]"


runtime_errors.may_fail(ops.gather_nd, _format_gather_nd)


@lowering(ops.gather_nd)
def lower_gather_nd(rw):
    """tfn.gather_nd -> linalg.generic over the result: out[b..., r...] = params[indices[b..., :], r...]; each
    index row is checked against params' dims (reported with the row's flat position)."""
    params, indices = rw.operands
    pt, it, out = rw.in_types[0], rw.in_types[1], rw.out
    k = it.shape[-1]
    nb = it.rank - 1
    init = empty(out, dynamic_sizes(out, [(indices, it, list(range(nb)) + [None]),
                                          (params, pt, [None] * k + list(range(nb, out.rank)))]))
    bounds = [dim(params, j) for j in range(k)]
    batch_sizes = [dim(indices, j) for j in range(nb)]

    def body(*args):
        coords = [linalg.IndexOp(a).result for a in range(out.rank)]
        raw = [tensor.extract(indices, coords[:nb] + [index(j)]) for j in range(k)]
        idx = [arith.index_cast(ir.IndexType.get(), v) for v in raw]
        bad = arith.constant(ir.IntegerType.get_signless(1), 0)
        for i, n in zip(idx, bounds):
            bad = arith.ori(bad, _out_of_range(i, n))
        row = index(0)
        for c, size in zip(coords[:nb], batch_sizes):
            row = arith.addi(arith.muli(row, size), c)
        runtime_errors.report(rw, bad, [row, k] + raw[:MAX_K] + bounds[:MAX_K])
        return _pick(bad, out.dtype, lambda: tensor.extract(params, idx + coords[nb:]))
    return generic([], [], [init], [identity_map(out.rank)], parallel(out.rank), body)
