"""tfn-vectorize-elementwise: compute-heavy elementwise linalg.generic ops as loops over `lanes`-wide vectors.

LLVM's loop vectoriser turns a fused elementwise loop into one 16-lane vector per iteration (interleaved at most
twice), so a long body (a 50-op chain with exp and tanh polynomials: ~500 dependent instructions) runs at the
latency of its dependency chain, not at the FMA units' throughput. This pass tiles such a generic
along its innermost loop by LANES (option `lanes`; tile_using_for, the other loops by 1) and vectorises each tile as
one LANES-wide vector (`transform.structured.vectorize` with vector sizes). The partial last tile is peeled off into a
loop of its own (`transform.loop.peel`, unless the static extent is a multiple of LANES) in steps of one register
(option `vector-bits`), masked: the full tiles read and write plain vectors once canonicalised. (Masked stores in
every tile cost the AVX2 code dearly: vmaskmovps to memory is microcoded on AMD Zen; the 50-op arithmetic chain on
10**6 f32 took 1.7-2.2 ms CPU with them, 1.1 ms without, the exp/tanh chain 17.2 against 14.1 ms.) LLVM splits each
vector into registers: the default, four registers' worth (64 f32 lanes with AVX-512, 32 with AVX2;
passes/options.py LANES), is enough independent work to keep both FMA pipes busy and, for exp/tanh polynomials with
~8 live values, no more than the registers hold. A body without transcendental math keeps one or two values live,
and its chain of dependent ops needs more independent vectors to hide each op's latency: it gets eight registers'
worth (2 x LANES; 50-op arithmetic chain on 10**6 f32, one thread: AVX2 1.02-1.16 ms at 32 lanes, 0.68-0.70 at 64,
1.6-1.8 at 128 (spills); AVX-512 0.68-0.75 ms at 64, 0.54-0.60 at 128). Bodies of more than LONG_BODY_OPS ops keep
LANES and one masked loop (compile time).
tfn-polynomial-approximation then expands exp/log/tanh on the vectors.

Candidates: a linalg.generic on tensors, every loop parallel, every indexing map a projected permutation that is
either contiguous in the innermost loop (its last result is that loop) or does not use it (a broadcast), a body
of arith/math ops only, and work worth it: at least one transcendental math op or MIN_BODY_OPS ops in the body,
and an innermost loop that is dynamic or at least LANES long. Cheap bodies stay on LLVM's vectoriser, which
handles them at memory speed already. Runs after tfn-parallelize, so a split op is vectorised per worker.
"""
from mlir import ir

from tfn.passes.options import LANES, VECTOR_BITS
from tfn.passes.registry import register
from tfn.passes.tfn_vectorize_kernels import apply_schedule, match_tagged, named_sequence
from tfn.passes.walk import collect

MIN_BODY_OPS = 16  # bodies shorter than this (without math ops) are memory-bound: LLVM's vectoriser is enough
# Longer bodies keep `lanes` and one masked loop: compile time grows with the code emitted (ops x lanes, and a peeled
# loop is a second copy of the body), a 1,000-op chain on 1,000 f32 (bench (e), first call) took 150-170 ms more CPU
# with either, and the masked reads and writes are a small share of a long body's work
LONG_BODY_OPS = 128
HEAVY_MATH = {"math.exp", "math.log", "math.tanh", "math.log1p", "math.expm1", "math.exp2", "math.log2",
              "math.erf", "math.sin", "math.cos", "math.atan", "math.atan2", "math.powf"}
_ANY = "!transform.any_op"


def _inner_extent(op, maps):
    """The innermost loop's static extent, or None when it is dynamic (or not found)."""
    inner = maps[0].n_dims - 1
    for value, amap in zip(op.operands, maps):
        t = value.type
        if not isinstance(t, ir.RankedTensorType):
            continue
        for pos, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and expr.position == inner:
                size = ir.RankedTensorType(t).shape[pos]
                return None if size == ir.ShapedType.get_dynamic_size() else size
    return None


def _maps_ok(maps):
    inner = maps[0].n_dims - 1
    for amap in maps:
        if not amap.is_projected_permutation:
            return False
        positions = [ir.AffineDimExpr(e).position for e in amap.results]
        if inner in positions and positions[-1] != inner:
            return False  # a transposed access: each vector would be a gather
    return True


def _body_names(op):
    """The names of the ops of op's body, its terminator last (indexed: iterating an operation list costs more,
    and a 1,000-op body is looked at by several checks)."""
    ops = op.regions[0].blocks[0].operations
    return [ops[i].operation.name for i in range(len(ops))]


def _heavy(names):
    return any(name in HEAVY_MATH for name in names)


def _body_ok(names):
    if not all(name.startswith(("arith.", "math.")) for name in names[:-1]):
        return False
    return _heavy(names) or len(names) - 1 >= MIN_BODY_OPS


def _long(names):
    return len(names) - 1 > LONG_BODY_OPS


def width(op, lanes, names=None):
    """The vector width for candidate op: `lanes`, or twice that for a body without transcendental math of at most
    LONG_BODY_OPS ops whose innermost loop is dynamic or at least that long. names: _body_names(op) if known."""
    names = _body_names(op) if names is None else names
    if _heavy(names) or _long(names):
        return lanes
    extent = _inner_extent(op, [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])])
    return 2 * lanes if extent is None or extent >= 2 * lanes else lanes


def candidate(op, lanes, names=None):
    """Whether op is an elementwise linalg.generic on tensors this pass vectorises in vectors of `lanes`; names:
    _body_names(op) if known."""
    if op.name != "linalg.generic" or not op.results:
        return False
    if not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return False
    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps[0].n_dims == 0 or not _maps_ok(maps) or not _body_ok(_body_names(op) if names is None else names):
        return False
    extent = _inner_extent(op, maps)
    return extent is None or extent >= lanes


def schedule_text(ops, register_lanes):
    """Tile op `tfn.vec_id = i` (of rank n) by `lanes` along its innermost loop and vectorise each tile; when `peel`,
    peel the partial last tile off into a loop of its own, tiled by one register's lanes (masked), per
    (i, n, lanes, peel)."""
    lines = []
    for i, n, lanes, peel in ops:
        sizes = ", ".join(["1"] * (n - 1) + [str(lanes)])
        loops = n
        outs = f"%t{i}, %l{i}:{loops}" if loops > 1 else f"%t{i}, %l{i}"
        inner = f"%l{i}#{loops - 1}" if loops > 1 else f"%l{i}"
        lines += [match_tagged(f"%op{i}", "tfn.vec_id", i),
                  f"{outs} = transform.structured.tile_using_for %op{i} tile_sizes [{sizes}] "
                  f": ({_ANY}) -> ({', '.join([_ANY] * (loops + 1))})"]
        if not peel:
            lines.append(f"transform.structured.vectorize %t{i} vector_sizes [{sizes}] : {_ANY}")
            continue
        for_type = '!transform.op<"scf.for">'
        lines += [f"%for{i} = transform.cast {inner} : {_ANY} to {for_type}",
                  f"%main{i}, %rest{i} = transform.loop.peel %for{i} : ({for_type}) -> ({_ANY}, {_ANY})"]
        for part in ("main", "rest"):
            lines.append(f'%{part}_op{i} = transform.structured.match ops{{["linalg.generic"]}} in %{part}{i} '
                         f": ({_ANY}) -> {_ANY}")
        lines.append(f"transform.structured.vectorize %main_op{i} vector_sizes [{sizes}] : {_ANY}")
        small = min(lanes, register_lanes)
        tail_sizes = ", ".join(["1"] * (n - 1) + [str(small)])
        if small < lanes:  # the tail in one-register steps: LLVM compiles a body of a quarter or an eighth the size
            lines.append(f"%tail{i}, %tail_loop{i} = transform.structured.tile_using_for %rest_op{i} "
                         f"tile_sizes [{', '.join(['0'] * (n - 1) + [str(small)])}] : ({_ANY}) -> ({_ANY}, {_ANY})")
            lines.append(f"transform.structured.vectorize %tail{i} vector_sizes [{tail_sizes}] : {_ANY}")
        else:
            lines.append(f"transform.structured.vectorize %rest_op{i} vector_sizes [{tail_sizes}] : {_ANY}")
    # vector.mask regions do not survive bufferization: fold each mask into its transfer op right away
    lines += [f'%f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}',
              f"transform.apply_patterns to %f {{\n      transform.apply_patterns.vector.lower_masked_transfers\n"
              f"    }} : {_ANY}"]
    return named_sequence(lines)


@register("tfn-vectorize-elementwise", "Tile compute-heavy elementwise linalg.generic ops on tensors into loops "
          "of vector ops (a peeled, masked last tile)", options=[LANES, VECTOR_BITS])
def vectorize_elementwise(module_op, lanes, vector_bits):
    ops = []
    for op, names in _candidates(module_op, lanes):
        i = len(ops)
        op.attributes["tfn.vec_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
        extent, w = _inner_extent(op, maps), width(op, lanes, names)
        ops.append((i, maps[0].n_dims, w, not _long(names) and (extent is None or extent % w != 0)))
    if not ops:
        return
    apply_schedule(module_op, schedule_text(ops, vector_bits // 32))
    for op in collect(module_op, lambda op: "tfn.vec_id" in op.attributes):
        del op.attributes["tfn.vec_id"]


def _candidates(module_op, lanes):
    """[(candidate op, its _body_names)] in program order. A linalg.generic's body holds scalar ops only: the
    walk does not go into it (most of a fused function's ops)."""
    found = []

    def visit(op):
        if op.name != "linalg.generic":
            return ir.WalkResult.ADVANCE
        names = _body_names(op) if len(op.regions) and len(op.regions[0].blocks) == 1 else None
        if names is not None and candidate(op, lanes, names):
            found.append((op, names))
        return ir.WalkResult.SKIP

    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
