"""Lowering of tfn.argsort: each line (the last axis) is sorted by a bottom-up merge sort on integer keys, the
positions moving with them.

The keys: one integer of the element's width whose signed order is the op's order. Signed integers are their own
key, uint8 has its top bit flipped; a float is made canonical (every NaN the positive quiet NaN, -0.0 as 0.0) and
its bits taken with the low bits flipped when the sign is set (the IEEE order as signed integers: NaN above +inf).
Descending flips every bit (~key reverses the signed order), so both directions are one stable ascending sort and
equal values keep their input order.

The sort: runs of RUN elements are first sorted by insertion, then the lines go back and forth between two pairs of
tensors (keys and positions, the second pair scratch), each pass merging neighbouring runs of the current width
into runs twice as wide (a merge takes the left element unless the right one is smaller: stable); two passes per
scf.while iteration, so the sorted line ends in the first pair and the loop's tensors stay in place when bufferized.
O(n log n) work, 2n scratch elements per line; lines are independent (loops over the leading dims)."""
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, scf, tensor

from tfn.dialects import dtypes, ops
from tfn.dialects.types import TensorType
from tfn.passes.lowering.common import dim, empty, generic, identity_map, index, lowered_type, lowering, parallel

RUN = 16  # elements sorted by insertion before the merge passes

_KEY_DTYPES = {8: dtypes.int8, 16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


def _int(width, value):
    return arith.constant(ir.IntegerType.get_signless(width), value)


def _key(dtype, descending, v):
    """The integer key of element v (see the module docstring)."""
    width = dtype.np.itemsize * 8
    if dtype.is_floating:
        zero = arith.constant(v.type, 0.0)
        v = arith.select(arith.cmpf(arith.CmpFPredicate.UNO, v, v), arith.constant(v.type, float("nan")), v)
        v = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, v, zero), zero, v)
        bits = arith.bitcast(ir.IntegerType.get_signless(width), v)
        low = arith.andi(arith.shrsi(bits, _int(width, width - 1)), _int(width, (1 << (width - 1)) - 1))
        key = arith.xori(bits, low)
    elif dtype.is_unsigned:
        key = arith.xori(v, _int(width, -(1 << (width - 1))))
    else:
        key = v
    return arith.xori(key, _int(width, -1)) if descending else key


def _lt(a, b):
    return arith.cmpi(arith.CmpIPredicate.slt, a, b)


def _ult(a, b):
    return arith.cmpi(arith.CmpIPredicate.ult, a, b)


def _for(lo, hi, step, inits, body):
    """scf.for lo..hi by step carrying `inits`; body(iv, *iter_args) returns the values to yield."""
    loop = scf.ForOp(lo, hi, step, list(inits))
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(list(body(loop.induction_variable, *loop.inner_iter_args)))
    return list(loop.results)


def _insertion_runs(coords, n, keys, pos):
    """Each run of RUN elements of the line at `coords` sorted by insertion (stable: an element moves left past
    larger keys only)."""
    def run(lo, keys, pos):
        hi = arith.minui(arith.addi(lo, index(RUN)), n)

        def insert(i, keys, pos):
            key = tensor.extract(keys, coords + [i])
            at = tensor.extract(pos, coords + [i])
            # shift the larger keys right, from i - 1 down to lo; j is where `key` goes
            t = [index(0).type, keys.type, pos.type]
            loop = scf.WhileOp(t, [i, keys, pos])
            before = loop.before.blocks.append(*t)
            with ir.InsertionPoint(before):
                j, ks, ps = before.arguments
                prev = arith.maxui(arith.subi(j, index(1)), lo)  # (read only when j > lo)
                more = scf.IfOp(_ult(lo, j), [ir.IntegerType.get_signless(1)], has_else=True)
                with ir.InsertionPoint(more.then_block):
                    scf.YieldOp([_lt(key, tensor.extract(ks, coords + [prev]))])
                with ir.InsertionPoint(more.else_block):
                    scf.YieldOp([_int(1, 0)])
                scf.ConditionOp(more.results[0], [j, ks, ps])
            after = loop.after.blocks.append(*t)
            with ir.InsertionPoint(after):
                j, ks, ps = after.arguments
                prev = arith.subi(j, index(1))
                ks = tensor.insert(tensor.extract(ks, coords + [prev]), ks, coords + [j])
                ps = tensor.insert(tensor.extract(ps, coords + [prev]), ps, coords + [j])
                scf.YieldOp([prev, ks, ps])
            j, keys, pos = loop.results
            return tensor.insert(key, keys, coords + [j]), tensor.insert(at, pos, coords + [j])
        return _for(arith.addi(lo, index(1)), hi, index(1), [keys, pos], insert)
    return _for(index(0), n, index(RUN), [keys, pos], run)


def _merge_pass(coords, n, width, src_keys, src_pos, keys, pos):
    """keys/pos (of the line at `coords`) <- the runs of `width` of src_keys/src_pos merged in pairs."""
    def pair(lo, keys, pos):
        mid = arith.minui(arith.addi(lo, width), n)
        hi = arith.minui(arith.addi(lo, arith.addi(width, width)), n)
        last = arith.subi(hi, index(1))

        def step(k, i, j, keys, pos):
            ic, jc = arith.minui(i, last), arith.minui(j, last)  # (in bounds: a run taken whole is not read)
            left, right = tensor.extract(src_keys, coords + [ic]), tensor.extract(src_keys, coords + [jc])
            right_done = arith.cmpi(arith.CmpIPredicate.uge, j, hi)
            take = arith.andi(_ult(i, mid), arith.ori(right_done, arith.xori(_lt(right, left), _int(1, 1))))
            at = tensor.extract(src_pos, coords + [arith.select(take, ic, jc)])
            keys = tensor.insert(arith.select(take, left, right), keys, coords + [k])
            pos = tensor.insert(at, pos, coords + [k])
            one = arith.index_cast(index(0).type, arith.extui(ir.IntegerType.get_signless(64), take))
            return [arith.addi(i, one), arith.addi(j, arith.subi(index(1), one)), keys, pos]
        return _for(lo, hi, index(1), [lo, mid, keys, pos], step)[2:]
    return _for(index(0), n, arith.addi(width, width), [keys, pos], pair)


def _sort_line(coords, n, keys, pos, scratch_keys, scratch_pos):
    keys, pos = _insertion_runs(coords, n, keys, pos)
    t = [index(0).type, keys.type, pos.type, keys.type, pos.type]
    loop = scf.WhileOp(t, [index(RUN), keys, pos, scratch_keys, scratch_pos])
    before = loop.before.blocks.append(*t)
    with ir.InsertionPoint(before):
        scf.ConditionOp(_ult(before.arguments[0], n), list(before.arguments))
    after = loop.after.blocks.append(*t)
    with ir.InsertionPoint(after):
        width, ka, pa, kb, pb = after.arguments
        kb, pb = _merge_pass(coords, n, width, ka, pa, kb, pb)
        wider = arith.addi(width, width)
        ka, pa = _merge_pass(coords, n, wider, kb, pb, ka, pa)
        scf.YieldOp([arith.addi(wider, wider), ka, pa, kb, pb])
    return list(loop.results[1:])


def _over_lines(sizes, coords, values, body):
    """body(coords, *values) for every line (the leading dims' coordinates), carrying `values`."""
    if len(coords) == len(sizes) - 1:
        return body(coords, *values)
    return _for(index(0), sizes[len(coords)], index(1), values,
                lambda c, *vals: _over_lines(sizes, coords + [c], vals, body))


@lowering(ops.argsort)
def lower_argsort(rw):
    """tfn.argsort -> keys (a linalg.generic) and positions 0..n-1 (another), sorted line by line by scf loops."""
    x, xt, out = rw.operands[0], rw.in_types[0], rw.out
    rank = xt.rank
    sizes = [dim(x, d) if s is None else index(s) for d, s in enumerate(xt.shape)]
    dyn = [dim(x, d) for d, s in enumerate(xt.shape) if s is None]
    key_type = TensorType(xt.shape, _KEY_DTYPES[xt.dtype.np.itemsize * 8])
    ident = identity_map(rank)
    descending = bool(rw.attrs["descending"])
    keys = generic([x], [ident], [empty(key_type, dyn)], [ident], parallel(rank),
                   lambda v, _: _key(xt.dtype, descending, v))[0]
    i32 = ir.IntegerType.get_signless(32)
    pos = generic([], [], [empty(out, dyn)], [ident], parallel(rank),
                  lambda _: arith.index_cast(i32, linalg.IndexOp(rank - 1).result))[0]
    n = sizes[-1]
    # (the scratch pair as bufferization.alloc_tensor, never merged by cse: two tensor.empty of one type become one
    # value, and the loops' two tensors started from it share one buffer)
    scratch = [bufferization.alloc_tensor(lowered_type(t), dyn) for t in (key_type, out)]
    sorted_ = _over_lines(sizes, [], [keys, pos] + scratch,
                          lambda coords, *vals: _sort_line(coords, n, *vals))
    return [sorted_[1]]
