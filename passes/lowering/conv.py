"""Lowering of tfn.conv2d: tensor.pad (SAME) + linalg.conv_2d_nhwc_hwcf into a zero fill; of tfn.max_pool2d and
its gradient tfn.max_pool2d_grad: elementwise linalg.generic ops over the windows' strided taps; tfn.depthwise_conv2d:
tensor.pad + a linalg.generic whose innermost loop runs along the channels (see lower_depthwise_conv2d)."""
import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.ops_conv import pool_geometry, same_pads, window_taps
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import (
    affine_map,
    dim,
    empty,
    generic,
    identity_map,
    index,
    lowering,
    map_elementwise,
    parallel,
    reduction,
)


def _dyn_same_pads(size, k, stride, dilation):
    """(before, after) index values of TF's SAME padding for a run-time input length `size`."""
    out = arith.ceildivsi(size, index(stride))
    need = arith.subi(arith.addi(arith.muli(arith.subi(out, index(1)), index(stride)), index((k - 1) * dilation + 1)),
                      size)
    total = arith.maxsi(need, index(0))
    before = arith.divsi(total, index(2))
    return before, arith.subi(total, before)


def _pad_same(x, tt, kh, kw, strides, dilations, explicit=None):
    """x zero-padded on H and W as TF's SAME padding wants (static or computed at run time), or by the `explicit`
    (top, bottom, left, right) pads."""
    low, high, static_low, static_high, shape = [], [], [0, 0, 0, 0], [0, 0, 0, 0], list(tt.shape)
    dyn = ir.ShapedType.get_dynamic_size()
    for axis, k in ((1, kh), (2, kw)):
        stride, dilation = strides[axis - 1], dilations[axis - 1]
        if explicit is not None:
            static_low[axis], static_high[axis] = explicit[2 * axis - 2], explicit[2 * axis - 1]
            if tt.shape[axis] is not None:
                shape[axis] += static_low[axis] + static_high[axis]
            continue
        if tt.shape[axis] is None:
            before, after = _dyn_same_pads(dim(x, axis), k, stride, dilation)
            low.append(before)
            high.append(after)
            static_low[axis] = static_high[axis] = dyn
            continue
        before, after, _ = same_pads(tt.shape[axis], k, stride, dilation)
        static_low[axis], static_high[axis] = before, after
        shape[axis] += before + after
    if not low and static_low == [0] * 4 and static_high == [0] * 4:
        return x
    result = ir.RankedTensorType.get([dyn if d is None else d for d in shape], ttypes.element_type(tt.dtype))
    pad = tensor.PadOp(result, x, low, high, static_low, static_high)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * 4)
    with ir.InsertionPoint(block):
        tensor.YieldOp(s.const(tt.dtype, 0))
    return pad.result


@lowering(ops.conv2d)
def lower_conv2d(rw):
    """tfn.conv2d(x, w) -> linalg.conv_2d_nhwc_hwcf(pad(x), w) accumulating into zeros."""
    x, w = rw.operands
    tx, tw = rw.in_types
    out = rw.out
    strides, dilations = list(rw.attrs["strides"]), list(rw.attrs["dilations"])
    if rw.attrs["same"]:
        x = _pad_same(x, tx, tw.shape[0], tw.shape[1], strides, dilations)
    sizes = []
    for axis, src, src_axis in ((0, x, 0), (1, None, 1), (2, None, 2), (3, w, 3)):
        if out.shape[axis] is None:
            sizes.append(dim(src, src_axis) if src is not None else _out_len(x, axis, tw, strides, dilations))
    init = linalg.fill(s.const(out.dtype, 0), outs=[empty(out, sizes)])
    if 0 in out.shape or 0 in tx.shape or 0 in tw.shape:
        return [init]  # nothing to accumulate (and the convolution's slices of an empty tensor do not verify)
    return [linalg.conv_2d_nhwc_hwcf(x, w, outs=[init], strides=strides, dilations=dilations)]


def _out_len(x, axis, tw, strides, dilations):
    """(len - ((k - 1) d + 1)) / s + 1 of the (padded) input's spatial axis as an index; 0 if len is too short."""
    k = tw.shape[axis - 1]
    span = (k - 1) * dilations[axis - 1] + 1
    room = arith.subi(dim(x, axis), index(span))
    n = arith.addi(arith.divsi(room, index(strides[axis - 1])), index(1))
    return arith.select(arith.cmpi(arith.CmpIPredicate.slt, room, index(0)), index(0), n)


# ---- max pooling ------------------------------------------------------------------------------------------------

def _dyn(d):
    return ir.ShapedType.get_dynamic_size() if d is None else d


def _pool_pad(x, tt, attrs, value):
    """(x padded on H and W by the pooling's SAME split with `value`, (pad top, pad left, out height, out width))."""
    (kh, kw), (sh, sw), same = attrs["ksize"], attrs["strides"], attrs["same"]
    (pt, pb, oh), (pl, pr, ow) = pool_geometry(tt.shape[1], kh, sh, same), pool_geometry(tt.shape[2], kw, sw, same)
    if pt == pb == pl == pr == 0:
        return x, (0, 0, oh, ow)
    shape = [_dyn(tt.shape[0]), tt.shape[1] + pt + pb, tt.shape[2] + pl + pr, _dyn(tt.shape[3])]
    pad = tensor.PadOp(ir.RankedTensorType.get(shape, ttypes.element_type(tt.dtype)), x, [], [],
                       [0, pt, pl, 0], [0, pb, pr, 0])
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * 4)
    with ir.InsertionPoint(block):
        tensor.YieldOp(value)
    return pad.result, (pt, pl, oh, ow)


def _window_slices(x, tt, attrs, oh, ow):
    """(offsets, sizes (dynamic ones as values), static sizes, strides) of each tap of the windows, in tap order."""
    (sh, sw) = attrs["strides"]
    dyn = [dim(x, a) for a in (0, 3) if tt.shape[a] is None]
    static = [_dyn(tt.shape[0]), oh, ow, _dyn(tt.shape[3])]
    return [([0, i, j, 0], dyn, static, [1, sh, sw, 1]) for i, j in window_taps(tt.shape, attrs)]


def _taps(xp, tt, attrs, oh, ow, result):
    return [tensor.extract_slice(result, xp, [], dyn, [], offsets, static, strides)
            for offsets, dyn, static, strides in _window_slices(xp, tt, attrs, oh, ow)]


@lowering(ops.max_pool2d)
def lower_max_pool2d(rw):
    """tfn.max_pool2d(x) -> one elementwise linalg.generic taking the maximum of the windows' strided taps."""
    (x,), (tt,), out = rw.operands, rw.in_types, rw.out
    lowest = s.const(tt.dtype, float(np.finfo(tt.dtype.np).min))
    xp, (_, _, oh, ow) = _pool_pad(x, tt, rw.attrs, lowest)
    taps = _taps(xp, tt, rw.attrs, oh, ow, ttypes.lowered_tensor_type(out))

    def body(*values):
        best = values[0]
        for v in values[1:]:
            best = s.maximum(tt.dtype, best, v)
        return best
    return [map_elementwise(taps, [out] * len(taps), out, body)]


@lowering(ops.max_pool2d_grad)
def lower_max_pool2d_grad(rw):
    """tfn.max_pool2d_grad(x, g) -> one linalg.generic over the windows finding each one's first maximum and
    yielding, per tap, g where that tap is it (else 0); each tap's part inserted (added where windows overlap) at
    its strided place in a zero tensor of the padded input's shape, cropped to the input."""
    (x, g), (tt, _), attrs = rw.operands, rw.in_types, rw.attrs
    lowest = s.const(tt.dtype, float(np.finfo(tt.dtype.np).min))
    xp, (pt, pl, oh, ow) = _pool_pad(x, tt, attrs, lowest)
    slices = _window_slices(xp, tt, attrs, oh, ow)
    taps = _taps(xp, tt, attrs, oh, ow, ir.RankedTensorType.get([_dyn(tt.shape[0]), oh, ow, _dyn(tt.shape[3])],
                                                                  ttypes.element_type(tt.dtype)))
    sizes = [dim(x, a) for a in (0, 3) if tt.shape[a] is None]
    parts_init = [empty(_tap_type(tt, oh, ow), sizes) for _ in taps]
    i32 = ir.IntegerType.get_signless(32)

    def body(*args):
        values, grad = args[:len(taps)], args[len(taps)]
        best, first = values[0], arith.constant(i32, 0)
        for t, v in enumerate(values[1:], 1):
            greater = arith.cmpf(arith.CmpFPredicate.OGT, v, best)  # strictly: ties keep the first maximum
            first = arith.select(greater, arith.constant(i32, t), first)
            best = arith.select(greater, v, best)
        zero = s.const(tt.dtype, 0)
        return [arith.select(arith.cmpi(arith.CmpIPredicate.eq, first, arith.constant(i32, t)), grad, zero)
                for t in range(len(taps))]
    rank = 4
    parts = generic(taps + [g], [identity_map(rank)] * (len(taps) + 1), parts_init, [identity_map(rank)] * len(taps),
                    parallel(rank), body)
    (kh, kw), (sh, sw) = attrs["ksize"], attrs["strides"]
    padded_type = ir.RankedTensorType(xp.type)
    dxp = linalg.fill(s.const(tt.dtype, 0), outs=[empty(_padded_tensor_type(tt, padded_type), sizes)])
    overlap = sh < kh or sw < kw
    for t, (part, (offsets, dyn, static, strides)) in enumerate(zip(parts, slices)):
        if overlap and t:  # windows share elements: add to what the earlier taps put there
            here = tensor.extract_slice(part.type, dxp, [], dyn, [], offsets, static, strides)
            part = map_elementwise([here, part], [_tap_type(tt, oh, ow)] * 2, _tap_type(tt, oh, ow),
                                   lambda a, b: s.add(tt.dtype, a, b))
        dxp = tensor.insert_slice(part, dxp, [], dyn, [], offsets, static, strides)
    if pt == pl == 0 and padded_type.shape[1:3] == [tt.shape[1], tt.shape[2]]:
        return [dxp]
    static = [_dyn(tt.shape[0]), tt.shape[1], tt.shape[2], _dyn(tt.shape[3])]
    return [tensor.extract_slice(ttypes.lowered_tensor_type(tt), dxp, [], sizes, [], [0, pt, pl, 0], static,
                                 [1, 1, 1, 1])]


def _tap_type(tt, oh, ow):
    """The tfn TensorType of one tap (the pooled shape)."""
    return ttypes.TensorType((tt.shape[0], oh, ow, tt.shape[3]), tt.dtype)


def _padded_tensor_type(tt, padded_type):
    return ttypes.TensorType((tt.shape[0], padded_type.shape[1], padded_type.shape[2], tt.shape[3]), tt.dtype)


@lowering(ops.depthwise_conv2d)
def lower_depthwise_conv2d(rw):
    """tfn.depthwise_conv2d(x, w) -> pad(x), then one linalg.generic over (n, oh, ow, kh, kw, k) into a zero fill,
    k = c * M + m running over the output channels: out[n, oh, ow, k] += x[n, oh s + kh d, ow s + kw d, k floordiv M]
    * w'[kh, kw, k], w' the filter with its last two dims collapsed. The taps are the middle loops and the channels
    the innermost one, so the loops convert-linalg-to-loops makes have a unit-stride inner loop over the channels
    (the filter, the output and, for M = 1, the input) that LLVM vectorises at the target's vector width, and the
    output row stays in cache while every tap is added into it (linalg's named depthwise op keeps the taps
    innermost: a scalar reduction per output element)."""
    x, w = rw.operands
    tx, tw = rw.in_types
    out = rw.out
    strides, dilations = list(rw.attrs["strides"]), list(rw.attrs["dilations"])
    kh, kw, _, mult = tw.shape
    if tx.shape[3] is None or tw.shape[2] is None:
        x, w, tx, tw = _check_depth(rw, x, w, tx, tw, out, mult)
    x = _pad_same(x, tx, kh, kw, strides, dilations, None if rw.attrs["same"] else list(rw.attrs["pads"]))
    sizes = []
    if out.shape[0] is None:
        sizes.append(dim(x, 0))
    for axis in (1, 2):
        if out.shape[axis] is None:
            sizes.append(_out_len(x, axis, tw, strides, dilations))
    if out.shape[3] is None:
        sizes.append(arith.muli(dim(w, 2), index(mult)))
    init = linalg.fill(s.const(out.dtype, 0), outs=[empty(out, sizes)])
    if 0 in out.shape or 0 in tx.shape or 0 in tw.shape:
        return [init]
    flat = [kh, kw, ir.ShapedType.get_dynamic_size() if tw.shape[2] is None else tw.shape[2] * mult]
    w2 = tensor.collapse_shape(ir.RankedTensorType.get(flat, ttypes.element_type(tw.dtype)), w,
                               ir.ArrayAttr.get([ir.ArrayAttr.get([_i64(i) for i in g]) for g in ([0], [1], [2, 3])]))
    d = [ir.AffineDimExpr.get(i) for i in range(6)]  # n, oh, ow, kh, kw, k
    (sh, sw), (dh, dw) = strides, dilations
    channel = d[5] if mult == 1 else ir.AffineFloorDivExpr.get(d[5], ir.AffineConstantExpr.get(mult))
    x_map = affine_map(6, [d[0], d[1] * sh + d[3] * dh, d[2] * sw + d[4] * dw, channel])
    w_map = affine_map(6, [d[3], d[4], d[5]])
    o_map = affine_map(6, [d[0], d[1], d[2], d[5]])
    # contract: LLVM may fuse the multiply and add into one FMA (one rounding instead of two)
    contract = ir.Attribute.parse("#arith.fastmath<contract>")
    result = generic([x, w2], [x_map, w_map], [init], [o_map],
                     parallel(3) + [reduction(), reduction()] + parallel(1),
                     lambda a, b, acc: arith.addf(acc, arith.mulf(a, b, fastmath=contract), fastmath=contract))
    # for tfn-vectorize-depthwise: the convolution's parameters, which the maps hold less readably
    result[0].owner.attributes["tfn.depthwise"] = ir.DenseI64ArrayAttr.get([sh, sw, dh, dw, mult])
    return result


def _check_depth(rw, x, w, tx, tw, out, mult):
    """Input and filter depths known only at run time: report a mismatch, and give both operands exactly the
    output's depth (cut, or zero-padded) so that the convolution never reads out of bounds; (x, w, their types)."""
    cx, cw = dim(x, 3), dim(w, 2)
    runtime_errors.report(rw, arith.cmpi(arith.CmpIPredicate.ne, cx, cw), [cx, cw])
    depth = index(out.shape[3] // mult) if out.shape[3] is not None else cw
    static = None if out.shape[3] is None else out.shape[3] // mult
    return (_fit(x, tx, 3, cx, depth, static), _fit(w, tw, 2, cw, depth, static),
            TensorType(tx.shape[:3] + (static,), tx.dtype), TensorType(tw.shape[:2] + (static, mult), tw.dtype))


def _fit(value, tt, axis, size, depth, static):
    """value with dim `axis` (run-time length `size`) cut to `depth` or zero-padded up to it; that dim typed
    `static` (None: dynamic)."""
    dyn = ir.ShapedType.get_dynamic_size()
    keep = arith.minui(size, depth)
    shape = [dyn if d is None else d for d in tt.shape]
    shape[axis] = dyn
    element = ttypes.element_type(tt.dtype)
    sizes = [keep if i == axis else dim(value, i) for i in range(tt.rank) if i == axis or tt.shape[i] is None]
    cut = tensor.extract_slice(ir.RankedTensorType.get(shape, element), value, [], sizes, [], [0] * tt.rank,
                               shape, [1] * tt.rank)
    high = [0] * tt.rank
    high[axis] = dyn
    pad = tensor.PadOp(ir.RankedTensorType.get(shape, element), cut, [], [arith.subi(depth, keep)], [0] * tt.rank,
                       high)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * tt.rank)
    with ir.InsertionPoint(block):
        tensor.YieldOp(s.const(tt.dtype, 0))
    if static is None:
        return pad.result
    shape[axis] = static
    return tensor.cast(ir.RankedTensorType.get(shape, element), pad.result)


def _format_depth(details, op):
    cx, cw = details[:2]
    return f"input and filter must have the same depth: {cx} vs {cw} at run time"


runtime_errors.may_fail(ops.depthwise_conv2d, _format_depth)


def _i64(i):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
