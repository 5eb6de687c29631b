"""tfn-vectorize-depthwise: f32 depthwise convolutions of multiplier 1 as register tiles of vector FMAs.

tfn-to-linalg lowers tfn.depthwise_conv2d to a linalg.generic tagged `tfn.depthwise` (strides, dilations,
multiplier), whose loops, channels innermost, LLVM vectorises as they are. For multiplier 1, f32, and a static
output width and channel count that a register tile divides, this pass replaces that generic by upstream's
linalg.depthwise_conv_2d_nhwc_hwc on the same operands and schedules it (transform dialect): tiled to one output
row, OWT output columns and CT channels, one filter row at a time; each tile decomposed to a 1-D depthwise
convolution and vectorised by upstream's convolution vectoriser into FMAs of CT-lane vectors (CT = two vector
registers' worth of lanes, `vector-bits`), one per output column and filter tap; the filter-row loop is unrolled,
so the OWT x CT accumulators are read once, stay in registers across all taps and are written once. OWT is the
largest divisor of the output width whose accumulators fill at most half the `vector-registers`. It runs after
tfn-parallelize, so each of its tasks (a range of images or output rows: dynamic sizes, which the one-row tiles
absorb) is scheduled the same way. A generic this pass does not take (other dtypes, multipliers, filters of one row
or of more than MAX_TAPS taps, widths and depths no tile divides), or whose schedule does not apply, stays as it is.
"""
from mlir import ir
from mlir.dialects import linalg

from tfn.passes.options import VECTOR_BITS, VECTOR_REGISTERS
from tfn.passes.registry import register
from tfn.passes.tfn_vectorize_kernels import match_tagged, named_sequence, try_schedule
from tfn.passes.walk import collect

# Every tap is unrolled: a big filter (the filter gradient correlates with the whole output gradient, one tap per
# output pixel) would make a huge function, so those stay on the generic's loops.
MAX_TAPS = 64
TAG = "tfn.depthwise"  # on the lowering's generic: [sh, sw, dh, dw, multiplier]
_ANY = "!transform.any_op"


def _static(value, axes):
    shape = ir.RankedTensorType(value.type).shape
    dyn = ir.ShapedType.get_dynamic_size()
    return None if any(shape[a] == dyn for a in axes) else [shape[a] for a in axes]


def _body_is_multiply_add(op):
    names = [o.name for o in op.regions[0].blocks[0].operations]
    return names == ["arith.mulf", "arith.addf", "linalg.yield"]


def tiles(op, vector_bits, vector_registers):
    """(OWT, CT) for a tagged depthwise generic this pass vectorises, else None."""
    if op.name != "linalg.generic" or TAG not in op.attributes or not op.results or len(op.operands) != 3:
        return None
    *_, mult = ir.DenseI64ArrayAttr(op.attributes[TAG])
    out = op.operands[2]
    if mult != 1 or not isinstance(ir.RankedTensorType(out.type).element_type, ir.F32Type):
        return None
    if not _body_is_multiply_add(op):
        return None
    sizes = _static(out, [2, 3])
    if sizes is None or _static(op.operands[1], [0, 1, 2]) is None or _static(op.operands[0], [3]) is None:
        return None
    ow, c = sizes
    kh, kw = _static(op.operands[1], [0, 1])
    if kh < 2:
        return None  # a filter of one row has no filter-row loop to unroll: LLVM vectorises the generic's loops
    if kh * kw > MAX_TAPS:
        return None
    lanes = vector_bits // 32
    ct = next((t for t in (2 * lanes, lanes) if c % t == 0), None)
    if ct is None:
        return None
    budget = max(1, (vector_registers // 2) // (ct // lanes))
    owt = max(d for d in range(1, min(ow, budget) + 1) if ow % d == 0)
    return owt, ct, kh


def schedule_text(kernels):
    """Transform lines per (id, OWT, CT): tile (n, oh, ow, c, kh) to (1, 1, OWT, CT, 1), decompose to 1-D,
    vectorise, hoist the accumulators out of the filter-row loop, then fold and clean up."""
    body = []
    for i, owt, ct, _ in kernels:
        body += [match_tagged(f"%op{i}", "tfn.depthwise_id", i),
                 f"%t{i}, %l{i}:5 = transform.structured.tile_using_for %op{i} tile_sizes [1, 1, {owt}, {ct}, 1, 0] "
                 f": ({_ANY}) -> ({', '.join([_ANY] * 6)})",
                 f"%d{i} = transform.structured.decompose %t{i} : ({_ANY}) -> {_ANY}",
                 f"transform.structured.vectorize %d{i} : {_ANY}"]
    # the accumulator's read and write folded into the tensor the filter-row loop carries, then hoisted out of it
    body += [f'%f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}',
             "transform.apply_patterns to %f {",
             "  transform.apply_patterns.linalg.tiling_canonicalization",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             "  transform.apply_patterns.canonicalization",
             f"}} : {_ANY}"]
    body += [f"transform.loop.unroll %l{i}#4 {{factor = {kh}}} : {_ANY}" for i, _, _, kh in kernels]
    body += ["transform.apply_patterns to %f {", "  transform.apply_patterns.vector.cast_away_vector_leading_one_dim",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops",
             "  transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers",
             "  transform.apply_patterns.canonicalization", f"}} : {_ANY}",
             f"transform.apply_cse to %f : {_ANY}"]
    return named_sequence(body)


def _to_named(op, i):
    """The upstream named depthwise convolution on op's operands, tagged with id i, in op's place."""
    sh, sw, dh, dw, _ = ir.DenseI64ArrayAttr(op.attributes[TAG])
    x, w, init = op.operands
    with ir.InsertionPoint(op), op.location:
        named = linalg.depthwise_conv_2d_nhwc_hwc(x, w, outs=[init], strides=[sh, sw], dilations=[dh, dw])
    named_op = named.owner
    named_op.attributes["tfn.depthwise_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
    op.results[0].replace_all_uses_with(named)
    op.erase()
    return named_op


@register("tfn-vectorize-depthwise", "Depthwise convolutions (f32, multiplier 1) as register tiles of vector FMAs "
          "over the channels, accumulators kept across the filter rows",
          options=[VECTOR_BITS, VECTOR_REGISTERS])
def vectorize_depthwise(module_op, vector_bits, vector_registers):
    kernels = []
    for op in collect(module_op, lambda op: op.name == "linalg.generic" and TAG in op.attributes):
        found = tiles(op, vector_bits, vector_registers)
        if found is None:
            continue
        i = len(kernels)
        _to_named(op, i)
        kernels.append((i, *found))
    if not kernels:
        return
    if not try_schedule(module_op, schedule_text(kernels)):
        for k in kernels:
            try_schedule(module_op, schedule_text([k]))
    for op in collect(module_op, lambda op: "tfn.depthwise_id" in op.attributes):
        del op.attributes["tfn.depthwise_id"]
