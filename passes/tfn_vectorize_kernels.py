"""tfn-vectorize-kernels: tile and vectorise the ops tfn-pack-matmul tagged, with a transform-dialect schedule.

Per tagged op (attribute `tfn.kernel`, tile sizes per level in `tfn.tiles`): a linalg.pack is lowered
(pad + expand_shape + transpose) and its transpose vectorised one KR x NR block at a time; a fill is vectorised in
MR x NR blocks; a contraction is tiled for the caches (MC x NC x KC), then into MR x NR x KR register tiles that
are vectorised into vector.contract, and the accumulator tile is hoisted out of the k loop. Every tile is static
by construction (tfn-pack-matmul pads), so no vector is dynamic or masked, and each op is vectorised by handle
(vectorising whole regions can turn a tile copy into one huge vector).
tfn-lower-vector-ops finishes the job after bufferization.
"""
from mlir import ir
from mlir.dialects.transform import interpreter

from tfn.passes.registry import register
from tfn.passes.walk import collect

_ANY = "!transform.any_op"
WORKERS = 2                       # threads of MLIR's async runtime a contraction is split over
MIN_PARALLEL_FLOPS = 2 * 128 ** 3  # ~30 us single-threaded: well above the cost of a thread hand-off


def _results(n):
    return "(" + ", ".join([_ANY] * n) + ")"


def _tile(handle, sizes, name):
    """A tile_using_for line; returns (text, tiled handle, loops handle or None)."""
    loops = sum(1 for s in sizes if s)
    outs = f"%{name}, %{name}_l:{loops}" if loops > 1 else f"%{name}, %{name}_l" if loops else f"%{name}"
    text = (f"{outs} = transform.structured.tile_using_for {handle} tile_sizes [{', '.join(map(str, sizes))}] "
            f": ({_ANY}) -> {_results(loops + 1)}")
    return text, f"%{name}", f"%{name}_l" if loops else None


def _schedule_op(i, kind, tiles, split=None):
    """Transform lines for tagged op number i (a contraction split across workers by `split` tile sizes when
    given); returns (lines, hoist lines)."""
    match = (f'%op{i} = transform.structured.match attributes {{tfn.kernel_id = {i} : i64}} in %root '
             f": ({_ANY}) -> {_ANY}")
    if kind == "pack":
        text, tt, _ = _tile(f"%tr{i}", tiles[0], f"ttr{i}")
        return [match, f'%pc{i} = transform.cast %op{i} : {_ANY} to !transform.op<"linalg.pack">',
                f"%pad{i}, %exp{i}, %tro{i} = transform.structured.lower_pack %pc{i} : "
                '(!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, '
                '!transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)',
                f'%tr{i} = transform.cast %tro{i} : !transform.op<"linalg.transpose"> to {_ANY}',
                text, f"transform.structured.vectorize {tt} : {_ANY}"], []
    if kind == "fill":
        text, tf, _ = _tile(f"%op{i}", tiles[0], f"tf{i}")
        return [match, text, f"transform.structured.vectorize {tf} : {_ANY}"], []
    lines = [match]
    handle = f"%op{i}"
    if split is not None:  # one scf.forall iteration per worker, each a whole number of cache tiles
        lines.append(f"%t0_{i}, %f0_{i} = transform.structured.tile_using_forall %op{i} tile_sizes "
                     f"[{', '.join(map(str, split))}] : ({_ANY}) -> ({_ANY}, {_ANY})")
        handle = f"%t0_{i}"
    text1, t1, _ = _tile(handle, tiles[0], f"t1_{i}")
    text2, t2, loops = _tile(t1, tiles[1], f"t2_{i}")
    # loops of level 2: m, j, k; keep the accumulator tile in registers across the k loop
    return lines + [text1, text2, f"transform.structured.vectorize {t2} : {_ANY}"], [
        f"transform.loop.hoist_loop_invariant_subsets {loops}#2 : {_ANY}"]


def worker_split(op, level1):
    """forall tile sizes splitting a big contraction into WORKERS equal parts of whole cache tiles, or None.

    Loops: batch..., m, panel, k, r; the first of them (batch, then m, then panel) whose extent is a multiple of
    WORKERS cache tiles is split. Below MIN_PARALLEL_FLOPS the hand-off to a thread is not worth it."""
    acc = list(ir.RankedTensorType(op.results[0].type).shape)
    kp = ir.RankedTensorType(op.operands[0].type).shape[-1]
    flops = 2 * kp
    for extent in acc:
        flops *= extent
    if flops < MIN_PARALLEL_FLOPS:
        return None
    for d, extent in enumerate(acc[:-1]):
        if extent % (WORKERS * level1[d]) == 0:
            return [extent // WORKERS if k == d else 0 for k in range(len(acc) + 1)]
    return None


def schedule_text(kernels):
    """The transform module scheduling each (id, kind, tiles, split) op; one named sequence @tfn_kernels."""
    body, hoists = [], []
    for i, kind, tiles, split in kernels:
        lines, hoist = _schedule_op(i, kind, tiles, split)
        body += lines
        hoists += hoist
    body += [f'%f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}',
             "transform.apply_patterns to %f {",
             "  transform.apply_patterns.vector.reduction_to_contract",
             "  transform.apply_patterns.vector.cast_away_vector_leading_one_dim",
             "  transform.apply_patterns.vector.transfer_permutation_patterns",
             "  transform.apply_patterns.canonicalization",
             "  transform.apply_patterns.linalg.tiling_canonicalization",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             f"}} : {_ANY}",
             f"transform.apply_cse to %f : {_ANY}"] + hoists
    inner = "\n    ".join(body)
    return ("module attributes {transform.with_named_sequence} {\n"
            f"  transform.named_sequence @tfn_kernels(%root: {_ANY} {{transform.readonly}}) {{\n    {inner}\n"
            "    transform.yield\n  }\n}")


def apply_schedule(module_op, text):
    """Run the named sequence @tfn_kernels of the transform module `text` on module_op."""
    schedule = ir.Module.parse(text)
    seq = next(op for op in schedule.body.operations if op.sym_name.value == "tfn_kernels")
    interpreter.apply_named_sequence(module_op, seq, schedule)


@register("tfn-vectorize-kernels", "Tile and vectorise the packs, fills and contractions tfn-pack-matmul tagged")
def vectorize_kernels(module_op):
    ops = collect(module_op, lambda op: "tfn.kernel" in op.attributes)
    if not ops:
        return
    kernels = []
    for i, op in enumerate(ops):
        kind = ir.StringAttr(op.attributes["tfn.kernel"]).value
        tiles = [list(ir.DenseI64ArrayAttr(t)) for t in ir.ArrayAttr(op.attributes["tfn.tiles"])]
        for name in ("tfn.kernel", "tfn.tiles"):
            del op.attributes[name]
        op.attributes["tfn.kernel_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        kernels.append((i, kind, tiles, worker_split(op, tiles[0]) if kind == "contract" else None))
    apply_schedule(module_op, schedule_text(kernels))
    for op in collect(module_op, lambda op: "tfn.kernel_id" in op.attributes):
        del op.attributes["tfn.kernel_id"]
