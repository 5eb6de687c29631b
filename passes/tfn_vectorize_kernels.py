"""tfn-vectorize-kernels: tile and vectorise the ops tfn-pack-matmul tagged, with a transform-dialect schedule.

Per tagged op (attribute `tfn.kernel`, tile sizes per level in `tfn.tiles`): a linalg.pack is lowered
(pad + expand_shape + transpose) and its transpose vectorised one KR x NR block at a time; a fill is vectorised in
MR x NR blocks; a contraction is tiled for the caches (MC x NC x KC, GotoBLAS loop order), then into MR x NR x KR
register tiles that are vectorised into vector.contract, and the accumulator tile is hoisted out of the k loop.
A contraction tagged `tfn.split` is first tiled into an scf.forall with one iteration per worker thread, and the
fill of its accumulator and the pack of its B (when the split is along batches or panels) are fused into it, so
each worker fills and packs its own part. Every tile is static by construction (tfn-pack-matmul pads), so no vector
is dynamic or masked, and each op is vectorised by handle (vectorising whole regions can turn a tile copy into one
huge vector). tfn-lower-vector-ops finishes the job after bufferization.

A schedule that does not apply (a shape its tiles do not fit) never fails the compile: the module is restored,
each kernel is scheduled on its own, and a kernel whose schedule still fails keeps its ops untiled (a pack is only
lowered), so the generic path computes it.
"""
from mlir import ir
from mlir.dialects.transform import interpreter

from tfn.passes.registry import register
from tfn.passes.walk import collect

_ANY = "!transform.any_op"
A_ROWS_BYTES = 512 * 1024  # an epilogue's rows of A that stay in L2 across its panels without cache tiles


def _results(n):
    return "(" + ", ".join([_ANY] * n) + ")"


def _tile(handle, sizes, name, order=None):
    """A tile_using_for line (loops in `order` of the op's dims when given); returns (text, tiled handle, loops
    handle or None)."""
    loops = sum(1 for s in sizes if s)
    outs = f"%{name}, %{name}_l:{loops}" if loops > 1 else f"%{name}, %{name}_l" if loops else f"%{name}"
    interchange = f" interchange = [{', '.join(map(str, order))}]" if order else ""
    text = (f"{outs} = transform.structured.tile_using_for {handle} tile_sizes [{', '.join(map(str, sizes))}]"
            f"{interchange} : ({_ANY}) -> {_results(loops + 1)}")
    return text, f"%{name}", f"%{name}_l" if loops else None


def _match(i):
    return match_tagged(f"%op{i}", "tfn.kernel_id", i)


def _pack_lines(i, handle, tiles):
    text, tt, _ = _tile(f"%tr{i}", tiles[0], f"ttr{i}")
    return [f'%pc{i} = transform.cast {handle} : {_ANY} to !transform.op<"linalg.pack">',
            f"%pad{i}, %exp{i}, %tro{i} = transform.structured.lower_pack %pc{i} : "
            '(!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, '
            '!transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)',
            f'%tr{i} = transform.cast %tro{i} : !transform.op<"linalg.transpose"> to {_ANY}',
            text, f"transform.structured.vectorize {tt} : {_ANY}"]


def _fill_lines(i, handle, tiles):
    text, tf, _ = _tile(handle, tiles[0], f"tf{i}")
    return [text, f"transform.structured.vectorize {tf} : {_ANY}"]


PRODUCER_LINES = {"pack": _pack_lines, "fill": _fill_lines}


def _contract_lines(i, tiles, split, fused):
    """Transform lines for contraction i; with `split`, first an scf.forall with one iteration per worker, into which
    the producers `fused` [(id, kind, tiles)] are fused (each worker fills its part of the accumulator and packs
    the part of B it reads). Returns (lines, hoist lines)."""
    lines, handle = [_match(i)], f"%op{i}"
    if split is not None:
        lines.append(f"%t0_{i}, %f0_{i} = transform.structured.tile_using_forall %op{i} tile_sizes "
                     f"[{', '.join(map(str, split))}] : ({_ANY}) -> ({_ANY}, {_ANY})")
        handle, forall = f"%t0_{i}", f"%f0_{i}"
        for j, kind, tiles_j in fused:
            lines += [_match(j), f"%fu{j}, %fa{j} = transform.structured.fuse_into_containing_op %op{j} into {forall} "
                      f": ({_ANY}, {_ANY}) -> ({_ANY}, {_ANY})"]
            lines += PRODUCER_LINES[kind](j, f"%fu{j}", tiles_j)
            forall = f"%fa{j}"
    # dims: batch..., m, j (panel), k, r. Cache tiles in GotoBLAS order (panels, k, m: a KC x NC block of packed B
    # is reused by every MC-row block of A), register tiles as (j, m, k): one KC x NR panel of B stays in cache while
    # the A rows stream past it. Measured on 1024^3: with m, j, k at both levels two threads ran only 1.25-1.5x as
    # fast as one (likely cache traffic: all of B streamed again for every 128 rows), with this order 1.8-1.9x.
    nb = len(tiles[0]) - 4
    batch = list(range(nb))
    # A k loop of one iteration (a cache tile of KR: K <= 4, an RGB image's channels) would be folded away by the
    # canonicalization below while its handle is still wanted for hoisting: do not tile k at level 2 then.
    single_k = tiles[1][nb + 2] == tiles[0][nb + 2]
    reg = tiles[1][:nb + 2] + [0, tiles[1][nb + 3]] if single_k else tiles[1]
    parts = [(handle, tiles[0], reg, "")]
    if len(tiles) > 2:
        # rows [0, main) in register tiles of reg's rows, the last `tail` rows in one tile of their own
        # (tfn-pack-matmul's row_tail): the op is split along m first, then each part is tiled
        main, tail = tiles[2]
        lines += [f"%sp{i} = transform.structured.split {handle} after {main} {{dimension = {nb}}} : {_ANY}",
                  f"%mn{i}, %tl{i} = transform.split_handle %sp{i} : ({_ANY}) -> ({_ANY}, {_ANY})"]
        parts = [(f"%mn{i}", tiles[0], reg, ""),
                 (f"%tl{i}", _with(tiles[0], nb, tail), _with(reg, nb, tail), "t")]
    hoist = []
    for part, level1, level2, suffix in parts:
        text1, t1, _ = _tile(part, level1, f"t1_{i}{suffix}", batch + [nb + 1, nb + 2, nb, nb + 3])
        text2, t2, loops = _tile(t1, level2, f"t2_{i}{suffix}", batch + [nb + 1, nb, nb + 2, nb + 3])
        lines += [text1, text2, f"transform.structured.vectorize {t2} : {_ANY}"]
        # loops of level 2: j, m, k; keep the accumulator tile in registers across the k loop
        hoist += [] if single_k else [f"transform.loop.hoist_loop_invariant_subsets {loops}#2 : {_ANY}"]
    return lines, hoist


def _epilogue_lines(i, tiles, split, fused):
    """Transform lines for epilogue i (tfn-pack-matmul's fused_epilogue) and, fused into its loops, the contraction,
    the fill and (when split along panels) the pack it reads (`fused`: [(id, kind, tiles)]). The epilogue is tiled
    as the contraction would be (cache tiles, then MR x NR register tiles, panels outside rows), the contraction and
    its fill are fused into each level, and the contraction's register tile is tiled along k: the accumulators
    start as zero vectors, stay in registers across the k loop, and the epilogue's vector ops run on them before
    its one write. With `split`, first an scf.forall with one iteration per worker, as _contract_lines does.
    tiles: the contraction's two levels, then the epilogue's rows and panels. Returns (lines, hoist lines)."""
    ids = {kind: j for j, kind, _ in fused}
    c, f = ids["contract"], ids["fill"]
    lines = [_match(i), _match(c), _match(f)]
    handle, ch, fh = f"%op{i}", f"%op{c}", f"%op{f}"

    def fuse(producer, into, name):
        lines.append(f"%{name}, %{name}_c = transform.structured.fuse_into_containing_op {producer} into {into} "
                     f": ({_ANY}, {_ANY}) -> ({_ANY}, {_ANY})")
        return f"%{name}", f"%{name}_c"

    if split is not None:
        lines.append(f"%e0_{i}, %ef0_{i} = transform.structured.tile_using_forall {handle} tile_sizes "
                     f"[{', '.join(map(str, split))}] : ({_ANY}) -> ({_ANY}, {_ANY})")
        handle, forall = f"%e0_{i}", f"%ef0_{i}"
        ch, forall = fuse(ch, forall, f"ec0_{i}")
        fh, forall = fuse(fh, forall, f"eh0_{i}")
        if "pack" in ids:
            j = ids["pack"]
            lines.append(_match(j))
            pack, forall = fuse(f"%op{j}", forall, f"ep0_{i}")
            lines += PRODUCER_LINES["pack"](j, pack, next(t for jj, _, t in fused if jj == j))
    level1 = tiles[0][:2] + [0]
    level2 = tiles[1][:2] + [0]
    # The cache tiles keep a block of A's rows in L2 while the panels pass (GotoBLAS order). They change the loop
    # order only with several row blocks and several panels per task, and matter only when A's rows of one task do not
    # fit in half of L2 (A_ROWS_BYTES); otherwise they are left out: each tile_using_for and fusion costs compile time
    # (the level of cache tiles was ~8 ms per epilogue on case (h)'s training step).
    rows, panels = ((split[d] if split and split[d] else tiles[2][d]) for d in (0, 1))
    big_a = rows * tiles[0][2] * 4 > A_ROWS_BYTES
    levels = ((1, level1), (2, level2)) if rows > level1[0] and panels > 1 and big_a else ((2, level2),)
    for n, sizes in levels:
        lines.append(f"%e{n}_{i}, %el{n}_{i}:2 = transform.structured.tile_using_for {handle} tile_sizes "
                     f"[{', '.join(map(str, sizes))}] interchange = [1, 0, 2] : ({_ANY}) -> {_results(3)}")
        handle = f"%e{n}_{i}"
        ch, inner = fuse(ch, f"%el{n}_{i}#1", f"ec{n}_{i}")
        fh, _ = fuse(fh, inner, f"eh{n}_{i}")
    hoist = []
    if tiles[1][2] != tiles[0][2]:  # k in register-tile steps of KR (a single step needs no loop)
        text, ch, loop = _tile(ch, [0, 0, tiles[1][2], 0], f"ek_{i}")
        lines.append(text)
        hoist.append(f"transform.loop.hoist_loop_invariant_subsets {loop} : {_ANY}")
    lines += [f"transform.structured.vectorize {h} : {_ANY}" for h in (ch, handle, fh)]
    return lines, hoist


def _with(sizes, d, value):
    return [value if k == d else s for k, s in enumerate(sizes)]


def _schedule_op(i, kind, tiles, split=None, fused=()):
    """Transform lines for tagged op number i; returns (lines, hoist lines)."""
    if kind == "contract":
        return _contract_lines(i, tiles, split, fused)
    if kind == "epilogue":
        return _epilogue_lines(i, tiles, split, fused)
    return [_match(i)] + PRODUCER_LINES[kind](i, f"%op{i}", tiles), []


def schedule_text(kernels):
    """The transform module scheduling each (id, kind, tiles, split, fused) op (split and fused: see
    _contract_lines; ops fused into another one are not listed); one named sequence @tfn_kernels."""
    body, hoists = [], []
    for i, kind, tiles, split, fused in kernels:
        lines, hoist = _schedule_op(i, kind, tiles, split, fused)
        body += lines
        hoists += hoist
    epilogues = any(kind == "epilogue" for _, kind, _, _, _ in kernels)
    return _finish(body, hoists, epilogues)


def simple_schedule_text(kernels):
    """The fallback for kernels whose schedule does not apply: each pack (fused ones included) only lowered to pad +
    expand_shape + transpose, which the generic path handles; fills and contractions are left as they are."""
    body = []
    for i, kind, _, _, fused in kernels:
        for j, kind_j, _ in [(i, kind, None), *fused]:
            if kind_j == "pack":
                body += [_match(j), *_pack_lines(j, f"%op{j}", [[]])[:2]]
    return named_sequence(body)


def _finish(body, hoists, epilogues=False):
    """body, then the clean-up patterns and the hoisting of the accumulators; with `epilogues`, canonicalization
    once more after the hoisting: it forwards an epilogue's accumulators from their hoisted write to its read (and
    the zero fill to the first read), so that neither is stored."""
    after = [f"transform.apply_patterns to %f {{ transform.apply_patterns.canonicalization }} : {_ANY}",
             f"transform.apply_cse to %f : {_ANY}"] if epilogues else []
    body = body + [f'%f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}',
             "transform.apply_patterns to %f {",
             "  transform.apply_patterns.vector.reduction_to_contract",
             "  transform.apply_patterns.vector.cast_away_vector_leading_one_dim",
             "  transform.apply_patterns.vector.transfer_permutation_patterns",
             "  transform.apply_patterns.canonicalization",
             "  transform.apply_patterns.linalg.tiling_canonicalization",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             f"}} : {_ANY}",
             f"transform.apply_cse to %f : {_ANY}"] + hoists + after
    return named_sequence(body)


def match_tagged(handle, attr, i):
    """The transform line binding `handle` to the op whose i64 attribute `attr` is i."""
    return f"{handle} = transform.structured.match attributes {{{attr} = {i} : i64}} in %root : ({_ANY}) -> {_ANY}"


def named_sequence(lines):
    """A transform module whose named sequence @tfn_kernels (on %root, the module) runs `lines`."""
    inner = "\n    ".join(lines)
    return ("module attributes {transform.with_named_sequence} {\n"
            f"  transform.named_sequence @tfn_kernels(%root: {_ANY} {{transform.readonly}}) {{\n    {inner}\n"
            "    transform.yield\n  }\n}")


def apply_schedule(module_op, text):
    """Run the named sequence @tfn_kernels of the transform module `text` on module_op."""
    schedule = ir.Module.parse(text)
    seq = next(op for op in schedule.body.operations if op.sym_name.value == "tfn_kernels")
    interpreter.apply_named_sequence(module_op, seq, schedule)


def try_schedule(module_op, text):
    """Apply the schedule `text` to module_op; True, or False with module_op left as it was when it does not apply
    (the interpreter stops half-way, so a copy taken before is put back)."""
    backup = module_op.clone()
    try:
        apply_schedule(module_op, text)
        return True
    except ValueError:
        body = module_op.regions[0].blocks[0]
        for op in list(body.operations):
            op.erase()
        for op in list(backup.regions[0].blocks[0].operations):
            body.append(op)
        return False
    finally:
        backup.erase()


def schedule_kernels(module_op, kernels):
    """Apply the schedule of all kernels at once, or, when it does not apply, each kernel's own schedule, with the
    simple schedule for the kernels whose own one does not apply either."""
    if try_schedule(module_op, schedule_text(kernels)):
        return
    failed = [k for k in kernels if not try_schedule(module_op, schedule_text([k]))]
    if failed:
        try_schedule(module_op, simple_schedule_text(failed))


def _fusable(contract, operand, split):
    """The tagged pack or fill defining the contraction's `operand` (1: B, 2: the accumulator) when it can be fused
    into the contraction's worker forall (its only user; B only when the split is along batches or panels), else
    None."""
    owner = contract.operands[operand].owner
    owner = getattr(owner, "operation", owner)
    if not isinstance(owner, ir.Operation) or "tfn.kernel_id" not in owner.attributes:
        return None
    if len(list(owner.results[0].uses)) != 1:
        return None
    nb = len(split) - 4
    return owner if operand == 2 or any(split[:nb]) or split[nb + 1] else None


def _kernel_id(value):
    owner = value.owner
    owner = getattr(owner, "operation", owner)
    return ir.IntegerAttr(owner.attributes["tfn.kernel_id"]).value


def _epilogue_producers(op, split, info):
    """[(id, kind, tiles)] of the ops fused into epilogue op's loops: its contraction (input 0), the contraction's
    fill and, when the split is along panels and the contraction is the pack's only user, the pack of B."""
    contract = op.operands[0].owner
    contract = getattr(contract, "operation", contract)
    found = [_kernel_id(op.operands[0]), _kernel_id(contract.operands[2])]
    pack = contract.operands[1].owner
    pack = getattr(pack, "operation", pack)
    if (split is not None and split[1] and "tfn.kernel_id" in pack.attributes
            and len(list(pack.results[0].uses)) == 1):
        found.append(_kernel_id(contract.operands[1]))
    return [(j, info[j][0], info[j][1]) for j in found]


@register("tfn-vectorize-kernels", "Tile and vectorise the packs, fills and contractions tfn-pack-matmul tagged")
def vectorize_kernels(module_op):
    ops = collect(module_op, lambda op: "tfn.kernel" in op.attributes)
    if not ops:
        return
    info = []
    for i, op in enumerate(ops):
        kind = ir.StringAttr(op.attributes["tfn.kernel"]).value
        tiles = [list(ir.DenseI64ArrayAttr(t)) for t in ir.ArrayAttr(op.attributes["tfn.tiles"])]
        split = list(ir.DenseI64ArrayAttr(op.attributes["tfn.split"])) if "tfn.split" in op.attributes else None
        for name in ("tfn.kernel", "tfn.tiles", "tfn.split"):
            if name in op.attributes:
                del op.attributes[name]
        op.attributes["tfn.kernel_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        if kind == "epilogue":  # its rows and panels
            tiles = tiles[:2] + [list(ir.RankedTensorType(op.results[0].type).shape)[:2]]
        info.append((kind, tiles, split))
    fused = {}  # contraction id -> [(producer id, kind, tiles)]
    for i, (op, (kind, _, split)) in enumerate(zip(ops, info)):
        if kind != "contract" or split is None:
            continue
        for operand in (2, 1):
            producer = _fusable(op, operand, split)
            if producer is not None:
                j = ir.IntegerAttr(producer.attributes["tfn.kernel_id"]).value
                fused.setdefault(i, []).append((j, info[j][0], info[j][1]))
    for i, (op, (kind, _, split)) in enumerate(zip(ops, info)):
        if kind == "epilogue":
            fused[i] = _epilogue_producers(op, split, info)
    inside = {j for producers in fused.values() for j, _, _ in producers}
    kernels = [(i, kind, tiles, split, fused.get(i, ())) for i, (kind, tiles, split) in enumerate(info)
               if i not in inside]
    schedule_kernels(module_op, kernels)
    for op in collect(module_op, lambda op: "tfn.kernel_id" in op.attributes):
        del op.attributes["tfn.kernel_id"]
