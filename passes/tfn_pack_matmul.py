"""tfn-pack-matmul: large static f32 matmul, batch_matmul and conv_2d_nhwc_hwcf into packed-B contractions.

C[m, n] = fill + A[m, k] B[k, n] becomes: A zero-padded to [M', K'], B zero-padded and packed by linalg.pack into
panels Bp[n / NR][k][NR] (so the inner loop streams contiguous memory), one linalg.generic computing
C3[m][n / NR][NR] += A[m][k] Bp[n / NR][k][NR], then collapsed and sliced back to [M, N]. A convolution becomes
KH x KW such contractions accumulating into one output, each reading a strided slice of the (zero-padded) input
and one packed filter tap W[kh][kw] (rows = (n, oh, ow), k = input channels, n = filters).
M' is a multiple of MR, K' of KR and N' of NR, and each cache tile divides its padded size, so every tile that
tfn-vectorize-kernels cuts is static. Zero padding adds only exact zeros. The packs, fills and contractions are
tagged `tfn.kernel` with their tile sizes for tfn-vectorize-kernels. Smaller products, dynamic shapes and other
element types stay on the generic path.
"""
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.passes.lowering.common import affine_map, generic, parallel, reduction
from tfn.passes.registry import register
from tfn.passes.walk import collect

MR, NR, KR = 8, 32, 4          # register tile: MR x NR accumulators (MR rows of 2 zmm), k unrolled by KR
MC, NC, KC = 128, 128, 128     # cache tiles (upper bounds; the largest multiple of the register tile dividing)
MIN_FLOPS = 2 * 64 ** 3        # below this the packing and compile time are not worth it


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


def _packed(b, nb):
    """b [batch..., K', N'] packed into [batch..., N' / NR, K', NR] (a tagged linalg.pack)."""
    shape = _shape(b)
    dest = tensor.EmptyOp(shape[:nb] + [shape[nb + 1] // NR, shape[nb], NR], ir.F32Type.get()).result
    perm = list(range(nb)) + [nb + 1, nb]
    return _tag(linalg.pack(b, dest, [nb + 1], [NR], outer_dims_perm=perm), "pack", [1] * (nb + 1) + [KR, NR])


def _zeros3(batch, mp, panels, value):
    """A tagged fill of [batch..., M', N' / NR, NR] with value."""
    out = tensor.EmptyOp(batch + [mp, panels, NR], ir.F32Type.get()).result
    return _tag(linalg.fill(value, outs=[out]), "fill", [1] * len(batch) + [MR, 1, 0])


def _contract(a, bp, acc):
    """Tagged acc[batch..., m, j, r] += a[batch..., m, k] * bp[j, k, r] (bp without batch dims when it has fewer)."""
    nb = len(_shape(acc)) - 3
    mp, panels = _shape(acc)[nb], _shape(acc)[nb + 1]
    kp = _shape(a)[-1]
    d = [ir.AffineDimExpr.get(i) for i in range(nb + 4)]
    bd, (i, j, k, r) = d[:nb], d[nb:]
    b_batch = bd[:len(_shape(bp)) - 3]
    maps = [affine_map(nb + 4, bd + [i, k]), affine_map(nb + 4, b_batch + [j, k, r]),
            affine_map(nb + 4, bd + [i, j, r])]
    iters = parallel(nb + 2) + [reduction()] + parallel(1)
    res = generic([a, bp], maps[:2], [acc], maps[2:], iters, lambda x, y, c: arith.addf(c, arith.mulf(x, y)))[0]
    level1 = [1] * nb + [cache_tile(mp, MR, MC), cache_tile(panels * NR, NR, NC) // NR, cache_tile(kp, KR, KC), 0]
    return _tag(res, "contract", level1, [0] * nb + [MR, 1, KR, 0])


def _unpacked(res, out_shape):
    """[batch..., M', N' / NR, NR] collapsed to [batch..., M', N'] and sliced to out_shape."""
    shape = _shape(res)
    nb = len(shape) - 3
    flat_shape = shape[:nb] + [shape[nb], shape[nb + 1] * NR]
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


def candidate(op):
    """Whether op is a static f32 matmul / batch_matmul / NHWC conv big enough for this pass."""
    if op.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_2d_nhwc_hwcf"):
        return False
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) not in DEFAULT_MAPS:
        return False  # a transposed or broadcast variant (tfn's lowering materialises transposes)
    if len(op.operands) != 3 or not all(_static_f32(v) for v in op.operands) or _fill_value(op.operands[2]) is None:
        return False
    return 0 not in _shape(op.operands[2]) and 0 not in _shape(op.operands[0]) and _flops(op) >= MIN_FLOPS


def rewrite_matmul(op):
    """pad + pack + tagged packed contraction + collapse + slice, for a candidate matmul / batch_matmul."""
    a, b, c = op.operands
    nb = 1 if op.name == "linalg.batch_matmul" else 0
    batch, (m, n) = _shape(c)[:nb], _shape(c)[nb:]
    mp, np_, kp = round_up(m, MR), round_up(n, NR), round_up(_shape(a)[-1], KR)
    bp = _packed(_padded(b, batch + [kp, np_]), nb)
    acc = _zeros3(batch, mp, np_ // NR, _fill_value(c))
    return _unpacked(_contract(_padded(a, batch + [mp, kp]), bp, acc), _shape(c))


def _attr_pair(op, name):
    attr = op.attributes[name] if name in op.attributes else None
    return [1, 1] if attr is None else [int(v) for v in ir.DenseIntElementsAttr(attr)]


def rewrite_conv(op):
    """KH x KW tagged contractions over strided input slices accumulating into one packed output."""
    x, w, c = op.operands
    (sh, sw), (dh, dw) = _attr_pair(op, "strides"), _attr_pair(op, "dilations")
    kh, kw, ch, nf = _shape(w)
    n, oh, ow, _ = _shape(c)
    owp, cp, fp = round_up(ow, MR), round_up(ch, KR), round_up(nf, NR)
    _, ih, iw, _ = _shape(x)
    xp = _padded(x, [n, ih, max(iw, (owp - 1) * sw + (kw - 1) * dw + 1), cp])
    wp = _packed(_padded(w, [kh, kw, cp, fp]), 2)  # [kh, kw, F' / NR, C', NR]
    acc = _zeros3([n, oh], owp, fp // NR, _fill_value(c))
    f32 = ir.F32Type.get()
    for i in range(kh):
        for j in range(kw):
            rows = tensor.extract_slice(ir.RankedTensorType.get([n, oh, owp, cp], f32), xp, [], [], [],
                                        [0, i * dh, j * dw, 0], [n, oh, owp, cp], [1, sh, sw, 1])
            tap = tensor.extract_slice(ir.RankedTensorType.get([fp // NR, cp, NR], f32), wp, [], [], [],
                                       [i, j, 0, 0, 0], [1, 1, fp // NR, cp, NR], [1] * 5)
            acc = _contract(rows, tap, acc)
    return _unpacked(acc, [n, oh, ow, nf])


@register("tfn-pack-matmul",
          "Rewrite large static f32 matmul/batch_matmul/conv_2d_nhwc_hwcf into packed-B contractions for tiling")
def pack_matmul(module_op):
    for op in collect(module_op, candidate):
        with ir.InsertionPoint(op), op.location:
            new = rewrite_conv(op) if op.name == "linalg.conv_2d_nhwc_hwcf" else rewrite_matmul(op)
        op.results[0].replace_all_uses_with(new)
        op.erase()
