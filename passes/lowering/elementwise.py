"""Lowering of elementwise tfn ops to broadcasting linalg.generic ops over arith/math bodies."""
from mlir.dialects import arith, math

from tfn.dialects import ops
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering import scalar as s
from tfn.passes.lowering.common import dim, index, load_bool, lowering, map_elementwise

# op -> fn(dtype, *scalars) building the scalar body; dtype is the operands' tfn dtype.
UNARY = {
    ops.identity: lambda dt, a: a,
    ops.negative: s.neg,
    ops.abs: s.abs_,
    ops.sign: s.sign,
    ops.square: lambda dt, a: s.mul(dt, a, a),
    ops.sqrt: lambda dt, a: math.sqrt(a),
    ops.rsqrt: lambda dt, a: math.rsqrt(a),
    ops.exp: lambda dt, a: math.exp(a),
    ops.log: lambda dt, a: math.log(a),
    ops.tanh: lambda dt, a: math.tanh(a),
    ops.sigmoid: s.sigmoid,
    ops.log1p: s.log1p,
    ops.expm1: s.expm1,
    ops.erf: s.erf,
    ops.softplus: s.softplus,
    ops.sin: lambda dt, a: math.sin(a),
    ops.cos: lambda dt, a: math.cos(a),
    **{getattr(ops, name): s.in_float64(getattr(math, name))
       for name in ("atan", "asin", "acos", "tan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc")},
    ops.logical_not: lambda dt, a: arith.xori(a, s.const(dt, 1)),
}

BINARY = {
    ops.add: s.add,
    ops.subtract: s.sub,
    ops.multiply: s.mul,
    ops.divide: lambda dt, a, b: s.binary("arith.divf", a, b),
    ops.floordiv: s.floordiv,
    ops.floormod: s.floormod,
    ops.pow: s.pow_,
    ops.atan2: s.atan2,
    ops.maximum: s.maximum,
    ops.minimum: s.minimum,
    ops.equal: lambda dt, a, b: s.cmp(dt, "eq", a, b),
    ops.not_equal: lambda dt, a, b: s.cmp(dt, "ne", a, b),
    ops.less: lambda dt, a, b: s.cmp(dt, "lt", a, b),
    ops.less_equal: lambda dt, a, b: s.cmp(dt, "le", a, b),
    ops.greater: lambda dt, a, b: s.cmp(dt, "gt", a, b),
    ops.greater_equal: lambda dt, a, b: s.cmp(dt, "ge", a, b),
    ops.logical_and: lambda dt, a, b: arith.andi(a, b),
    ops.logical_or: lambda dt, a, b: arith.ori(a, b),
    ops.bitwise_xor: lambda dt, a, b: arith.xori(a, b),
}


_MISMATCH, _DIVISION_BY_ZERO, _NEGATIVE_POWER = 0, 1, 2


def _format_error(details, op):
    kind, operand, axis, got, want = details[:5]
    if kind == _DIVISION_BY_ZERO:
        return "Integer division by zero"
    if kind == _NEGATIVE_POWER:
        return "Integers to negative integer powers are not allowed"
    return (f"Incompatible shapes at run time: dimension {axis} of operand #{operand} has size {got}, "
            f"but the broadcast result has {want} (a dynamic dimension is never broadcast from 1)")


for _op in (*UNARY, *BINARY, ops.select):
    runtime_errors.may_fail(_op, _format_error)


def check_dynamic_broadcast(rw):
    """Report operands whose dynamic dims differ at run time from the result's size (out-of-bounds reads)."""
    out = rw.out
    sizes = {}
    for k, (v, t) in enumerate(zip(rw.operands, rw.in_types)):
        off = out.rank - t.rank
        for i, d in enumerate(t.shape):
            if d is not None:
                continue
            want = out.shape[off + i]
            size = dim(v, i)
            if want is None:
                if off + i not in sizes:
                    sizes[off + i] = size  # the result takes its size from the first operand that has one
                    continue
                want_v = sizes[off + i]
            else:
                want_v = index(want)
            bad = arith.cmpi(arith.CmpIPredicate.ne, size, want_v)
            runtime_errors.report(rw, bad, [_MISMATCH, k, off + i, size, want_v])


@lowering(*UNARY, *BINARY)
def lower_elementwise(rw):
    """tfn.<op>(x[, y]) -> linalg.generic with NumPy broadcasting maps and the op's scalar body."""
    body = UNARY.get(rw.opdef) or BINARY[rw.opdef]
    dt = rw.in_types[0].dtype
    check_dynamic_broadcast(rw)
    if rw.opdef in (ops.floordiv, ops.floormod) and dt.is_integer:
        body = _reporting_division_by_zero(rw, body)
    if rw.opdef is ops.pow and dt.is_integer and not dt.is_unsigned:
        body = _reporting_negative_power(rw, body)
    return [map_elementwise(rw.operands, rw.in_types, rw.out, lambda *xs: body(dt, *xs))]


def _reporting_division_by_zero(rw, body):
    """An integer division body that also reports a zero divisor (TF's error; the result there is 0)."""
    def checked(dt, a, b):
        runtime_errors.report(rw, s.cmp(dt, "eq", b, s.const(dt, 0)), [_DIVISION_BY_ZERO, 0, 0, 0, 0])
        return body(dt, a, b)
    return checked


def _reporting_negative_power(rw, body):
    """A signed integer pow body that also reports a negative exponent (eager's error; the result here is 0)."""
    def checked(dt, a, b):
        runtime_errors.report(rw, s.cmp(dt, "lt", b, s.const(dt, 0)), [_NEGATIVE_POWER, 0, 0, 0, 0])
        return body(dt, a, b)
    return checked


@lowering(ops.select)
def lower_select(rw):
    """tfn.select(c, x, y) -> linalg.generic { arith.select }."""
    check_dynamic_broadcast(rw)
    return [map_elementwise(rw.operands, rw.in_types, rw.out, lambda c, x, y: arith.select(load_bool(c), x, y))]


@lowering(ops.cast)
def lower_cast(rw):
    """tfn.cast(x) -> linalg.generic with the scalar conversion."""
    src, dst = rw.in_types[0].dtype, rw.out.dtype
    return [map_elementwise(rw.operands, rw.in_types, rw.out, lambda a: s.convert(src, dst, a))]
