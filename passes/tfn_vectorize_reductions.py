"""tfn-vectorize-reductions: f32 sum/max/min reductions over trailing axes as vector loops, split across workers.

A linalg.reduce on tensors of f32 whose reduced dimensions are the trailing ones (a full reduction, or rows of
the collapsed [R, N] view) and whose body is one addf / maximumf / minimumf (NaN-propagating) becomes, per row,
a loop of LANES-wide vector reads into LANES independent partial results, a masked read for the tail (padded with
the identity) and one tree reduction of the partials, combined with the init element. LANES is the option `lanes`
(default: four vector registers' worth, enough independent partial results to hide the add latency). Sums restart
their partials every BLOCK = 64 x LANES elements and add the block totals, so rounding error grows with
N / BLOCK + BLOCK / LANES rather than with N (a sequential loop: N). Big static reductions (>= MIN_SPLIT elements)
are split into an scf.forall of `workers` x `tasks-per-worker` tasks (options; defaults: the cores available and 4;
run on MLIR's async runtime by tfn-async-parallel, which hands each task to whichever thread is free): rows are
divided among the tasks, a full reduction is cut into one column range per task whose partial results are then
combined. A static reduction over leading axes (a bias gradient: the column sums of [R, N]) smaller than
tfn-parallelize splits becomes a loop over blocks of LANES columns, each summing the rows in order in one vector
(the last block masked): the same operations in the same order as linalg's scalar loops, which LLVM did not
vectorise (it cannot tell the init from the input apart: on case (h)'s 128 x 256 bias gradients, scalar loads, adds
and stores of every element). Bigger ones are left to tfn-parallelize, as are static rows shorter than MIN_ROW and
every other element type and combiner.
"""
from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from tfn.passes.options import LANES, TASKS_PER_WORKER, WORKERS
from tfn.passes.registry import register
from tfn.passes.tfn_parallelize import MIN_WORK
from tfn.passes.walk import collect

BLOCK_VECTORS = 64  # sums: vectors per block, whose partials restart at the identity
MIN_ROW = 16        # static rows shorter than this stay on linalg's scalar loop (a vector would be mostly padding)
# Reductions are memory-bound (one add per 4 bytes read): one thread streams 1e6 floats in ~45 us, and on this
# shared 2-core machine splitting 1e6-2e6 floats across workers measured slower (72-105 us vs 44-61 us), so only
# reductions big enough to amortise a contended hand-off many times over are split.
MIN_SPLIT = 1 << 24
INF = float("inf")
# body op -> (vector.reduction kind, identity)
COMBINERS = {"arith.addf": ("add", -0.0), "arith.maximumf": ("maximumf", -INF), "arith.minimumf": ("minimumf", INF)}


def _combiner(op):
    """The body op name of a linalg.reduce combining (element, accumulator) by one COMBINERS op, or None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[0].name not in COMBINERS:
        return None
    args = {block.arguments[0], block.arguments[1]}
    if set(ops[0].operands) != args or ops[1].operands[0] != ops[0].results[0]:
        return None
    return ops[0].name


def _static_product(shape):
    n = 1
    for d in shape:
        if d == ir.ShapedType.get_dynamic_size():
            return None
        n *= d
    return n


def candidate(op):
    """Whether op is a linalg.reduce on f32 tensors with a combiner this pass vectorises, over its trailing dims, or
    over its leading ones (static, at least MIN_ROW kept elements, fewer than tfn-parallelize's MIN_WORK in all)."""
    if op.name != "linalg.reduce" or len(op.operands) != 2 or len(op.results) != 1:
        return False
    x, init = (op.operands[0].type, op.operands[1].type)
    if not all(isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.F32Type) for t in (x, init)):
        return False
    rank = ir.RankedTensorType(x).rank
    dims = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if not dims or _combiner(op) is None:
        return False
    shape = list(ir.RankedTensorType(x).shape)
    if dims == list(range(len(dims))) and len(dims) < rank:  # leading axes
        kept, total = _static_product(shape[len(dims):]), _static_product(shape)
        return total is not None and kept >= MIN_ROW and total < MIN_WORK
    if dims != list(range(dims[0], rank)):
        return False
    if sum(d == ir.ShapedType.get_dynamic_size() for d in shape[:dims[0]]) > 1:
        # the rows' results are expanded back to the kept dims, and memref.expand_shape allows one dynamic size per
        # group (expand-strided-metadata asserts, aborting the process): those stay on linalg's loops
        return False
    n = _static_product(shape[dims[0]:])
    return n is None or n >= MIN_ROW


class _Kernel:
    """Emits the vector loops of one reduction (its combiner op name, `lanes` per vector) at the insertion point.

    The loop state is the LANES partial results, and for max/min also a mask of the lanes that met a NaN: a max
    by compare + select is one instruction (arith.maximumf's NaN and signed-zero rules cost ~5 on x86), and the
    NaN mask is updated off the partials' dependency chain."""

    def __init__(self, name, lanes):
        self.name, self.lanes, self.block = name, lanes, BLOCK_VECTORS * lanes
        self.kind, identity = COMBINERS[name]
        self.f32 = ir.F32Type.get()
        self.vtype = ir.VectorType.get([lanes], self.f32)
        self.mtype = ir.VectorType.get([lanes], ir.IntegerType.get_signless(1))
        self.identity = arith.constant(self.f32, identity)
        self.splat = arith.constant(self.vtype, ir.DenseElementsAttr.get_splat(
            self.vtype, ir.FloatAttr.get(self.f32, identity)))

    def combine(self, a, b):
        return ir.Operation.create(self.name, results=[a.type], operands=[a, b]).results[0]

    def start(self):
        if self.kind == "add":
            return [self.splat]
        no_nan = ir.DenseElementsAttr.get_splat(self.mtype, ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 0))
        return [self.splat, arith.constant(self.mtype, no_nan)]

    def step(self, state, v, nan=None):
        """The state after taking vector v in (nan: v's NaN mask when already known)."""
        if self.kind == "add":
            return [arith.addf(state[0], v)]
        better = arith.cmpf(arith.CmpFPredicate.OGT if self.kind == "maximumf" else arith.CmpFPredicate.OLT,
                            v, state[0])
        nan = arith.cmpf(arith.CmpFPredicate.UNO, v, v) if nan is None else nan
        return [arith.select(better, v, state[0]), arith.ori(state[1], nan)]

    def finish(self, state):
        """The f32 reduction of the state's lanes."""
        kind = ir.Attribute.parse(f"#vector.kind<{self.kind}>")
        value = vector.reduction(self.f32, kind, state[0], fastmath=ir.Attribute.parse("#arith.fastmath<reassoc>"))
        if self.kind == "add":
            return value
        any_nan = vector.reduction(ir.IntegerType.get_signless(1), ir.Attribute.parse("#vector.kind<or>"), state[1])
        return arith.select(any_nan, arith.constant(self.f32, float("nan")), value)

    def read(self, x, indices, in_bounds):
        rank = ir.RankedTensorType(x.type).rank
        perm = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))
        return vector.transfer_read(self.vtype, x, indices, perm, self.identity, [in_bounds])

    def row(self, x, row, n):
        """The reduction of the n elements of row `row` (None: x is 1-D) of x, as an f32 scalar."""
        at = (lambda j: [j]) if row is None else (lambda j: [row, j])
        main = arith.subi(n, arith.remui(n, _index(self.lanes)))
        blocks = scf.ForOp(_index(0), main, _index(self.block), self.start())
        with ir.InsertionPoint(blocks.body):
            jb = blocks.induction_variable
            hi = arith.minui(arith.addi(jb, _index(self.block)), main)
            inner = scf.ForOp(jb, hi, _index(self.lanes), self.start())
            with ir.InsertionPoint(inner.body):
                scf.YieldOp(self.step(list(inner.inner_iter_args), self.read(x, at(inner.induction_variable), True)))
            scf.YieldOp(self.step(list(blocks.inner_iter_args), *inner.results))  # the block's partials as one step
        return self.finish(self.step(list(blocks.results), self.read(x, at(main), False)))

    def rows(self, x2, out, lo, hi):
        """out[r] = combine(out[r], reduction of row r of x2) for r in [lo, hi); returns the new out."""
        n = tensor.dim(x2, _index(1))
        loop = scf.ForOp(lo, hi, _index(1), [out])
        with ir.InsertionPoint(loop.body):
            r, acc = loop.induction_variable, loop.inner_iter_args[0]
            value = self.combine(tensor.extract(acc, [r]), self.row(x2, r, n))
            scf.YieldOp([tensor.insert(value, acc, [r])])
        return loop.results[0]


def columns(k, x2, out):
    """out[j] combined with x2[0, j], x2[1, j], ... in row order, for every column j of the static x2 [R, N]: per
    block of LANES columns one vector, read from out, combined with each row's block and written back (the last
    block masked when LANES does not divide N); returns the new out."""
    rows, n = ir.RankedTensorType(x2.type).shape

    def block(acc, j, in_bounds):
        start = k.read(acc, [j], in_bounds)
        loop = scf.ForOp(_index(0), _index(rows), _index(1), [start])
        with ir.InsertionPoint(loop.body):
            row = k.read(x2, [loop.induction_variable, j], in_bounds)
            scf.YieldOp([k.combine(row, loop.inner_iter_args[0])])
        perm = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(1, 1))
        return vector.transfer_write(acc.type, loop.results[0], acc, [j], perm, [in_bounds])

    main = n - n % k.lanes
    if main:
        loop = scf.ForOp(_index(0), _index(main), _index(k.lanes), [out])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([block(loop.inner_iter_args[0], loop.induction_variable, True)])
        out = loop.results[0]
    return block(out, _index(main), False) if main < n else out


def _round_up(n, m):
    return -(-n // m) * m


def _index(i):
    return arith.constant(ir.IndexType.get(), i)


def _dyn_type(shape):
    return ir.RankedTensorType.get(shape, ir.F32Type.get())


def _slice(value, offset, size, n=None):
    """value[offset : offset + size] along dim 0 (all n columns of a 2-D value when n is given)."""
    dyn, dyn_off = ir.ShapedType.get_dynamic_size(), ir.ShapedType.get_dynamic_stride_or_offset()
    if n is None:
        return tensor.extract_slice(_dyn_type([dyn]), value, [offset], [size], [], [dyn_off], [dyn], [1])
    return tensor.extract_slice(_dyn_type([dyn, n]), value, [offset], [size], [], [dyn_off, 0], [dyn, n], [1, 1])


def _worker_range(worker, chunk, total):
    """[lo, hi) of worker's share: chunk items each, clipped to total."""
    lo = arith.minui(arith.muli(worker, _index(chunk)), _index(total))
    return lo, arith.minui(arith.addi(lo, _index(chunk)), _index(total))


def _split_rows(k, x2, out, rows, n, tasks):
    """The rows of x2 [rows, n] (static) divided among `tasks` iterations of an scf.forall."""
    forall = scf.ForallOp([0], [tasks], [1], [out])
    with ir.InsertionPoint(forall.body):
        lo, hi = _worker_range(forall.induction_variables[0], -(-rows // tasks), rows)
        size = arith.subi(hi, lo)
        part = k.rows(_slice(x2, lo, size, n), _slice(forall.inner_iter_args[0], lo, size), _index(0), size)
        with ir.InsertionPoint(forall.terminator().block):
            dyn, dyn_off = ir.ShapedType.get_dynamic_size(), ir.ShapedType.get_dynamic_stride_or_offset()
            tensor.ParallelInsertSliceOp(part, forall.inner_iter_args[0], [lo], [size], [], [dyn_off], [dyn], [1])
    return forall.results[0]


def _split_columns(k, x1, n, tasks):
    """The reduction of the static 1-D x1 as one column range per task of an scf.forall, then combined."""
    chunk = _round_up(_round_up(n, tasks) // tasks, k.lanes)  # a whole number of vectors per task
    parts = tensor.EmptyOp([tasks], ir.F32Type.get()).result
    forall = scf.ForallOp([0], [tasks], [1], [parts])
    with ir.InsertionPoint(forall.body):
        w = forall.induction_variables[0]
        lo, hi = _worker_range(w, chunk, n)
        size = arith.subi(hi, lo)
        value = tensor.from_elements(_dyn_type([1]), [k.row(_slice(x1, lo, size), None, size)])
        with ir.InsertionPoint(forall.terminator().block):
            tensor.ParallelInsertSliceOp(value, forall.inner_iter_args[0], [w], [], [], [
                ir.ShapedType.get_dynamic_stride_or_offset()], [1], [1])
    total = tensor.extract(forall.results[0], [_index(0)])
    for i in range(1, tasks):
        total = k.combine(total, tensor.extract(forall.results[0], [_index(i)]))
    return total


def _collapsed(value, groups):
    """value collapsed by the reassociation groups (value itself when every group is one dim)."""
    if all(len(g) == 1 for g in groups):
        return value
    t = ir.RankedTensorType(value.type)
    shape = [_group_size(list(t.shape), g) for g in groups]
    return tensor.collapse_shape(_dyn_type(shape), value, groups)


def _group_size(shape, group):
    n = _static_product([shape[i] for i in group])
    return ir.ShapedType.get_dynamic_size() if n is None else n


def _expanded(value, like):
    """The 1-D value reshaped to the type of `like` (a tensor of rank >= 1)."""
    t = ir.RankedTensorType(like.type)
    if t.rank == 1:
        return value
    dynamic = [tensor.dim(like, _index(i)) for i, d in enumerate(t.shape) if d == ir.ShapedType.get_dynamic_size()]
    return tensor.expand_shape(t, value, [list(range(t.rank))], dynamic, list(t.shape))


def rewrite(op, lanes, workers, tasks_per_worker=1):
    """The vector-loop replacement of a candidate linalg.reduce; returns its result value."""
    x, init = op.operands
    k = _Kernel(_combiner(op), lanes)
    rank = ir.RankedTensorType(x.type).rank
    dims = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if dims == list(range(len(dims))) and len(dims) < rank:  # leading axes: column blocks
        out = _collapsed(init, [list(range(rank - len(dims)))])
        return _expanded(columns(k, _collapsed(x, [dims, list(range(len(dims), rank))]), out), init)
    first = dims[0]
    reduced = list(range(first, rank))
    xshape = list(ir.RankedTensorType(x.type).shape)
    n, total = _static_product(xshape[first:]), _static_product(xshape)
    big = workers > 1 and total is not None and total >= MIN_SPLIT
    if first == 0:  # full reduction into a 0-d init
        x1 = _collapsed(x, [reduced])
        value = (_split_columns(k, x1, n, workers * tasks_per_worker) if big
                 else k.row(x1, None, tensor.dim(x1, _index(0))))
        return tensor.insert(k.combine(tensor.extract(init, []), value), init, [])
    x2 = _collapsed(x, [list(range(first)), reduced])
    out = _collapsed(init, [list(range(first))])
    rows = _static_product(xshape[:first])
    if big and rows >= workers:
        tasks = workers * tasks_per_worker if rows >= workers * tasks_per_worker else workers
        result = _split_rows(k, x2, out, rows, n, tasks)
    else:
        result = k.rows(x2, out, _index(0), tensor.dim(x2, _index(0)))
    return _expanded(result, init)


@register("tfn-vectorize-reductions", "Rewrite f32 sum/max/min linalg.reduce ops over trailing dims into vector "
          "loops (split into tasks for the workers when big and static)",
          options=[LANES, WORKERS, TASKS_PER_WORKER])
def vectorize_reductions(module_op, lanes, workers, tasks_per_worker):
    for op in collect(module_op, candidate):
        with ir.InsertionPoint(op), op.location:
            new = rewrite(op, lanes, workers, tasks_per_worker)
        op.results[0].replace_all_uses_with(new)
        op.erase()
