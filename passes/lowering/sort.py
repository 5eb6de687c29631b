"""Lowering of tfn.argsort: each line (the last axis) is sorted on integer keys, the positions moving with them.

The keys: one integer of the element's width whose signed order is the op's order. Signed integers are their own
key, uint8 has its top bit flipped; a float is made canonical (every NaN the positive quiet NaN, -0.0 as 0.0) and
its bits taken with the low bits flipped when the sign is set (the IEEE order as signed integers: NaN above +inf).
Descending flips every bit (~key reverses the signed order), so both directions are one stable ascending sort and
equal values keep their input order.

A line of RADIX_MIN elements or more (by the key's width: 32 to 256) is sorted by an LSD radix sort: one loop
counts the DIGIT_BITS-bit digits of every pass, the counts become start offsets, and each pass scatters keys and
positions by one digit from the lowest (stable), between two pairs of tensors (keys and positions, the second pair
scratch), an even number of passes so the sorted line ends in the first pair: O(n w / DIGIT_BITS) work for w-bit
keys. A shorter line is merge sorted: runs of RUN elements sorted by insertion, then passes merging neighbouring
runs of the current width into runs twice as wide (the left element is taken unless the right one is smaller:
stable), two passes per scf.while iteration back and forth between the pairs: O(n log n). The choice is made while
lowering when the line's length is known, else by an scf.if when the function runs. 2n scratch elements per line;
lines are independent (loops over the leading dims)."""
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, scf, tensor

from tfn.dialects import dtypes, ops
from tfn.dialects.ops_sort import MAX_LINE, line_too_long
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import dim, empty, generic, identity_map, index, lowered_type, lowering, parallel

RUN = 16  # elements sorted by insertion before the merge passes
# key width -> the line length from which radix sort beats merge sort (measured on 2^19-2^20 elements in lines of
# 16 to 4096: 8- and 16-bit keys from 32, 32-bit keys from 48-64, 64-bit keys from 256-512)
RADIX_MIN = {8: 32, 16: 32, 32: 64, 64: 256}
DIGIT_BITS = 8  # a radix pass sorts by this many bits of the key
BUCKETS = 1 << DIGIT_BITS

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


def _sort_line(coords, n, width, keys, pos, scratch_keys, scratch_pos):
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


def _digit(key, width, p):
    """Digit p (DIGIT_BITS wide, from the lowest) of the key read as unsigned with its sign bit flipped (so the
    unsigned order of the flipped key is the signed order of the key), as an index."""
    i64 = ir.IntegerType.get_signless(64)
    flipped = arith.xori(key, _int(width, -(1 << (width - 1))))
    wide = arith.extui(i64, flipped) if width < 64 else flipped
    if p:
        wide = arith.shrui(wide, _int(64, p * DIGIT_BITS))
    return arith.index_cast(index(0).type, arith.andi(wide, _int(64, BUCKETS - 1)))


def _radix_line(coords, n, width, keys, pos, scratch_keys, scratch_pos):
    """The line at `coords` sorted by an LSD radix sort (stable): one loop counting every pass's digits, the counts
    made into start offsets, then one scatter per digit from the lowest, back and forth between the pairs (an even
    number of passes: the sorted line ends in the first pair)."""
    passes = -(-width // DIGIT_BITS)
    passes += passes % 2
    i64 = ir.IntegerType.get_signless(64)
    counts = linalg.fill(_int(64, 0), outs=[tensor.empty([passes, BUCKETS], i64)])

    def count(i, counts):
        key = tensor.extract(keys, coords + [i])
        for p in range(passes):
            at = [index(p), _digit(key, width, p)]
            counts = tensor.insert(arith.addi(tensor.extract(counts, at), _int(64, 1)), counts, at)
        return [counts]
    counts = _for(index(0), n, index(1), [counts], count)[0]

    def starts(b, counts, *running):
        out = []
        for p in range(passes):
            at = [index(p), b]
            c = tensor.extract(counts, at)
            counts = tensor.insert(running[p], counts, at)
            out.append(arith.addi(running[p], c))
        return [counts] + out
    counts = _for(index(0), index(BUCKETS), index(1), [counts] + [_int(64, 0)] * passes, starts)[0]

    def scatter(p, src_keys, src_pos, keys, pos, counts):
        def step(i, keys, pos, counts):
            key = tensor.extract(src_keys, coords + [i])
            at = [index(p), _digit(key, width, p)]
            start = tensor.extract(counts, at)
            to = coords + [arith.index_cast(index(0).type, start)]
            keys = tensor.insert(key, keys, to)
            pos = tensor.insert(tensor.extract(src_pos, coords + [i]), pos, to)
            return [keys, pos, tensor.insert(arith.addi(start, _int(64, 1)), counts, at)]
        return _for(index(0), n, index(1), [keys, pos, counts], step)
    pairs = [keys, pos, scratch_keys, scratch_pos]
    for p in range(passes):
        src, dst = (pairs[:2], pairs[2:]) if p % 2 == 0 else (pairs[2:], pairs[:2])
        k, q, counts = scatter(p, *src, *dst, counts)
        pairs = pairs[:2] + [k, q] if p % 2 == 0 else [k, q] + pairs[2:]
    return pairs


def _sort_any_line(coords, n, length, width, keys, pos, scratch_keys, scratch_pos):
    """Merge sort below RADIX_MIN[width] elements, radix sort from there: chosen now when the line's `length` is
    known (an int), else when the function runs (`n`, an index value)."""
    values = [keys, pos, scratch_keys, scratch_pos]
    if length is not None:
        return (_radix_line if length >= RADIX_MIN[width] else _sort_line)(coords, n, width, *values)
    choice = scf.IfOp(arith.cmpi(arith.CmpIPredicate.uge, n, index(RADIX_MIN[width])), [v.type for v in values],
                      has_else=True)
    with ir.InsertionPoint(choice.then_block):
        scf.YieldOp(_radix_line(coords, n, width, *values))
    with ir.InsertionPoint(choice.else_block):
        scf.YieldOp(_sort_line(coords, n, width, *values))
    return list(choice.results)


def _over_lines(sizes, coords, values, body):
    """body(coords, *values) for every line (the leading dims' coordinates), carrying `values`."""
    if len(coords) == len(sizes) - 1:
        return body(coords, *values)
    return _for(index(0), sizes[len(coords)], index(1), values,
                lambda c, *vals: _over_lines(sizes, coords + [c], vals, body))


runtime_errors.may_fail(ops.argsort, lambda details, op: line_too_long(details[0]))


@lowering(ops.argsort)
def lower_argsort(rw):
    """tfn.argsort -> keys (a linalg.generic) and positions 0..n-1 (another), sorted line by line by scf loops; a
    line of a run-time length past int32 positions is reported (its positions wrap, nothing is read out of
    bounds)."""
    x, xt, out = rw.operands[0], rw.in_types[0], rw.out
    rank = xt.rank
    sizes = [dim(x, d) if s is None else index(s) for d, s in enumerate(xt.shape)]
    dyn = [size for size, s in zip(sizes, xt.shape) if s is None]
    key_type = TensorType(xt.shape, _KEY_DTYPES[xt.dtype.np.itemsize * 8])
    ident = identity_map(rank)
    descending = bool(rw.attrs["descending"])
    keys = generic([x], [ident], [empty(key_type, dyn)], [ident], parallel(rank),
                   lambda v, _: _key(xt.dtype, descending, v))[0]
    i32 = ir.IntegerType.get_signless(32)
    pos = generic([], [], [empty(out, dyn)], [ident], parallel(rank),
                  lambda _: arith.index_cast(i32, linalg.IndexOp(rank - 1).result))[0]
    n = sizes[-1]
    if xt.shape[-1] is None:
        runtime_errors.report(rw, arith.cmpi(arith.CmpIPredicate.ugt, n, index(MAX_LINE)), [n])
    # (the scratch pair as bufferization.alloc_tensor, never merged by cse: two tensor.empty of one type become one
    # value, and the loops' two tensors started from it share one buffer)
    scratch = [bufferization.alloc_tensor(lowered_type(t), dyn) for t in (key_type, out)]
    sorted_ = _over_lines(sizes, [], [keys, pos] + scratch,
                          lambda coords, *vals: _sort_any_line(coords, n, xt.shape[-1], key_type.dtype.np.itemsize * 8,
                                                               *vals))
    return [sorted_[1]]
