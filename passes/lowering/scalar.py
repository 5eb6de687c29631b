"""Scalar arithmetic on MLIR values by tfn dtype: the bodies of elementwise kernels."""
from mlir import ir
from mlir.dialects import arith, math, scf

from tfn.dialects import dtypes
from tfn.dialects import types as ttypes
from tfn.passes import tfn_polynomial_approximation as approx


def const(dtype, value):
    """A scalar arith.constant of a tfn dtype."""
    t = ttypes.element_type(dtype)
    if dtype.is_floating:
        return arith.constant(t, float(value))
    return arith.constant(t, int(value))


def cmp(dtype, pred, a, b):
    """arith.cmpf/cmpi by a predicate name: eq ne lt le gt ge (ordered floats; ne is unordered as in C)."""
    if dtype.is_floating:
        fpred = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}[pred]
        return arith.cmpf(getattr(arith.CmpFPredicate, fpred.upper()), a, b)
    if pred in ("eq", "ne"):
        ipred = pred
    else:
        ipred = ("u" if dtype.is_unsigned or dtype.is_bool else "s") + pred
    return arith.cmpi(getattr(arith.CmpIPredicate, ipred), a, b)


def binary(name, a, b):
    """The arith op `name` of two operands of one type whose result has that type (arith.addf, ...): the op its
    builder makes, without the builder's type inference (a fifth of the cost)."""
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).result


def add(dt, a, b):
    return binary("arith.addf" if dt.is_floating else "arith.addi", a, b)


def sub(dt, a, b):
    return binary("arith.subf" if dt.is_floating else "arith.subi", a, b)


def mul(dt, a, b):
    return binary("arith.mulf" if dt.is_floating else "arith.muli", a, b)


def _safe_divisor(dt, b):
    """Integer divisors of 0 become 1 so that compiled code never traps (NumPy's result: 0)."""
    zero, one = const(dt, 0), const(dt, 1)
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, zero)
    return is_zero, arith.select(is_zero, one, b)


def _zero_if(dt, is_zero, value):
    return arith.select(is_zero, const(dt, 0), value)


def floordiv(dt, a, b):
    if dt.is_floating:
        return math.floor(arith.divf(a, b))
    is_zero, b = _safe_divisor(dt, b)
    if dt.is_unsigned:
        return _zero_if(dt, is_zero, arith.divui(a, b))
    # INT_MIN // -1 overflows and traps on x86: compute it as -a (wrapping), as NumPy does.
    minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, const(dt, -1))
    safe_b = arith.select(minus_one, const(dt, 1), b)
    q = arith.floordivsi(a, safe_b)
    q = arith.select(minus_one, arith.subi(const(dt, 0), a), q)
    return _zero_if(dt, is_zero, q)


def floormod(dt, a, b):
    if dt.is_floating:
        # Python's %: fmod, then shift by b when the remainder's sign differs from b's.
        r = arith.remf(a, b)
        zero = const(dt, 0)
        fix = arith.andi(arith.cmpf(arith.CmpFPredicate.ONE, r, zero),
                         arith.xori(arith.cmpf(arith.CmpFPredicate.OLT, r, zero),
                                    arith.cmpf(arith.CmpFPredicate.OLT, b, zero)))
        return arith.select(fix, arith.addf(r, b), r)
    is_zero, b = _safe_divisor(dt, b)
    if dt.is_unsigned:
        return _zero_if(dt, is_zero, arith.remui(a, b))
    minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, const(dt, -1))
    b = arith.select(minus_one, const(dt, 1), b)  # x % -1 == 0, and INT_MIN % -1 would trap
    r = arith.remsi(a, b)
    zero = const(dt, 0)
    fix = arith.andi(arith.cmpi(arith.CmpIPredicate.ne, r, zero),
                     arith.xori(arith.cmpi(arith.CmpIPredicate.slt, r, zero),
                                arith.cmpi(arith.CmpIPredicate.slt, b, zero)))
    return _zero_if(dt, is_zero, arith.select(fix, arith.addi(r, b), r))


def pow_(dt, a, b):
    if dt.is_floating:
        return math.powf(a, b)
    return ipow(dt, a, b)


def ipow(dt, a, b):
    """Integer a ** b by repeated squaring in an scf.while (math.ipowi has no LLVM lowering here); wraps as NumPy.
    A negative b gives 0 (eager and TF raise: the caller reports it)."""
    t = a.type
    zero, one = const(dt, 0), const(dt, 1)
    negative = arith.constant(ir.IntegerType.get_signless(1), 0) if dt.is_unsigned else \
        arith.cmpi(arith.CmpIPredicate.slt, b, zero)
    loop = scf.WhileOp([t, t, t], [one, a, arith.select(negative, zero, b)])
    before = loop.before.blocks.append(t, t, t)
    with ir.InsertionPoint(before):
        scf.ConditionOp(arith.cmpi(arith.CmpIPredicate.ne, before.arguments[2], zero), list(before.arguments))
    after = loop.after.blocks.append(t, t, t)
    with ir.InsertionPoint(after):
        acc, base, e = after.arguments
        odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(e, one), zero)
        acc = arith.select(odd, arith.muli(acc, base), acc)
        scf.YieldOp([acc, arith.muli(base, base), arith.shrui(e, one)])
    return arith.select(negative, zero, loop.results[0])


def maximum(dt, a, b):
    if dt.is_floating:
        return arith.maximumf(a, b)
    return arith.maxui(a, b) if dt.is_unsigned else arith.maxsi(a, b)


def minimum(dt, a, b):
    if dt.is_floating:
        return arith.minimumf(a, b)
    return arith.minui(a, b) if dt.is_unsigned else arith.minsi(a, b)


def neg(dt, a):
    return arith.negf(a) if dt.is_floating else arith.subi(const(dt, 0), a)


def sign(dt, a):
    zero = const(dt, 0)
    if dt.is_floating:
        pos = arith.uitofp(a.type, arith.cmpf(arith.CmpFPredicate.OGT, a, zero))
        neg_ = arith.uitofp(a.type, arith.cmpf(arith.CmpFPredicate.OLT, a, zero))
        s = arith.subf(pos, neg_)
        is_nan = arith.cmpf(arith.CmpFPredicate.UNO, a, a)
        return arith.select(is_nan, a, s)
    pos = arith.extui(a.type, arith.cmpi(arith.CmpIPredicate.sgt, a, zero))
    neg_ = arith.extui(a.type, arith.cmpi(arith.CmpIPredicate.slt, a, zero))
    return arith.subi(pos, neg_)


def sigmoid(dt, a):
    """1 / (1 + exp(-x)); float32 as tfn-polynomial-approximation's accurate sigmoid (no math op to rewrite later)."""
    if dt is dtypes.float32:
        return approx.sigmoid_f32(approx.Builder(a.type), a)
    return arith.divf(const(dt, 1), arith.addf(const(dt, 1), math.exp(arith.negf(a))))


def _in_float64(dt, a, body):
    """body(x) evaluated in float64 and rounded once to a's type: float16/float32 results within 0.5 ulp (+2**-29)."""
    if dt is dtypes.float64:
        return body(a)
    return arith.truncf(a.type, body(arith.extf(ir.F64Type.get(), a)))


def _select_eq(a, b, then, else_):
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, a, b), then, else_)


def _log1p64(x):
    """log(1 + x) from libm's log (Kahan): u = 1 + x rounds, log(u) * x / (u - 1) undoes it; a few f64 ulp.
    (math.log1p itself would become log(1 + x) in convert-math-to-llvm.)"""
    one = arith.constant(x.type, 1.0)
    u = arith.addf(one, x)
    d = arith.subf(u, one)
    y = _select_eq(d, arith.constant(x.type, 0.0), x, arith.mulf(math.log(u), arith.divf(x, d)))
    return _select_eq(u, arith.constant(x.type, float("inf")), u, y)


def _expm1_64(x):
    """exp(x) - 1 from libm's exp and log (Kahan): (u - 1) * x / log(u) with u = exp(x); a few f64 ulp."""
    one = arith.constant(x.type, 1.0)
    u = math.exp(x)
    d = arith.subf(u, one)
    y = arith.mulf(d, arith.divf(x, math.log(u)))
    y = _select_eq(d, arith.constant(x.type, -1.0), d, y)
    y = _select_eq(u, arith.constant(x.type, float("inf")), u, y)
    return _select_eq(u, one, x, y)


def log1p(dt, a):
    return _in_float64(dt, a, _log1p64)


def expm1(dt, a):
    return _in_float64(dt, a, _expm1_64)


def erf(dt, a):
    return _in_float64(dt, a, math.erf)  # libm's erf


def in_float64(fn):
    """The scalar body of a unary libm function: fn in float64, rounded once to the operand's type."""
    return lambda dt, a: _in_float64(dt, a, fn)


def atan2(dt, y, x):
    """libm's atan2 in float64, rounded once."""
    if dt is dtypes.float64:
        return math.atan2(y, x)
    f64 = ir.F64Type.get()
    return arith.truncf(y.type, math.atan2(arith.extf(f64, y), arith.extf(f64, x)))


def softplus(dt, a):
    """log(1 + e**x) = max(x, 0) + log1p(e**-|x|): no overflow, accurate for x far below 0."""
    def body(x):
        return arith.addf(arith.maximumf(x, arith.constant(x.type, 0.0)),
                          _log1p64(math.exp(arith.negf(math.absf(x)))))
    return _in_float64(dt, a, body)


def abs_(dt, a):
    return math.absf(a) if dt.is_floating else math.absi(a)


def convert(src, dst, a):
    """Cast a scalar between tfn dtypes (float→int truncates toward zero, to bool is `!= 0`)."""
    st, dt_ = ttypes.element_type(src), ttypes.element_type(dst)
    if src is dst:
        return a
    if dst.is_bool:
        return cmp(src, "ne", a, const(src, 0))  # i1; the elementwise builder stores it as i8
    if src.is_floating and dst.is_floating:
        sw, dw = ir.FloatType(st).width, ir.FloatType(dt_).width
        return arith.extf(dt_, a) if dw > sw else arith.truncf(dt_, a)
    if src.is_floating:
        return arith.fptoui(dt_, a) if dst.is_unsigned else arith.fptosi(dt_, a)
    if dst.is_floating:
        return arith.uitofp(dt_, a) if (src.is_unsigned or src.is_bool) else arith.sitofp(dt_, a)
    sw, dw = ir.IntegerType(st).width, ir.IntegerType(dt_).width
    if dw > sw:
        return arith.extui(dt_, a) if (src.is_unsigned or src.is_bool) else arith.extsi(dt_, a)
    if dw < sw:
        return arith.trunci(dt_, a)
    return a
