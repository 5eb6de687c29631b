"""tfn-div-by-constant: f32/f64 `x / c` with a constant scalar or splat c becomes `x * (1 / c)`.

A division costs about ten multiplications (vdivps has a throughput of one per ~5 cycles against two
multiplications per cycle), and it dominates fused elementwise chains that divide by Python scalars. When c is a
power of two, 1/c is exact and the product is bit-identical to the quotient. For any other c, 1/c is rounded once,
so x * (1/c) can differ from the correctly rounded x / c by 1 ulp (relative error <= 2**-23 for f32); XLA's
algebraic simplifier makes the same rewrite (A / constant => A * inverted constant). Divisors whose reciprocal
is not a finite normal number (0, inf, nan, subnormals, huge values) keep their division, so inf/nan results and
gradual underflow stay as the division produces them.
"""
import math
import struct

from mlir import ir

from tfn.passes.registry import register

_LIMITS = {32: (1.1754943508222875e-38, 3.4028234663852886e38), 64: (2.2250738585072014e-308, 1.7976931348623157e308)}


def _element_type(type_):
    return ir.VectorType(type_).element_type if isinstance(type_, ir.VectorType) else type_


def _float_width(type_):
    """32 or 64 for f32/f64 (or vectors of them), else None."""
    et = _element_type(type_)
    return 32 if isinstance(et, ir.F32Type) else 64 if isinstance(et, ir.F64Type) else None


def _round(value, width):
    """value rounded to the float of this width (Python floats are f64)."""
    return struct.unpack("f", struct.pack("f", value))[0] if width == 32 else value


def _constant_value(owner):
    """The float a scalar arith.constant or splat vector constant `owner` holds, or None."""
    attr = owner.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.DenseFPElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
        return ir.FloatAttr(ir.DenseElementsAttr(attr).get_splat_value()).value
    return None


def reciprocal(c, width):
    """1/c rounded to the width when it is a finite normal number of that width, else None."""
    if c is None or c == 0.0 or not math.isfinite(c):
        return None
    smallest, largest = _LIMITS[width]
    r = _round(1.0 / c, width)
    if not smallest <= abs(r) <= largest or not smallest <= abs(c):
        return None
    return r


def _survey(module_op):
    """(the f32/f64 arith.divf ops, {constant's result: its arith.constant op}) in one walk. Constants are looked up
    by value: asking a value for its owner costs ~20 us (the bindings make an OpView for it)."""
    divs, constants = [], {}

    def visit(op):
        name = op.name
        if name == "arith.divf":
            if _float_width(op.results[0].type) is not None:
                divs.append(op)
        elif name == "arith.constant":
            constants[op.results[0]] = op
        return ir.WalkResult.ADVANCE

    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return divs, constants


@register("tfn-div-by-constant", "Rewrite f32/f64 division by a constant scalar or splat into multiplication by "
          "its reciprocal (exact for powers of two, within 1 ulp otherwise)")
def div_by_constant(module_op):
    divs, constants = _survey(module_op)
    values = {}  # constant op -> the float it holds, or None
    for op in divs:
        owner = constants.get(op.operands[1])
        if owner is None:
            continue
        c = values.get(owner, False)
        if c is False:
            c = values[owner] = _constant_value(owner)
        type_ = op.results[0].type
        r = reciprocal(c, _float_width(type_))
        if r is None:
            continue
        with ir.InsertionPoint(op), op.location:
            attr = ir.FloatAttr.get(_element_type(type_), r)
            if isinstance(type_, ir.VectorType):
                attr = ir.DenseElementsAttr.get_splat(type_, attr)
            # (ir.Operation.create: the ops arith.constant and arith.mulf build)
            inverse = ir.Operation.create("arith.constant", results=[type_], attributes={"value": attr}).result
            product = ir.Operation.create("arith.mulf", results=[type_], operands=[op.operands[0], inverse]).result
        op.results[0].replace_all_uses_with(product)
        op.erase()
