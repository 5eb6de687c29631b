"""Lowering of tfn.conv2d: tensor.pad (SAME) + linalg.conv_2d_nhwc_hwcf into a zero fill; of tfn.max_pool2d and
its gradient tfn.max_pool2d_grad: elementwise linalg.generic ops over the windows' strided taps."""
import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.ops_conv import pool_geometry, same_pads
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import dim, empty, generic, identity_map, index, lowering, map_elementwise, parallel


def _dyn_same_pads(size, k, stride, dilation):
    """(before, after) index values of TF's SAME padding for a run-time input length `size`."""
    out = arith.ceildivsi(size, index(stride))
    need = arith.subi(arith.addi(arith.muli(arith.subi(out, index(1)), index(stride)), index((k - 1) * dilation + 1)),
                      size)
    total = arith.maxsi(need, index(0))
    before = arith.divsi(total, index(2))
    return before, arith.subi(total, before)


def _pad_same(x, tt, kh, kw, strides, dilations):
    """x zero-padded on H and W as TF's SAME padding wants (static or computed at run time)."""
    low, high, static_low, static_high, shape = [], [], [0, 0, 0, 0], [0, 0, 0, 0], list(tt.shape)
    dyn = ir.ShapedType.get_dynamic_size()
    for axis, k in ((1, kh), (2, kw)):
        stride, dilation = strides[axis - 1], dilations[axis - 1]
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
    (kh, kw), (sh, sw) = attrs["ksize"], attrs["strides"]
    dyn = [dim(x, a) for a in (0, 3) if tt.shape[a] is None]
    static = [_dyn(tt.shape[0]), oh, ow, _dyn(tt.shape[3])]
    return [([0, i, j, 0], dyn, static, [1, sh, sw, 1]) for i in range(kh) for j in range(kw)]


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
