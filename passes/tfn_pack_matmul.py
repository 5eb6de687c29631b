"""tfn-pack-matmul: large static f32 matmul, batch_matmul and conv_2d_nhwc_hwcf into packed-B contractions.

C[m, n] = fill + A[m, k] B[k, n] becomes: A zero-padded to [M', K'], B zero-padded and packed by linalg.pack into
panels Bp[n / NR][k][NR] (so the inner loop streams contiguous memory), one linalg.generic computing
C3[m][n / NR][NR] += A[m][k] Bp[n / NR][k][NR], then collapsed and sliced back to [M, N]. With more than one worker
(option `workers`, default: the cores available), a big contraction is tagged `tfn.split` with the scf.forall tile
sizes that cut it into equal tasks (worker_split): up to `tasks-per-worker` (default 4) per worker, none smaller
than MIN_TASK_FLOPS, taken one at a time by the calling thread and the workers (tfn-async-parallel), so that a core
busy with another process slows the contraction by its share only.
The register tile MR x NR follows the options `vector-bits` and `vector-registers` (defaults: the target's,
passes/target.py): see Tiles.for_target; a product with no more output columns than one vector holds gets panels
of one vector (for_columns), and with 16 registers a product whose rows 2 divides but 6 does not gets 6-row tiles
and one tail tile of 2 or 4 rows (row_tail), or 4-row tiles when its rows are split among the workers (for_rows).
A convolution is computed one output row (n, oh) at a time, so that the row stays in cache while all KH x KW taps
accumulate into it: per row a fill and, per tap, a contraction of a strided slice of the input row (ow, c) with
the packed filter tap W[kh][kw] (k = input channels, n = filters); the ow % MR trailing pixels get a contraction of
their own, so the input is never padded in width. Filters beyond the last full NR-wide panel get a narrower panel of
their own (tail_panel: the guide's 100 filters as 96 + 8 rather than 128 or 112), computed into a scratch row
whose real columns are then copied into the row (an in-cache copy of a few columns per row; slicing a wider result
once at the end copied the whole output: 15.7 MB for the guide's convolution). The rows are an scf.forall (run on
the worker threads by tfn-async-parallel) when the convolution is big enough, else an scf.for nest. When the
convolution's only use adds a vector of one value per filter (a Conv2D layer's bias), each row's accumulators start
as that bias (a tagged broadcast in place of the zero fill) and the add is dropped: one pass less over the output
(conv_bias).
M' is a multiple of MR, K' of KR and N' of NR, and each cache tile divides its padded size, so every tile that
tfn-vectorize-kernels cuts is static. Zero padding adds only exact zeros. The packs, fills and contractions are
tagged `tfn.kernel` with their tile sizes for tfn-vectorize-kernels. Smaller products, dynamic shapes and other
element types stay on the generic path.
Operands are read as stored (packed_product): a matmul operand made by a linalg.transpose of its last two dims (how
tfn lowers transpose_a / transpose_b, as gradients use them: x^T dz, dz W^T) is read through it. B^T [N, K] is
packed straight into the same panels (linalg.pack with inner_dims_pos = [0]); A^T [K, M] is read by the contraction
through a (k, m) map, its MR rows of one k being consecutive floats, as a packed A would hold them. Measured against
the transposed copy made before (same process, interleaved, one core): A^T 4096 x 1024 @ 1024 x 256 56 -> 90
GFLOP/s, 512 x 1024 @ B^T 1024 x 4096 48 -> 93 GFLOP/s; the 784-256-256-10 training step (four such copies)
11-14 % faster. A linalg.generic that is a matmul whose M, N or K spans several loops, with operands
stored either way (generic_contraction; what upstream linalg-fuse-elementwise-ops makes of a matmul beside
reshapes), is collapsed to a 2-D product and packed the same way.
"""
import dataclasses
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from tfn.passes.lowering.common import affine_map, generic, identity_map, index, parallel, reduction
from tfn.passes.options import TASKS_PER_WORKER, VECTOR_BITS, VECTOR_REGISTERS, WORKERS, Option, positive
from tfn.passes.registry import register
from tfn.passes.walk import collect, defined_before

# Cache tiles (upper bounds; the largest multiple of the register tile dividing). tfn-vectorize-kernels orders the
# loops as GotoBLAS does: a KC x NC block of packed B is reused by every MC-row block of A. Measured on two cores,
# 1024^3 and 2048^3: KC = 1024 beat 512 by 2-4 % and 256 by 5-8 % (fewer loads and stores of the accumulators);
# MC from 32 to 256 made no difference.
MC, NC, KC = 128, 1024, 1024
MIN_FLOPS = 2 * 64 ** 3        # below this the packing and compile time are not worth it
# The least work per task when a contraction is cut into more tasks than workers (~40 us at 100 GFLOP/s). The
# caller and the worker threads take tasks one by one from a shared counter (tfn-async-parallel), so a task costs
# an atomic add, not a wake-up: small tasks bound what the caller waits for when a worker is descheduled in the
# middle of one (a 256^3 product is cut into 8 tasks with 2 workers, a 1024^3 one into 8 as well).
MIN_TASK_FLOPS = 2 * 128 ** 3
# A convolution is unrolled tap by tap: a huge filter would make an IR so big that bufferization never ends, so
# filters with more taps (7 x 7, a ResNet stem, is the largest common one) stay on the generic path.
MAX_CONV_TAPS = 49


@dataclass(frozen=True)
class Tiles:
    """The register tile (MR x NR accumulators, k unrolled by KR), the worker count and the tasks per worker of one
    pass run."""
    mr: int
    nr: int
    kr: int
    workers: int
    tasks_per_worker: int = 1
    vector_lanes: int = 16  # f32 lanes of one vector register
    min_parallel_flops: int = 2 * 256 ** 3  # the least work split over the workers (option min-parallel-flops)

    @staticmethod
    def for_target(vector_bits, vector_registers, workers, tasks_per_worker=1):
        """NR = two vectors of f32; MR rows of 2 accumulators: 8 with 32 registers (16 accumulators, 512 bits: the
        tile measured on AVX-512), 6 with 16 (12 accumulators, leaving room for the B vectors and A's broadcast)."""
        return Tiles(8 if vector_registers >= 32 else 6, 2 * vector_bits // 32, 4, workers, tasks_per_worker,
                     vector_bits // 32)


def for_columns(t, n):
    """The tiles for a product with n output columns: when n fits in one vector (16 filters or a 10-class output
    layer with 512-bit vectors, 8 filters with 256-bit ones), panels of one vector instead of two, halving the
    padded work. Measured (CPU time, same process): a 5 x 5 RGB convolution to 16 filters 2.5x, 3 x 3 to 8 filters
    1.6x (AVX-512) and 2.75x (AVX2), 1024 x 512 @ 512 x 16 2.2x, 512 x 256 @ 256 x 10 1.4x faster; doubling MR
    instead (the same count of accumulators) measured no better."""
    return dataclasses.replace(t, nr=t.vector_lanes) if n <= t.vector_lanes < t.nr else t


def for_rows(t, m):
    """The tiles for a product with m rows (A's, C's): with 16 registers, when 6 does not divide m but 4 does (256,
    1024: most sizes), register tiles of 4 rows (8 accumulators) instead of 6, so that A is not copied into a
    zero-padded matrix on every call nor C sliced out of a padded one. Measured on one core (AVX2 code, AMD EPYC,
    interleaved with NumPy's OpenBLAS Haswell kernel): 4 x 16 and 6 x 16 ran equally fast on 256^3 (104-108
    GFLOP/s) and 1024^3 (76-81), while the padded copies of A and C (256 KiB each at 256^3) run on the calling
    thread alone, outside the split. Used where row_tail is not: when the worker split cuts the rows."""
    return dataclasses.replace(t, mr=4) if t.mr == 6 and m % 6 and m % 4 == 0 else t


def row_tail(t, m):
    """With 16 registers, when 6 does not divide m but 2 does (256, 1024, 128: most sizes): (the rows computed in
    6-row register tiles, the rows of one last tile: 2 or 4), else None. The contraction is then split along its rows
    (tfn-vectorize-kernels), so that most of it runs on 6 x 16 tiles (12 accumulators: enough independent FMAs to
    cover their latency) and neither is A copied into a zero-padded matrix nor C sliced out of a padded one (what
    for_rows avoids with 4-row tiles, whose 8 accumulators leave no slack). Measured on one core (AVX2 code, AMD
    EPYC, medians of interleaved single calls in one process): 240^3 (6 divides it) 100-102 GFLOP/s on 6 x 16
    tiles against 94 on 4 x 16; 256^3 104.3 (252 + 4 rows) against 100.8 (4 x 16), 1024^3 95.7 against 88.0;
    NumPy's OpenBLAS Haswell kernel on one thread 103-107 in the same runs."""
    return (m - m % 6, m % 6) if t.mr == 6 and m % 6 and m % 2 == 0 and m > 6 else None


DEFAULT_MAPS = ("[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                "affine_map<(d0, d1, d2) -> (d0, d1)>]",
                "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]")


def round_up(n, m):
    return -(-n // m) * m


def cache_tile(size, step, limit):
    """The largest multiple of step dividing size (a multiple of step) and at most limit."""
    best = step
    for t in range(step, min(size, limit) + 1, step):
        if size % t == 0:
            best = t
    return best


def _shape(value):
    return list(ir.RankedTensorType(value.type).shape)


def _static_f32(value):
    t = value.type
    return isinstance(t, ir.RankedTensorType) and t.has_static_shape and isinstance(t.element_type, ir.F32Type)


def _fill_value(init):
    """The scalar a linalg.fill init holds, or None when init is not a fill."""
    owner = init.owner
    owner = getattr(owner, "operation", owner)
    if not isinstance(owner, ir.Operation) or owner.name != "linalg.fill":
        return None
    return owner.operands[0]


def _tag(value, kind, *tiles):
    """Tag the op defining value for tfn-vectorize-kernels: its kind and its tile sizes (one list per level)."""
    op = value.owner.operation
    op.attributes["tfn.kernel"] = ir.StringAttr.get(kind)
    op.attributes["tfn.tiles"] = ir.ArrayAttr.get([ir.DenseI64ArrayAttr.get(t) for t in tiles])
    return value


def _padded(value, shape):
    """value zero-padded at the high end of each dim to `shape` (value itself when already that shape)."""
    t = ir.RankedTensorType(value.type)
    if list(t.shape) == list(shape):
        return value
    high = [p - s for p, s in zip(shape, t.shape)]
    pad = tensor.PadOp(ir.RankedTensorType.get(shape, t.element_type), value, [], [], [0] * len(shape), high)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(t.element_type, 0.0))
    return pad.result


def _packed(b, nb, t, transposed=False):
    """b [batch..., K', N'] packed into [batch..., N' / NR, K', NR] (a tagged linalg.pack); with `transposed`, b is
    stored [batch..., N', K'] (B's transpose, as a matmul with transpose_b reads it) and packed into the same layout
    directly, without a transposed copy first."""
    shape = _shape(b)
    k, n = (shape[nb + 1], shape[nb]) if transposed else (shape[nb], shape[nb + 1])
    dest = tensor.EmptyOp(shape[:nb] + [n // t.nr, k, t.nr], ir.F32Type.get()).result
    n_dim = nb if transposed else nb + 1
    perm = list(range(nb)) + ([nb, nb + 1] if transposed else [nb + 1, nb])
    return _tag(linalg.pack(b, dest, [n_dim], [t.nr], outer_dims_perm=perm), "pack", [1] * (nb + 1) + [t.kr, t.nr])


def _filled(out, value, rows):
    """A tagged fill of out [batch..., M, N' / NR, NR] with value, in blocks of rows x NR (rows divides M)."""
    return _tag(linalg.fill(value, outs=[out]), "fill", [1] * (len(_shape(out)) - 3) + [rows, 1, 0])


def worker_split(acc_shape, mr, workers, tasks=None):
    """forall tile sizes (loops batch..., m, j, k, r) cutting a contraction into acc [batch..., M', N' / NR, NR] into
    `tasks` equal parts (default: one per worker), else into one per worker: whole batches, else whole panels (then
    each task also packs just the part of B it reads), else groups of panels times blocks of rows (_panels_by_rows),
    else whole register-tile rows; None when no loop divides evenly."""
    nb = len(acc_shape) - 3
    for n in dict.fromkeys((tasks or workers, workers)):
        for d in list(range(nb)) + [nb + 1]:
            if acc_shape[d] % n == 0:
                return [acc_shape[d] // n if k == d else 0 for k in range(nb + 4)]
        cut = _panels_by_rows(acc_shape[nb], acc_shape[nb + 1], mr, n)
        if cut is not None:
            return [0] * nb + list(cut) + [0, 0]
        if acc_shape[nb] % (n * mr) == 0:
            return [acc_shape[nb] // n if k == nb else 0 for k in range(nb + 4)]
    return None


def _panels_by_rows(rows, panels, mr, n):
    """(rows, panels) of each of n tasks when n is more than the panels divide into: the panels cut into as many
    groups as divide both, the rows (whole register tiles) into n / groups blocks; None when that is one group or
    the rows do not divide. Each task packs the panels it reads, so B is packed in parallel, each panel once per row
    block, where a split of the rows alone packs all of B on the calling thread before the tasks start and has each
    task stream all of it for a few rows. (1024^3 with 16 workers, 64 tasks of AVX-512's 32 panels: 2 x 32 tasks of
    512 rows x 1 panel rather than 64 of 16 rows x 32 panels after a serial 4 MiB pack.)"""
    for groups in range(min(n, panels), 1, -1):
        blocks = n // groups
        if n % groups == 0 and panels % groups == 0 and rows % (blocks * mr) == 0:
            return rows // blocks, panels // groups
    return None


def task_count(flops, t):
    """Tasks a contraction of `flops` is cut into: up to tasks_per_worker per worker, each >= MIN_TASK_FLOPS, and at
    least two. Fewer tasks than workers leave some workers asleep: on 16 cores (an Intel Xeon, 2026-11-26) a 256^3
    product in 16 tasks ran at 225 GFLOP/s, in 8 tasks on 8 cores at 354 (each woken worker costs the caller a
    wake-up and brings ~2 MFLOP of work)."""
    return max(min(2, t.workers), min(t.workers * t.tasks_per_worker, flops // MIN_TASK_FLOPS))


def _contract(a, bp, acc, t, mr, split=None, a_transposed=False, tail=None):
    """Tagged acc[batch..., m, j, r] += a[batch..., m, k] * bp[j, k, r] (bp without batch dims when it has fewer; a
    stored [batch..., k, m] when a_transposed: the register tile then reads MR consecutive floats of one row of a,
    as a packed A would hold them); register tiles of mr rows (mr divides M; with `tail` (row_tail), mr divides the
    first tail[0] rows, and the last tail[1] rows are one register tile of their own); split over the workers by
    `split` (worker_split) when given."""
    nb = len(_shape(acc)) - 3
    part = [split[d] if split and split[d] else s for d, s in enumerate(_shape(acc))]
    mp, panels, nr = part[nb:]
    kp = _shape(a)[-2 if a_transposed else -1]
    d = [ir.AffineDimExpr.get(i) for i in range(nb + 4)]
    bd, (i, j, k, r) = d[:nb], d[nb:]
    b_batch = bd[:len(_shape(bp)) - 3]
    maps = [affine_map(nb + 4, bd + ([k, i] if a_transposed else [i, k])), affine_map(nb + 4, b_batch + [j, k, r]),
            affine_map(nb + 4, bd + [i, j, r])]
    iters = parallel(nb + 2) + [reduction()] + parallel(1)
    res = generic([a, bp], maps[:2], [acc], maps[2:], iters, lambda x, y, c: arith.addf(c, arith.mulf(x, y)))[0]
    rows = mp if tail is None else tail[0]
    level1 = [1] * nb + [cache_tile(rows, mr, MC), cache_tile(panels * nr, nr, NC) // nr, cache_tile(kp, t.kr, KC), 0]
    # a third "level" [rows, tail rows] tells tfn-vectorize-kernels to split the rows before tiling
    _tag(res, "contract", level1, [0] * nb + [mr, 1, t.kr, 0], *([list(tail)] if tail else []))
    if split:
        res.owner.operation.attributes["tfn.split"] = ir.DenseI64ArrayAttr.get(split)
    return res


def _unpacked(res, out_shape):
    """[batch..., M', N' / NR, NR] collapsed to [batch..., M', N'] and sliced to out_shape."""
    shape = _shape(res)
    nb = len(shape) - 3
    flat_shape = shape[:nb] + [shape[nb], shape[nb + 1] * shape[nb + 2]]
    flat = tensor.collapse_shape(ir.RankedTensorType.get(flat_shape, ir.F32Type.get()), res,
                                 [[x] for x in range(nb + 1)] + [[nb + 1, nb + 2]])
    if flat_shape == list(out_shape):
        return flat
    rank = len(out_shape)
    result = ir.RankedTensorType.get(out_shape, ir.F32Type.get())
    return tensor.extract_slice(result, flat, [], [], [], [0] * rank, list(out_shape), [1] * rank)


def _flops(op):
    out = _shape(op.operands[2])
    if op.name == "linalg.conv_2d_nhwc_hwcf":
        kh, kw, c, _ = _shape(op.operands[1])
        return 2 * kh * kw * c * _prod(out)
    return 2 * _shape(op.operands[0])[-1] * _prod(out)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _runs(dims, group_of):
    """dims (an operand's map results) cut into runs of consecutive dims of one group: [(group, [dims])]."""
    runs = []
    for d in dims:
        if runs and runs[-1][0] == group_of[d]:
            runs[-1][1].append(d)
        else:
            runs.append((group_of[d], [d]))
    return runs


def _mul_add_body(op):
    """Whether a linalg.generic's body is out + in0 * in1 (f32, either operand order)."""
    block = op.regions[0].blocks[0]
    ops = [getattr(o, "operation", o) for o in block.operations]
    if [o.name for o in ops] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return False
    mul, add, yld = ops
    args = list(block.arguments)
    return ({_arg_number(v, args) for v in mul.operands} == {0, 1}
            and {_arg_number(v, args) for v in add.operands} == {2, None}
            and any(v == mul.results[0] for v in add.operands) and yld.operands[0] == add.results[0])


def _arg_number(value, args):
    return next((i for i, a in enumerate(args) if a == value), None)


@dataclass(frozen=True)
class GenericContraction:
    """A linalg.generic computing C = fill + A B whose M, N and K may each be several loops (what upstream
    linalg-fuse-elementwise-ops makes of a matmul beside reshapes: their dims folded into the loops). a holds C's
    leading dims; each operand is stored as two runs of dims (`*_lead`: how many dims the first run has), with K
    leading when it is stored transposed."""
    a: object
    b: object
    a_transposed: bool
    b_transposed: bool
    a_lead: int
    b_lead: int
    c_lead: int
    flops: int


_SWAP = {"m": "n", "n": "m", "k": "k"}


def generic_contraction(op):
    """The GenericContraction a linalg.generic is, or None. Needs two static f32 inputs and a filled output, a
    mul-add body, projected-permutation maps, every loop in exactly two of the operands (M: A and C, N: B and C,
    K: A and B; no batch loop), and each operand stored as two runs of consecutive loops, one group each, in the
    same loop order as the other operand holding that group (so that collapsing each run is a reshape)."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    if not all(_static_f32(v) for v in op.operands) or _fill_value(op.operands[2]) is None or not _mul_add_body(op):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not all(m.is_projected_permutation and len(m.results) for m in maps):
        return None
    dims = [[ir.AffineDimExpr(e).position for e in m.results] for m in maps]
    group_of = {}
    for d in range(maps[0].n_dims):
        group = {(True, False, True): "m", (False, True, True): "n", (True, True, False): "k"}.get(
            tuple(d in ds for ds in dims))
        if group is None:  # a batch loop, a loop of one operand only, or an unused one
            return None
        group_of[d] = group
    iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any(("reduction" in it) != (group_of[d] == "k") for d, it in enumerate(iterators)):
        return None
    runs = [_runs(ds, group_of) for ds in dims]
    if any(len(r) != 2 for r in runs) or {g for g, _ in runs[2]} != {"m", "n"}:
        return None
    a, b, runs_a, runs_b = op.operands[0], op.operands[1], runs[0], runs[1]
    runs_c = runs[2]
    if runs_c[0][0] == "n":  # C = [N..., M...] is (B^T A^T): the input holding C's leading loops is the new A
        a, b, runs_a, runs_b = b, a, runs_b, runs_a
        runs_a, runs_b, runs_c = ([(_SWAP[g], ds) for g, ds in r] for r in (runs_a, runs_b, runs_c))
    by_a, by_b, by_c = dict(runs_a), dict(runs_b), dict(runs_c)
    if set(by_a) != {"m", "k"} or set(by_b) != {"k", "n"}:
        return None
    if by_a["m"] != by_c["m"] or by_b["n"] != by_c["n"] or by_a["k"] != by_b["k"]:
        return None
    size = {}
    for value, ds in zip(op.operands, dims):
        size.update(zip(ds, _shape(value)))
    flops = 2 * _prod(size.values())
    return GenericContraction(a, b, runs_a[0][0] == "k", runs_b[0][0] == "n", len(runs_a[0][1]),
                              len(runs_b[0][1]), len(runs_c[0][1]), flops)


def _collapsed(value, lead):
    """value collapsed to 2-D: its first `lead` dims into one, the rest into the other."""
    shape = _shape(value)
    flat = [_prod(shape[:lead]), _prod(shape[lead:])]
    if shape == flat:
        return value
    return tensor.collapse_shape(ir.RankedTensorType.get(flat, ir.F32Type.get()), value,
                                 [list(range(lead)), list(range(lead, len(shape)))])


def rewrite_generic(op, t):
    """packed_product of a GenericContraction: each operand collapsed to its two runs, the [M, N] product expanded
    back to C's shape."""
    g = generic_contraction(op)
    a, b = _collapsed(g.a, g.a_lead), _collapsed(g.b, g.b_lead)
    c = packed_product(a, b, _fill_value(op.operands[2]), t, 0, g.a_transposed, g.b_transposed)
    out_shape = _shape(op.operands[2])
    if out_shape == _shape(c):
        return c
    return tensor.expand_shape(ir.RankedTensorType.get(out_shape, ir.F32Type.get()), c,
                               [list(range(g.c_lead)), list(range(g.c_lead, len(out_shape)))], [], out_shape)


def candidate(op):
    """Whether op is a static f32 matmul / batch_matmul / NHWC conv, or a linalg.generic that is a matmul
    (generic_contraction), big enough for this pass."""
    if op.name == "linalg.generic":
        g = generic_contraction(op)
        return g is not None and g.flops >= MIN_FLOPS
    if op.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_2d_nhwc_hwcf"):
        return False
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) not in DEFAULT_MAPS:
        return False  # a transposed or broadcast variant (tfn's lowering materialises transposes)
    if len(op.operands) != 3 or not all(_static_f32(v) for v in op.operands) or _fill_value(op.operands[2]) is None:
        return False
    if op.name == "linalg.conv_2d_nhwc_hwcf" and _prod(_shape(op.operands[1])[:2]) > MAX_CONV_TAPS:
        return False
    return 0 not in _shape(op.operands[2]) and 0 not in _shape(op.operands[0]) and _flops(op) >= MIN_FLOPS


def _transpose_source(value, rank):
    """The operand of the linalg.transpose swapping the last two of `rank` dims that defines value, else None."""
    owner = value.owner
    owner = getattr(owner, "operation", owner)
    if not isinstance(owner, ir.Operation) or owner.name != "linalg.transpose":
        return None
    perm = list(ir.DenseI64ArrayAttr(owner.attributes["permutation"]))
    return owner.operands[0] if perm == list(range(rank - 2)) + [rank - 1, rank - 2] else None


def packed_product(a, b, fill, t, nb=0, a_transposed=False, b_transposed=False, epilogue=None):
    """C [batch..., M, N] = fill + A B as pad + pack + tagged packed contraction + collapse + slice. a is A
    [batch..., M, K], or A's transpose [batch..., K, M] when a_transposed; b is B [batch..., K, N], or B's
    transpose [batch..., N, K] when b_transposed (a matmul with a transposed operand reads it as stored: no
    transposed copy is made). With `epilogue` (matmul_epilogue's (consumer, operand) and the least elements of C
    to fuse), returns (the consumer's new result, True) when the consumer is computed in the contraction's register
    tiles (fused_epilogue), else (C, False)."""
    sa, sb = _shape(a), _shape(b)
    batch = sa[:nb]
    m, k = (sa[nb + 1], sa[nb]) if a_transposed else (sa[nb], sa[nb + 1])
    n = sb[nb] if b_transposed else sb[nb + 1]
    t = for_columns(t, n)
    np_, kp = round_up(n, t.nr), round_up(k, t.kr)
    # the tail tile is a second micro-kernel to generate: worth it where the product is big enough to be split
    # (on case (h)'s training step, tails on all 8 products made the MLIR pipeline 25-30 % slower)
    big = 2 * kp * _prod(batch) * m * np_ >= t.min_parallel_flops
    tail, split = row_tail(t, m) if big else None, None
    # the consumer is computed in the register tiles (fused_epilogue) only when nothing is padded (it reads C as it
    # is) and one cache tile holds all of K (it runs once the accumulators hold their final sums); it needs one
    # register-tile height, so 4-row tiles (for_rows) replace 6-row ones and a tail: an AVX2 kernel ~4 % slower
    # (for_rows) against a pass over C saved
    fuse = (epilogue is not None and not nb and np_ == n and cache_tile(kp, t.kr, KC) == kp
            and m * n >= epilogue[2])
    if tail is not None and fuse and m % for_rows(t, m).mr == 0:
        tail = None
    if tail is not None:
        split = _split(batch + [m, np_ // t.nr, t.nr], kp, t)
        if t.workers > 1 and (split is None or split[nb]):
            # no split by batches or panels: the rows are cut among the workers, in 4-row tiles (for_rows) or padded
            tail = None
    if tail is None:
        t = for_rows(t, m)
        split = _split(batch + [round_up(m, t.mr), np_ // t.nr, t.nr], kp, t)
    mp = m if tail else round_up(m, t.mr)
    bp = _packed(_padded(b, batch + ([np_, kp] if b_transposed else [kp, np_])), nb, t, b_transposed)
    acc = _filled(tensor.EmptyOp(batch + [mp, np_ // t.nr, t.nr], ir.F32Type.get()).result, fill,
                  _largest_divisor(mp, t.mr))
    a = _padded(a, batch + ([kp, mp] if a_transposed else [mp, kp]))
    res = _contract(a, bp, acc, t, t.mr, split, a_transposed, tail)
    if epilogue is None:
        return _unpacked(res, batch + [m, n])
    if not fuse or tail or mp != m:
        return _unpacked(res, batch + [m, n]), False
    return fused_epilogue(res, *epilogue[:2]), True


def _split(acc_shape, kp, t):
    """The worker split (worker_split) of a contraction into acc_shape with kp-long dot products, None when it is
    too small to split."""
    flops = 2 * kp * _prod(acc_shape)
    if t.workers <= 1 or flops < t.min_parallel_flops:
        return None
    return worker_split(acc_shape, t.mr, t.workers, task_count(flops, t))


def rewrite_matmul(op, t, epilogue=None):
    """packed_product of a candidate matmul / batch_matmul; an operand that is a linalg.transpose of the last two
    dims is read through it (the transpose is erased once unused). With `epilogue`, (value, fused) as
    packed_product returns it."""
    a, b, c = op.operands
    nb = 1 if op.name == "linalg.batch_matmul" else 0
    a_src, b_src = _transpose_source(a, nb + 2), _transpose_source(b, nb + 2)
    return packed_product(a if a_src is None else a_src, b if b_src is None else b_src, _fill_value(c), t, nb,
                          a_src is not None, b_src is not None, epilogue)


def _is_identity(m):
    return m.n_symbols == 0 and m.n_dims == len(m.results) and m == ir.AffineMap.get_identity(m.n_dims)


def _is_row(m):
    """Whether m is (d0, d1) -> (d1): a vector of one value per column (a bias) broadcast along the rows."""
    return m.n_symbols == 0 and m == ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(1)])


def matmul_epilogue(op):
    """(consumer, operand number) when a candidate linalg.matmul's only use is an elementwise linalg.generic that
    tfn-pack-matmul can compute in the contraction's register tiles (fused_epilogue): all-parallel over op's
    [M, N], one f32 result written through the identity map, its init's block argument unused, no linalg.index,
    reading op's result and every other input (static f32) through the identity map or as a row [N] (a bias);
    else None."""
    uses = list(op.results[0].uses)
    if op.name != "linalg.matmul" or len(uses) != 1:
        return None
    g, operand = uses[0].owner, uses[0].operand_number
    g = getattr(g, "operation", g)
    if g.name != "linalg.generic" or len(g.results) != 1 or operand >= len(g.operands) - 1:
        return None
    if "reduction" in str(g.attributes["iterator_types"]) or len(g.regions[0].blocks) != 1:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    if not _is_identity(maps[-1]) or maps[-1].n_dims != 2 or not _is_identity(maps[operand]):
        return None
    if not all(_static_f32(v) for v in g.operands) or _shape(g.results[0]) != _shape(op.results[0]):
        return None
    if any(not (_is_identity(m) or _is_row(m)) for m in maps[:-1]):
        return None
    block = g.regions[0].blocks[0]
    if list(block.arguments[len(block.arguments) - 1].uses):
        return None
    if any(getattr(o, "operation", o).name == "linalg.index" for o in block.operations):
        return None
    return g, operand


def fused_epilogue(res, g, operand):
    """The elementwise consumer g of a contraction's product, rebuilt on the packed layout [M, N / NR, NR] of the
    contraction's result `res` (g's input `operand`) and tagged `epilogue` for tfn-vectorize-kernels, which
    computes it on the accumulators in registers once their k loop is done: the product is never stored, and
    the pass over memory that g made is gone (a bias add, a ReLU's backward mask, an SGD update of the weights
    a gradient is for). The worker split moves from the contraction to it. Returns g's result, collapsed to
    [M, N]; g's body is moved into the new op."""
    m, panels, nr = _shape(res)
    f32 = ir.F32Type.get()
    maps = [ir.AffineMapAttr(x).value for x in ir.ArrayAttr(g.attributes["indexing_maps"])]
    n_in = len(g.operands) - 1
    d = [ir.AffineDimExpr.get(i) for i in range(3)]
    with ir.InsertionPoint(g), g.location:
        inputs, in_maps = [res], [identity_map(3)]
        for i in range(n_in):
            if i == operand:
                continue
            v = g.operands[i]
            if _is_identity(maps[i]):
                inputs.append(tensor.expand_shape(ir.RankedTensorType.get([m, panels, nr], f32), v, [[0], [1, 2]],
                                                  [], [m, panels, nr]))
                in_maps.append(identity_map(3))
            else:
                inputs.append(tensor.expand_shape(ir.RankedTensorType.get([panels, nr], f32), v, [[0, 1]], [],
                                                  [panels, nr]))
                in_maps.append(affine_map(3, [d[1], d[2]]))
        out = tensor.EmptyOp([m, panels, nr], f32).result
        new = linalg.GenericOp([out.type], inputs, [out],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in in_maps + [identity_map(3)]]),
                               ir.ArrayAttr.get(parallel(3)))
        block = new.regions[0].blocks.append(*[f32] * (len(inputs) + 1))
        old = g.regions[0].blocks[0]
        order = [operand] + [i for i in range(n_in) if i != operand]
        for new_arg, i in zip(block.arguments, order):
            old.arguments[i].replace_all_uses_with(new_arg)
        ops = old.operations
        for _ in range(len(ops)):
            block.append(ops[0])  # (moves it, the yield last)
        contraction = res.owner.operation
        attrs = contraction.attributes
        new.operation.attributes["tfn.kernel"] = ir.StringAttr.get("epilogue")
        new.operation.attributes["tfn.tiles"] = attrs["tfn.tiles"]
        if "tfn.split" in attrs:
            split = list(ir.DenseI64ArrayAttr(attrs["tfn.split"]))
            new.operation.attributes["tfn.split"] = ir.DenseI64ArrayAttr.get(split[:2] + split[3:])
            del attrs["tfn.split"]
        return tensor.collapse_shape(ir.RankedTensorType.get([m, panels * nr], f32), new.result, [[0], [1, 2]])


def _attr_pair(op, name):
    attr = op.attributes[name] if name in op.attributes else None
    return [1, 1] if attr is None else [int(v) for v in ir.DenseIntElementsAttr(attr)]


def _slice(source, offsets, sizes, strides=None, shape=None):
    """tensor.extract_slice of source; offsets are ints or index values; the result has `shape` (default: sizes)."""
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    result = ir.RankedTensorType.get(sizes if shape is None else shape, ir.F32Type.get())
    return tensor.extract_slice(result, source, [o for o in offsets if not isinstance(o, int)], [], [],
                                [o if isinstance(o, int) else dyn for o in offsets], sizes,
                                strides or [1] * len(sizes))


def _insert(value, dest, offsets, sizes):
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    return tensor.insert_slice(value, dest, [o for o in offsets if not isinstance(o, int)], [], [],
                               [o if isinstance(o, int) else dyn for o in offsets], sizes, [1] * len(sizes))


def _largest_divisor(n, limit):
    return max(d for d in range(1, min(n, limit) + 1) if n % d == 0)


def _each_row(out, body, parallel):
    """out [n, oh, rest...] with every row out[b, r] replaced by body(b, r, row): an scf.forall over (n, oh) when
    parallel (tfn-async-parallel spreads its iterations over the workers), else two nested scf.for."""
    n, oh, *rest = _shape(out)
    sizes, zeros = [1, 1] + rest, [0] * len(rest)
    if parallel:
        loop = scf.ForallOp([0, 0], [n, oh], [1, 1], [out])
        with ir.InsertionPoint(loop.body):
            (b, r), shared = loop.induction_variables, loop.inner_iter_args[0]
            row = body(b, r, _slice(shared, [b, r] + zeros, sizes, shape=rest))
            with ir.InsertionPoint(loop.terminator().block):
                dyn = ir.ShapedType.get_dynamic_stride_or_offset()
                tensor.parallel_insert_slice(row, shared, [b, r], [], [], [dyn, dyn] + zeros, sizes, [1] * len(sizes))
        return loop.results[0]
    outer = scf.ForOp(index(0), index(n), index(1), [out])
    with ir.InsertionPoint(outer.body):
        inner = scf.ForOp(index(0), index(oh), index(1), [outer.inner_iter_args[0]])
        with ir.InsertionPoint(inner.body):
            b, r, acc = outer.induction_variable, inner.induction_variable, inner.inner_iter_args[0]
            row = body(b, r, _slice(acc, [b, r] + zeros, sizes, shape=rest))
            scf.YieldOp([_insert(row, acc, [b, r] + zeros, sizes)])
        scf.YieldOp(inner.results)
    return outer.results[0]


def tail_panel(nf, t):
    """The filters beyond the full NR-wide panels in a narrower last panel, where that is narrower than NR: (its first
    filter, its width NR' = the smallest of 8, 16, 32 lanes holding them), else None (the filters are then padded to a
    multiple of NR). Measured on the guide's 100 filters (CPU time, same process): AVX-512 96 in 32-wide panels + 8
    (4 padded) 90-94 -> 76-78 ms, 40 filters 48 -> 32.5 ms, 48 (one 16-wide tail) 49.7 -> 36.7 ms; AVX2 40 filters
    (32 + 8) 39.4 -> 34.4 ms, 100 (96 + 8) 91 -> 89 ms. A 4-lane tail measured no better than an 8-lane one."""
    rem = nf % t.nr
    if not rem or nf < t.nr:
        return None
    width = next(v for v in (8, 16, 32, 64) if v >= rem)
    return (nf - rem, width) if width < t.nr else None


def rewrite_conv(op, t, bias=None):
    """Per output row: a tagged fill and KH x KW tagged contractions of strided input slices with packed taps; filters
    beyond the last full panel (tail_panel) in a panel of their own, computed into the same row. With `bias` (a [F]
    vector the convolution's result is added to, conv_bias), each row's accumulators start as the bias instead of
    zero (a tagged broadcast in place of the fill), so the caller drops the add: one pass less over the output."""
    x, w, c = op.operands
    (sh, sw), (dh, dw) = _attr_pair(op, "strides"), _attr_pair(op, "dilations")
    kh, kw, ch, nf = _shape(w)
    n, oh, ow, _ = _shape(c)
    t = for_columns(t, nf)
    cp = round_up(ch, t.kr)
    xp = _padded(x, _shape(x)[:3] + [cp])
    tail = tail_panel(nf, t)
    if tail is None:
        # Filters padded to a multiple of NR (with 512-bit vectors, 16-wide panels measured 3-5 % slower than 32-wide)
        groups = [(0, round_up(nf, t.nr), t, _filter_panels(w, 0, nf, round_up(nf, t.nr), cp, t))]
    else:
        # e.g. the guide's 100 filters: 96 in 32-wide (AVX-512) or 16-wide (AVX2) panels and 4 in an 8-wide one, 104
        # instead of 128 or 112 padded ones
        main, cols = tail
        tt = dataclasses.replace(t, nr=cols)
        groups = [(0, main, t, _filter_panels(w, 0, main, main, cp, t)),
                  (main, cols, tt, _filter_panels(w, main, nf - main, cols, cp, tt))]
    fill = _fill_value(c)
    starts = {start: None if bias is None else _bias_panels(bias, start, min(cols, nf - start), cols, g)
              for start, cols, g, _ in groups}

    def accumulate(b, r, acc, g, wp, row_shape, first_col=0):
        main_cols = ow - ow % g.mr
        parts = [(start, size, mr) for start, size, mr in ((0, main_cols, g.mr), (main_cols, ow - main_cols,
                                                                                ow - main_cols)) if size]
        rows = _largest_divisor(ow, g.mr)
        first = starts[first_col]
        acc = _filled(acc, fill, rows) if first is None else _tag(_broadcast_rows(first, acc), "fill", [rows, 1, 0])
        for i in range(kh):
            x_row = r if sh == 1 else arith.muli(r, index(sh))
            x_row = arith.addi(x_row, index(i * dh)) if i else x_row
            for j in range(kw):
                tap = _slice(wp, [i, j, 0, 0, 0], [1, 1, row_shape[1], cp, g.nr], shape=[row_shape[1], cp, g.nr])
                for start, size, mr in parts:
                    a = _slice(xp, [b, x_row, start * sw + j * dw, 0], [1, 1, size, cp], [1, 1, sw, 1],
                               shape=[size, cp])
                    if size == ow:
                        acc = _contract(a, tap, acc, g, mr)
                        continue
                    part = _contract(a, tap, _slice(acc, [start, 0, 0], [size] + row_shape[1:]), g, mr)
                    acc = _insert(part, acc, [start, 0, 0], [size] + row_shape[1:])
        return acc

    if len(groups) == 1:
        _, cols, g, wp = groups[0]
        row_shape = [ow, cols // g.nr, g.nr]
        out = tensor.EmptyOp([n, oh] + row_shape, ir.F32Type.get()).result
        rows = _each_row(out, lambda b, r, acc: accumulate(b, r, acc, g, wp, row_shape),
                         t.workers > 1 and _flops(op) >= t.min_parallel_flops)
        return _unpacked(rows, [n, oh, ow, nf])

    def row(b, r, acc):
        for start, cols, g, wp in groups:
            row_shape = [ow, cols // g.nr, g.nr]
            filters = min(cols, nf - start)
            if filters == cols:
                flat = _slice(acc, [0, start], [ow, cols])
                view = tensor.expand_shape(ir.RankedTensorType.get(row_shape, ir.F32Type.get()), flat, [[0], [1, 2]],
                                           [], row_shape)
            else:
                # The tail panel's padded filters go to a scratch row, and only its real ones into the result's row
                view = tensor.EmptyOp(row_shape, ir.F32Type.get()).result
            done = accumulate(b, r, view, g, wp, row_shape, start)
            flat = tensor.collapse_shape(ir.RankedTensorType.get([ow, cols], ir.F32Type.get()), done, [[0], [1, 2]])
            if filters < cols:
                flat = _slice(flat, [0, 0], [ow, filters])
            acc = _insert(flat, acc, [0, start], [ow, filters])
        return acc

    out = tensor.EmptyOp([n, oh, ow, nf], ir.F32Type.get()).result
    return _each_row(out, row, t.workers > 1 and _flops(op) >= t.min_parallel_flops)


def _bias_panels(bias, start, count, cols, t):
    """bias [F]'s entries start .. start + count, zero-padded to cols and shaped as panels [cols / NR, NR]."""
    if count != _shape(bias)[0]:
        bias = _slice(bias, [start], [count])
    flat = _padded(bias, [cols])
    shape = [cols // t.nr, t.nr]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, ir.F32Type.get()), flat, [[0, 1]], [], shape)


def _broadcast_rows(panels, out):
    """A linalg.generic copying panels [P, NR] into every row of out [OW, P, NR]."""
    maps = [affine_map(3, [ir.AffineDimExpr.get(1), ir.AffineDimExpr.get(2)]), identity_map(3)]
    return generic([panels], maps[:1], [out], maps[1:], parallel(3), lambda v, _: v)[0]


def _arg_of(value, op):
    return next((i for i, a in enumerate(op.regions[0].blocks[0].arguments) if a == value), None)


def conv_bias(op):
    """(the bias [F], the add) when a candidate convolution starting from zero has a single use, a linalg.generic
    adding a vector of one value per filter (broadcast along the last dim) and yielding the sum, the vector defined
    before the convolution; else None (the add then stays)."""
    fill = _fill_value(op.operands[2])
    const = getattr(fill.owner, "operation", fill.owner)
    if not isinstance(const, ir.Operation) or const.name != "arith.constant" or \
            ir.FloatAttr(const.attributes["value"]).value != 0.0:
        return None
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    g, operand = uses[0].owner, uses[0].operand_number
    g = getattr(g, "operation", g)
    if g.name != "linalg.generic" or len(g.operands) != 3 or len(g.results) != 1 or operand > 1:
        return None
    maps = [str(m) for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    ident = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    if maps[operand] != ident or maps[2] != ident or maps[1 - operand] != "affine_map<(d0, d1, d2, d3) -> (d3)>":
        return None
    ops = [getattr(o, "operation", o) for o in g.regions[0].blocks[0].operations]
    if [o.name for o in ops] != ["arith.addf", "linalg.yield"] or ops[1].operands[0] != ops[0].results[0]:
        return None
    if {_arg_of(v, g) for v in ops[0].operands} != {0, 1} or "fastmath" in str(ops[0].attributes):
        return None
    bias = g.operands[1 - operand]
    if not _static_f32(bias) or not defined_before(bias, op):
        return None
    return bias, g


def _filter_panels(w, start, count, cols, cp, t):
    """Filters start .. start + count of w [kh, kw, C, F], zero-padded to cp channels and cols filters, packed into
    panels [kh, kw, cols / NR, cp, NR]."""
    kh, kw, ch, nf = _shape(w)
    if count != nf:
        w = _slice(w, [0, 0, 0, start], [kh, kw, ch, count])
    return _packed(_padded(w, [kh, kw, cp, cols]), 2, t)


# ~0.3 ms single-threaded. Waking an idle worker costs 20-50 us on a 2-core VM, and a caller whose worker is
# descheduled waits for it: at 2 * 128^3 the digits CNN step had three such splits; at 2 * 256^3 its epoch took
# 57 instead of 64 ms (same process, load ~4) and the MLP 784-256-256-10 step measured the same (1.19 vs 1.20 ms).
# With its three 2 x 128 x 256 x 256 products split (2^24), that step ran 1.16 -> 1.06 ms (medians of interleaved
# runs in one process, load ~3), 1.14 -> 0.87 ms with a thread pool that spins before sleeping, but each split costs
# ~20 ms of compile time (~6 ms fusing the pack and fill into the forall, ~15 ms lowering its async functions: the
# step's LLVM-dialect module grew by 20 %), which its first call could not afford (<= 1.5x JAX's). So the optimised
# tier of a tiered function (runtime/tiering.py, OPTIMISED_MIN_PARALLEL_FLOPS) is lowered with 2^24 in the
# background, off the first call's path; the quick tier and builds made at once keep this default.
MIN_PARALLEL_FLOPS = Option("min-parallel-flops", "least flops of a contraction split over the workers (default: "
                            "2 x 256^3)", lambda t: 2 * 256 ** 3, positive)

# An epilogue's transform-dialect fusions (tfn-vectorize-kernels) cost compile time: the MLIR pipeline of case (h)'s
# training step took ~245 ms of CPU time with no epilogue or with the two SGD updates of its 784 x 256 and 256 x 256
# weights, ~305 ms with all six (the bias adds and ReLU masks of 128 x 256 too), while the pass over 128 x 256 floats
# an epilogue saves takes ~5 us; the 784 x 256 update, a pass the calling thread made alone, took ~40-55 us.
MIN_EPILOGUE_ELEMENTS = Option("min-epilogue-elements", "least elements of a matmul's result whose elementwise "
                               "consumer is computed in its register tiles (default: 2^16)", lambda t: 1 << 16,
                               positive)


@register("tfn-pack-matmul",
          "Rewrite large static f32 matmul/batch_matmul/conv_2d_nhwc_hwcf into packed-B contractions for tiling",
          options=[VECTOR_BITS, VECTOR_REGISTERS, WORKERS, TASKS_PER_WORKER, MIN_PARALLEL_FLOPS, MIN_EPILOGUE_ELEMENTS])
def pack_matmul(module_op, vector_bits, vector_registers, workers, tasks_per_worker, min_parallel_flops,
                min_epilogue_elements):
    t = dataclasses.replace(Tiles.for_target(vector_bits, vector_registers, workers, tasks_per_worker),
                            min_parallel_flops=min_parallel_flops)
    for op in collect(module_op, candidate):
        add = None
        with ir.InsertionPoint(op), op.location:
            if op.name == "linalg.conv_2d_nhwc_hwcf":
                found = conv_bias(op)
                bias, add = found if found is not None else (None, None)
                new = rewrite_conv(op, t, bias)
            elif op.name == "linalg.generic":
                new = rewrite_generic(op, t)
            else:
                epilogue = matmul_epilogue(op)
                if epilogue is not None:
                    epilogue = (*epilogue, min_epilogue_elements)
                new = rewrite_matmul(op, t, epilogue)
                if epilogue is not None:
                    new, fused = new
                    if fused:  # the consumer was rebuilt as the contraction's epilogue
                        add = epilogue[0]
        producers = [v.owner for v in op.operands[:2]]
        op.results[0].replace_all_uses_with(new)
        op.erase()
        if add is not None:  # the bias add, now the accumulators' start, or the consumer rebuilt as an epilogue
            add.results[0].replace_all_uses_with(new)
            add.erase()
        for p in producers:
            p = getattr(p, "operation", p)
            if isinstance(p, ir.Operation) and p.name == "linalg.transpose" and not list(p.results[0].uses):
                p.erase()
