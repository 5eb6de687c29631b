"""tfn-vectorize-depthwise: f32 depthwise convolutions of multiplier 1 as register tiles of vector FMAs.

tfn-to-linalg lowers tfn.depthwise_conv2d to a tensor.pad (SAME or explicit padding) and a linalg.generic tagged
`tfn.depthwise` (strides, dilations, multiplier) into a zero fill, whose loops, channels innermost, LLVM vectorises
as they are. For multiplier 1, f32, and a static output width and channel count that a vector divides, this pass
replaces that generic by upstream's linalg.depthwise_conv_2d_nhwc_hwc ops on the same data and schedules them
(transform dialect): tiled to one output row, OWT output columns and CT channels, one filter row at a time; each tile
decomposed to a 1-D depthwise convolution and vectorised by upstream's convolution vectoriser into FMAs of CT-lane
vectors (CT = two vector registers' worth of lanes, `vector-bits`, else one), one per output column and filter tap;
the filter-row loop is unrolled, so the OWT x CT accumulators stay in registers across all taps and are written
once. OWT is the largest divisor of the block's width whose accumulators fill at most half the `vector-registers`.

The convolution is memory-bound (9 FMAs per loaded float for 3 x 3), so what it reads and writes besides the image
and the result matters most: the output is split into up to 3 x 3 blocks (rows and columns whose windows reach into
the padding, and the interior), each reading a slice of the unpadded image (the border blocks pad their thin slice
themselves), so the padded copy of the whole image is not made; and where the accumulator starts as zeros, each
tile's zero fill is fused into the tile (its accumulators start as zero registers), so the output is neither filled
nor read before it is written (an scf.forall of tfn-parallelize then starts from an empty output). It runs after
tfn-parallelize, so each of its tasks (a range of images or output rows) is scheduled the same way. A generic this
pass does not take (other dtypes, multipliers, filters of one row or of more than MAX_TAPS taps, widths and depths
no vector divides), or whose schedule does not apply, stays as it is.
"""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.passes.options import VECTOR_BITS, VECTOR_REGISTERS
from tfn.passes.registry import register
from tfn.passes.tfn_vectorize_kernels import match_tagged, named_sequence, try_schedule
from tfn.passes.walk import collect, defined_before

# Every tap is unrolled: a big filter (the filter gradient correlates with the whole output gradient, one tap per
# output pixel) would make a huge function, so those stay on the generic's loops.
MAX_TAPS = 64
TAG = "tfn.depthwise"  # on the lowering's generic: [sh, sw, dh, dw, multiplier]
ID = "tfn.depthwise_id"
_ANY = "!transform.any_op"


def _shape(value):
    return list(ir.RankedTensorType(value.type).shape)


def _static(value, axes):
    shape = _shape(value)
    dyn = ir.ShapedType.get_dynamic_size()
    return None if any(shape[a] == dyn for a in axes) else [shape[a] for a in axes]


def _owner(value):
    owner = value.owner
    owner = getattr(owner, "operation", owner)
    return owner if isinstance(owner, ir.Operation) else None


def _body_is_multiply_add(op):
    names = [o.name for o in op.regions[0].blocks[0].operations]
    return names == ["arith.mulf", "arith.addf", "linalg.yield"]


def _channel_tile(c, vector_bits):
    lanes = vector_bits // 32
    return next((t for t in (2 * lanes, lanes) if c % t == 0), None)


def width_budget(ct, vector_bits, vector_registers):
    """The most output columns whose accumulators (CT lanes each) fill at most half the vector registers."""
    return max(1, (vector_registers // 2) // (ct // (vector_bits // 32)))


def width_tile(ow, budget):
    """OWT: the largest divisor of the width ow at most budget."""
    return max(d for d in range(1, min(ow, budget) + 1) if ow % d == 0)


def eligible(op, vector_bits):
    """(CT, KH) for a tagged depthwise generic this pass vectorises, else None."""
    if op.name != "linalg.generic" or TAG not in op.attributes or not op.results or len(op.operands) != 3:
        return None
    *_, mult = ir.DenseI64ArrayAttr(op.attributes[TAG])
    out = op.operands[2]
    if mult != 1 or not isinstance(ir.RankedTensorType(out.type).element_type, ir.F32Type):
        return None
    if not _body_is_multiply_add(op):
        return None
    if _static(out, [0, 1, 2, 3]) is None or _static(op.operands[1], [0, 1, 2]) is None:
        return None
    if _static(op.operands[0], [0, 1, 2, 3]) is None:
        return None
    kh, kw = _static(op.operands[1], [0, 1])
    if kh < 2:
        return None  # a filter of one row has no filter-row loop to unroll: LLVM vectorises the generic's loops
    if kh * kw > MAX_TAPS:
        return None
    ct = _channel_tile(_shape(out)[3], vector_bits)
    return None if ct is None else (ct, kh)


def _is_zero_fill(op):
    if op is None or op.name != "linalg.fill":
        return False
    cst = _owner(op.operands[0])
    return cst is not None and cst.name == "arith.constant" and str(cst.attributes["value"]) in (
        "0.000000e+00 : f32", "0.0 : f32")


def _zero_init(init):
    """Whether the accumulator `init` holds zeros: a zero fill, or a slice of an scf.forall's shared output that
    starts as one (what tfn-parallelize makes of the fill). For the latter, also the forall, its operand number,
    and the fill (so that the forall can start from the fill's empty tensor instead)."""
    owner = _owner(init)
    if _is_zero_fill(owner):
        return True, None
    if owner is None or owner.name != "tensor.extract_slice":
        return False, None
    src = owner.operands[0]
    if not isinstance(src, ir.BlockArgument):
        return False, None
    forall = src.owner.owner
    forall = getattr(forall, "operation", forall)
    if forall.name != "scf.forall":
        return False, None
    n_outs = len(forall.results)
    k = src.arg_number - (len(list(src.owner.arguments)) - n_outs)
    if k < 0:
        return False, None
    outer = forall.operands[len(forall.operands) - n_outs + k]
    fill = _owner(outer)
    if not _is_zero_fill(fill):
        return False, None
    return True, (forall, len(forall.operands) - n_outs + k, fill, src)


def _padded_source(x):
    """(X, batch offset (a value or an int), low pads [top, left]) when x is a batch slice of a
    zero-padded image (tensor.pad, static pads on H and W only) or that padded image itself; (x, 0, [0, 0]) else."""
    owner = _owner(x)
    offset = 0
    if owner is not None and owner.name == "tensor.extract_slice":
        sl = owner.opview
        offs, sizes, strides = (list(ir.DenseI64ArrayAttr(sl.attributes[a])) for a in
                                ("static_offsets", "static_sizes", "static_strides"))
        src_shape = _shape(sl.source)
        if strides == [1] * 4 and offs[1:] == [0, 0, 0] and sizes[1:] == src_shape[1:] and len(sl.offsets) <= 1:
            inner = _owner(sl.source)
            if inner is not None and inner.name == "tensor.pad":
                offset = sl.offsets[0] if len(sl.offsets) else offs[0]
                owner = inner
    if owner is None or owner.name != "tensor.pad":
        return x, 0, [0, 0]
    pad = owner.opview
    low, high = (list(ir.DenseI64ArrayAttr(pad.attributes[a])) for a in ("static_low", "static_high"))
    dyn = ir.ShapedType.get_dynamic_size()
    if dyn in low + high or low[0] or low[3] or high[0] or high[3] or len(pad.low) or len(pad.high):
        return x, 0, [0, 0]
    ops = list(pad.regions[0].blocks[0].operations)
    cst = _owner(ops[-1].operands[0]) if ops else None
    if cst is None or cst.name != "arith.constant" or str(cst.attributes["value"]) not in ("0.000000e+00 : f32",):
        return x, 0, [0, 0]
    return pad.source, offset, low[1:3]


def _ranges(out_len, in_len, lead, k, stride, dilation, tile=None):
    """The output positions cut into runs: [0, lo) whose windows reach before the input, [lo, hi) inside it and
    [hi, out_len) reaching past its end (empty runs left out). With `tile`, an inside run longer than a tile that no
    divisor near the tile divides is cut to a multiple of it, the rest joining the last run."""
    lo = min(out_len, -(-lead // stride))
    last = in_len - 1 + lead - (k - 1) * dilation  # the last output start position s with s * stride <= last
    hi = max(lo, min(out_len, last // stride + 1 if last >= 0 else 0))
    if tile and hi - lo > tile and 2 * width_tile(hi - lo, tile) <= tile:
        hi -= (hi - lo) % tile
    return [(a, b) for a, b in ((0, lo), (lo, hi), (hi, out_len)) if b > a]


def _window(r0, r1, stride, k, dilation, lead, size):
    """Input slice (start, length) and pads (low, high) that output positions [r0, r1) read, None when empty."""
    a = r0 * stride - lead
    b = (r1 - 1) * stride + (k - 1) * dilation - lead + 1
    start, stop = max(a, 0), min(b, size)
    if stop <= start:
        return None
    return start, stop - start, max(0, -a), max(0, b - size)


def _dyn_offsets(offsets):
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    return [o for o in offsets if not isinstance(o, int)], [dyn if not isinstance(o, int) else o for o in offsets]


def _extract(src, offsets, sizes):
    values, static = _dyn_offsets(offsets)
    result = ir.RankedTensorType.get(sizes, ir.F32Type.get())
    return tensor.extract_slice(result, src, values, [], [], static, sizes, [1] * len(sizes))


def _insert(value, dest, offsets, sizes):
    values, static = _dyn_offsets(offsets)
    return tensor.insert_slice(value, dest, values, [], [], static, sizes, [1] * len(sizes))


def _pad(value, low, high):
    if not any(low) and not any(high):
        return value
    shape = [s + lo + hi for s, lo, hi in zip(_shape(value), low, high)]
    pad = tensor.PadOp(ir.RankedTensorType.get(shape, ir.F32Type.get()), value, [], [], low, high)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(ir.F32Type.get(), 0.0))
    return pad.result


def _blocks(op, budget):
    """The output blocks [(rows, cols)] and the unpadded source (X, batch offset, low pads), or None when some block
    would read nothing of the image (pads wider than the window). The interior columns are cut to a multiple of the
    widest register tile (`budget` columns) where no wide tile divides them, the rest going to the last block."""
    sh, sw, dh, dw, _ = ir.DenseI64ArrayAttr(op.attributes[TAG])
    x, w, init = op.operands
    kh, kw = _shape(w)[:2]
    nb, oh, ow, _ = _shape(init)
    src, offset, (pt, pl) = _padded_source(x)
    _, h, wd, _ = _shape(src)
    rows = _ranges(oh, h, pt, kh, sh, dh)
    cols = _ranges(ow, wd, pl, kw, sw, dw, budget)
    for r0, r1 in rows:
        if _window(r0, r1, sh, kh, dh, pt, h) is None:
            return None
    for c0, c1 in cols:
        if _window(c0, c1, sw, kw, dw, pl, wd) is None:
            return None
    return [(r, c) for r in rows for c in cols], (src, offset, pt, pl)


def _to_named(op, first_id, budget):
    """Upstream's named depthwise convolutions, one per output block, on slices of the unpadded image, in op's place;
    each tagged with an id from first_id on. Returns [(id, block width)] and the forall fix-up (see _zero_init)."""
    sh, sw, dh, dw, _ = ir.DenseI64ArrayAttr(op.attributes[TAG])
    x, w, init = op.operands
    kh, kw = _shape(w)[:2]
    nb, oh, ow, c = _shape(init)
    zero, forall_fix = _zero_init(init)
    bias = _bias_add(op, forall_fix) if zero else None
    found = _blocks(op, budget)
    if found is None:
        blocks, (src, offset, pt, pl) = [((0, oh), (0, ow))], (x, 0, 0, 0)
    else:
        blocks, (src, offset, pt, pl) = found
    _, h, wd, _ = _shape(src)
    made = []
    with ir.InsertionPoint(op), op.location:
        acc = init  # a zero init is filled block by block (each tile's fill fused into the tile)
        fill = _owner(init)
        if zero and forall_fix is None and len(list(init.uses)) == 1:
            acc = fill.operands[1]  # the whole output need not be filled first
        else:
            fill = None
        for (r0, r1), (c0, c1) in blocks:
            rs, rn, rlo, rhi = _window(r0, r1, sh, kh, dh, pt, h)
            cs, cn, clo, chi = _window(c0, c1, sw, kw, dw, pl, wd)
            xs = _extract(src, [offset, rs, cs, 0], [nb, rn, cn, c])
            xs = _pad(xs, [0, rlo, clo, 0], [0, rhi, chi, 0])
            sizes = [nb, r1 - r0, c1 - c0, c]
            whole = sizes == [nb, oh, ow, c]
            part = acc if whole else _extract(acc, [0, r0, c0, 0], sizes)
            if bias is not None:  # the accumulators start as the bias
                part = _broadcast(bias[0], part)
            elif zero:
                part = linalg.fill(arith.constant(ir.F32Type.get(), 0.0), outs=[part])
            named = linalg.depthwise_conv_2d_nhwc_hwc(xs, w, outs=[part], strides=[sh, sw], dilations=[dh, dw])
            i = first_id + len(made)
            named.owner.attributes[ID] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
            # the fill is fused into the tiles of a block reading the image itself; a border block's own pad would be
            # fused as well, which upstream's tile-and-fuse does not survive, so its (small) fill stays whole
            made.append((i, c1 - c0, zero and xs.owner.name != "tensor.pad"))
            acc = named if whole else _insert(named, acc, [0, r0, c0, 0], sizes)
    op.results[0].replace_all_uses_with(acc)
    op.erase()
    _erase_if_unused(_owner(x))
    if bias is not None:  # the bias add, now done by the convolution, is dropped
        _, add, result, replacement = bias
        result.replace_all_uses_with(acc if replacement is None else replacement)
        add.erase()
    if fill is not None:
        fill.erase()
    if forall_fix is not None:
        forall, operand, fill, arg = forall_fix
        # every element of the forall's output is written by its tasks, each block filled with zeros by this rewrite
        # before it accumulates: start the forall from the fill's empty tensor instead of a zero-filled one
        if _only_sliced_here(arg, _owner(init)) and len(list(fill.results[0].uses)) == 1:
            forall.operands[operand] = fill.operands[1]
            fill.erase()
    return made


def _broadcast(b, out):
    """A linalg.generic broadcasting the channel vector b [C] over out [n, h, w, C]."""
    maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(3)]), ir.AffineMap.get_identity(4)]
    op = linalg.GenericOp([out.type], [b], [out], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 4))
    block = op.regions[0].blocks.append(ir.F32Type.get(), ir.F32Type.get())
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return op.result


def _is_bias_add(g, operand):
    """Whether linalg.generic g adds a channel vector to its input number `operand` (rank 4, identity maps), yielding
    the sum; (that vector, or None)."""
    if g.name != "linalg.generic" or len(g.operands) != 3 or len(g.results) != 1:
        return None
    maps = [str(m) for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    ident = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    other = 1 - operand
    if maps[operand] != ident or maps[2] != ident or maps[other] != "affine_map<(d0, d1, d2, d3) -> (d3)>":
        return None
    ops = list(g.regions[0].blocks[0].operations)
    args = list(g.regions[0].blocks[0].arguments)
    if [o.name for o in ops] != ["arith.addf", "linalg.yield"] or ops[1].operands[0] != ops[0].results[0]:
        return None
    if {_arg(v, args) for v in ops[0].operands} != {0, 1} or "fastmath" in str(ops[0].attributes):
        return None
    return g.operands[other]


def _arg(value, args):
    return next((i for i, a in enumerate(args) if a == value), None)


def _full(value):
    """value's source when value is a full, unit-stride slice of it (what tfn-parallelize passes a task), else value."""
    owner = _owner(value)
    if owner is not None and owner.name == "tensor.extract_slice" and _shape(owner.operands[0]) == _shape(value) \
            and len(owner.operands) == 1:
        return owner.operands[0]
    return value


def _bias_add(op, forall_fix):
    """(bias [C], the add op, its result, what replaces it: None for the convolution's own result) when the
    convolution's only user adds a bias vector along the channels: directly, or, inside an scf.forall of
    tfn-parallelize, through a second forall with the same iterations that adds it to each task's slice; None else.
    The bias must be defined before the convolution."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    if forall_fix is None:
        if user.name != "linalg.generic":
            return None
        b = _is_bias_add(user, uses[0].operand_number)
        if b is None or not defined_before(_full(b), op):
            return None
        return _full(b), user, user.results[0], None
    forall = forall_fix[0]
    if user.name != "tensor.parallel_insert_slice" or len(forall.results) != 1:
        return None
    out_uses = list(forall.results[0].uses)
    if len(out_uses) != 1 or out_uses[0].owner.name != "tensor.extract_slice":
        return None
    take = out_uses[0].owner
    second = take.parent
    if second.name != "scf.forall" or len(second.results) != 1 or take.parent != second:
        return None
    if str(second.attributes) != str(forall.attributes) or not _same_bounds(forall, second):
        return None
    reads = list(take.results[0].uses)
    if len(reads) != 1 or reads[0].owner.name != "linalg.generic":
        return None
    g = reads[0].owner
    b = _is_bias_add(g, reads[0].operand_number)
    if b is None or not defined_before(_full(b), forall):
        return None
    g_uses = list(g.results[0].uses)
    if len(g_uses) != 1 or g_uses[0].owner.name != "tensor.parallel_insert_slice":
        return None
    # the same slice of the same iteration: offsets, sizes and strides spelled alike, with each loop's own index
    iv1, iv2 = list(forall.regions[0].blocks[0].arguments), list(second.regions[0].blocks[0].arguments)
    texts = [_slice_text(user, iv1), _slice_text(take, iv2), _slice_text(g_uses[0].owner, iv2)]
    if None in texts or not texts[0] == texts[1] == texts[2]:
        return None
    return _full(b), second, second.results[0], forall.results[0]


def _same_bounds(a, b):
    n = len(a.operands) - len(a.results)
    return n == len(b.operands) - len(b.results) and all(
        x == y for x, y in zip(list(a.operands)[:n], list(b.operands)[:n]))


def _slice_text(op, ivs):
    """The static offsets, sizes and strides of a slice op and which loop index each dynamic offset is."""
    attrs = tuple(str(op.attributes[a]) for a in ("static_offsets", "static_sizes", "static_strides"))
    view = op.opview
    if len(view.sizes) or len(view.strides):
        return None
    return attrs, tuple(_arg(v, ivs) for v in view.offsets)


def _erase_if_unused(op):
    if op is not None and op.name == "tensor.extract_slice" and not list(op.results[0].uses):
        op.erase()


def _only_sliced_here(arg, init_slice):
    """Whether a forall's shared output is used only as the destination of its parallel_insert_slice and by the
    slice that the rewritten convolution's blocks fill and write."""
    return all((u.owner.name == "tensor.parallel_insert_slice" and u.operand_number == 1) or u.owner == init_slice
               for u in arg.uses)


def schedule_text(kernels):
    """Transform lines per (id, OWT, CT, KH, zero): tile (n, oh, ow, c) to (1, 1, OWT, CT), fusing a zero fill of the
    accumulator into the tile, then the filter rows one at a time; decompose to 1-D, vectorise, fold the
    accumulator's reads and writes into the loop-carried tensor, unroll the filter rows, fold and clean up."""
    body = []
    for i, owt, ct, _, zero in kernels:
        body += [match_tagged(f"%op{i}", ID, i)]
        if zero:
            body += [f"%p{i}, %pl{i}:4 = transform.structured.fuse %op{i} tile_sizes [1, 1, {owt}, {ct}, 0, 0] "
                     f": ({_ANY}) -> ({', '.join([_ANY] * 5)})",
                     f'%fill{i} = transform.structured.match ops{{["linalg.fill", "linalg.generic"]}} in %pl{i}#3 '
                     f': ({_ANY}) -> {_ANY}',
                     f"transform.structured.vectorize %fill{i} : {_ANY}"]
        else:
            body += [f"%p{i}, %pl{i}:4 = transform.structured.tile_using_for %op{i} tile_sizes "
                     f"[1, 1, {owt}, {ct}, 0, 0] : ({_ANY}) -> ({', '.join([_ANY] * 5)})"]
        body += [f"%t{i}, %l{i} = transform.structured.tile_using_for %p{i} tile_sizes [0, 0, 0, 0, 1, 0] "
                 f": ({_ANY}) -> ({_ANY}, {_ANY})",
                 f"%d{i} = transform.structured.decompose %t{i} : ({_ANY}) -> {_ANY}",
                 f"transform.structured.vectorize %d{i} : {_ANY}"]
    body += [f'%f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}',
             "transform.apply_patterns to %f {",
             "  transform.apply_patterns.linalg.tiling_canonicalization",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             "  transform.apply_patterns.canonicalization",
             f"}} : {_ANY}"]
    body += [f"transform.loop.unroll %l{i} {{factor = {kh}}} : {_ANY}" for i, _, _, kh, _ in kernels]
    body += ["transform.apply_patterns to %f {", "  transform.apply_patterns.vector.cast_away_vector_leading_one_dim",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             "  transform.apply_patterns.canonicalization", f"}} : {_ANY}",
             f"transform.apply_cse to %f : {_ANY}"]
    return named_sequence(body)


@register("tfn-vectorize-depthwise", "Depthwise convolutions (f32, multiplier 1) as register tiles of vector FMAs "
          "over the channels, accumulators kept across the filter rows, the padding and the zero fill not "
          "materialised", options=[VECTOR_BITS, VECTOR_REGISTERS])
def vectorize_depthwise(module_op, vector_bits, vector_registers):
    kernels = []
    for op in collect(module_op, lambda op: op.name == "linalg.generic" and TAG in op.attributes):
        found = eligible(op, vector_bits)
        if found is None:
            continue
        ct, kh = found
        budget = width_budget(ct, vector_bits, vector_registers)
        for i, width, zero in _to_named(op, len(kernels), budget):
            kernels.append((i, width_tile(width, budget), ct, kh, zero))
    if not kernels:
        return
    if not try_schedule(module_op, schedule_text(kernels)):
        for k in kernels:
            try_schedule(module_op, schedule_text([k]))
    for op in collect(module_op, lambda op: ID in op.attributes):
        del op.attributes[ID]
