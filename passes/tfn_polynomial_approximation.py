"""tfn-polynomial-approximation: f32 math.exp/log/tanh as arith/math.fma polynomials (Cephes exp/log, Eigen tanh).

libm's expf/logf/tanhf are scalar calls, so a loop containing them is not vectorised; these polynomials are plain
arithmetic: on the 64-lane vectors of tfn-vectorize-elementwise, or vectorised by LLVM like other elementwise ops
(tfn.sigmoid lowers to 1 / (1 + exp(-x)), so it is covered through its exp). f64 and f16 stay on libm. Accuracy
against NumPy (float32 in, float64 reference, measured on 2e6 random points per range; test_kernels.py asserts
bounds of twice these):
  exp  on [-87, 88]:     max relative error 8.2e-8; results in the subnormal range (x < -87.3) within 1.1e-45 absolute
  log  on [1e-30, 1e30]: max relative error 7.8e-8; on [0.5, 2] (log near 0) max absolute error 3.9e-8
  tanh on [-10, 10]:     max relative error 2.8e-7, absolute 2.8e-7 (the error of TF's own CPU tanh)
Special values follow libm: exp(nan) = nan, exp(inf) = inf, exp(-inf) = 0, exp(x > 88.73) = inf; log(+-0) = -inf,
log(x < 0) = nan, log(inf) = inf, log(subnormal) is finite; tanh(+-inf) = +-1, tanh(-0) = -0, tanh(nan) = nan.
"""
from mlir import ir
from mlir.dialects import arith, math

from tfn.passes.registry import register
from tfn.passes.walk import collect

LOG2E, LN2_HI, LN2_LO = 1.44269504088896341, 0.693359375, -2.12194440e-4
EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
TANH_CLAMP = 7.90531110763549805
TANH_NUM = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
            1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
TANH_DEN = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)
SQRTHF = 0.707106781186547524


class _Builder:
    """Emits f32 arithmetic of one shape (f32 or vector<...xf32>) at the current insertion point."""

    def __init__(self, ftype):
        self.ftype = ftype
        shape = ir.VectorType(ftype).shape if isinstance(ftype, ir.VectorType) else None
        i32, i1 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(1)
        self.itype = ir.VectorType.get(shape, i32) if shape else i32
        self.btype = ir.VectorType.get(shape, i1) if shape else i1

    def f(self, value):
        return _const(self.ftype, ir.FloatAttr.get(ir.F32Type.get(), value))

    def i(self, value):
        return _const(self.itype, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value))

    def fma(self, a, b, c):
        return math.fma(a, b, c)

    def poly(self, coeffs, x):
        """Horner: ((c0 * x + c1) * x + ...) with one fma per step."""
        y = self.f(coeffs[0])
        for c in coeffs[1:]:
            y = math.fma(y, x, self.f(c))
        return y

    def cmp(self, pred, a, b):
        return arith.cmpf(getattr(arith.CmpFPredicate, pred), a, b)

    def pow2(self, n):
        """2**n for an i32 n in [-126, 127], built from its exponent bits."""
        return arith.bitcast(self.ftype, arith.shli(arith.addi(n, self.i(127)), self.i(23)))


def _const(type_, attr):
    if isinstance(type_, ir.VectorType):
        attr = ir.DenseElementsAttr.get_splat(type_, attr)
    return arith.constant(type_, attr)


def exp_f32(b, x):
    """e**x: x = n ln2 + r, |r| <= ln2/2, e**r by a degree-7 polynomial, 2**n applied in two halves so that the
    result overflows to inf and underflows through the subnormals like expf."""
    xc = arith.maxnumf(arith.minnumf(x, b.f(88.75)), b.f(-104.0))
    fx = math.floor(b.fma(xc, b.f(LOG2E), b.f(0.5)))
    r = b.fma(fx, b.f(-LN2_HI), xc)
    r = b.fma(fx, b.f(-LN2_LO), r)
    y = b.fma(b.poly(EXP_POLY, r), arith.mulf(r, r), r)
    y = arith.addf(y, b.f(1.0))
    n = arith.fptosi(b.itype, fx)
    half = arith.shrsi(n, b.i(1))
    y = arith.mulf(arith.mulf(y, b.pow2(half)), b.pow2(arith.subi(n, half)))
    return arith.select(b.cmp("UNO", x, x), x, y)


def log_f32(b, x):
    """log(x): x = m 2**e with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-9 polynomial in m - 1."""
    tiny = b.cmp("OLT", x, b.f(1.17549435e-38))
    xs = arith.select(tiny, arith.mulf(x, b.f(8388608.0)), x)  # subnormals: scale by 2**23 first
    bits = arith.bitcast(b.itype, xs)
    e = arith.subi(arith.shrui(bits, b.i(23)), b.i(126))
    e = arith.select(tiny, arith.subi(e, b.i(23)), e)
    m = arith.bitcast(b.ftype, arith.ori(arith.andi(bits, b.i(0x007FFFFF)), b.i(0x3F000000)))
    small = b.cmp("OLT", m, b.f(SQRTHF))
    e = arith.select(small, arith.subi(e, b.i(1)), e)
    m = arith.subf(arith.select(small, arith.addf(m, m), m), b.f(1.0))
    fe = arith.sitofp(b.ftype, e)
    z = arith.mulf(m, m)
    y = arith.mulf(arith.mulf(b.poly(LOG_POLY, m), m), z)
    y = b.fma(fe, b.f(LN2_LO), y)
    y = b.fma(z, b.f(-0.5), y)
    y = b.fma(fe, b.f(LN2_HI), arith.addf(m, y))
    inf = b.f(float("inf"))
    y = arith.select(b.cmp("OEQ", x, inf), inf, y)
    y = arith.select(b.cmp("OEQ", x, b.f(0.0)), b.f(float("-inf")), y)
    return arith.select(b.cmp("ULT", x, b.f(0.0)), b.f(float("nan")), y)  # x < 0 or nan


def tanh_f32(b, x):
    """tanh(x): Eigen's (and so TF's CPU) rational approximation, odd degree 13 over even degree 6, on x clamped
    to +-7.9053; x itself for |x| < 4e-4 and +-1 beyond the clamp (where tanh rounds to +-1)."""
    xc = arith.maximumf(arith.minimumf(x, b.f(TANH_CLAMP)), b.f(-TANH_CLAMP))  # nan-propagating
    x2 = arith.mulf(xc, xc)
    p = arith.mulf(xc, b.poly(TANH_NUM, x2))
    q = b.poly(TANH_DEN, x2)
    ax = math.absf(x)
    r = arith.select(b.cmp("OLT", ax, b.f(4e-4)), x, arith.divf(p, q))
    return arith.select(b.cmp("OGE", ax, b.f(TANH_CLAMP)), math.copysign(b.f(1.0), x), r)


APPROXIMATIONS = {"math.exp": exp_f32, "math.log": log_f32, "math.tanh": tanh_f32}


def _is_f32(type_):
    if isinstance(type_, ir.VectorType):
        type_ = ir.VectorType(type_).element_type
    return isinstance(type_, ir.F32Type)


def approximate(root):
    """Replace every f32 math.exp/log/tanh under root by its polynomial; returns how many were replaced."""
    ops = collect(root, lambda op: op.name in APPROXIMATIONS and _is_f32(op.results[0].type))
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            new = APPROXIMATIONS[op.name](_Builder(op.results[0].type), op.operands[0])
        op.results[0].replace_all_uses_with(new)
        op.erase()
    return len(ops)


@register("tfn-polynomial-approximation",
          "Rewrite f32 math.exp/log/tanh into vectorisable Cephes-style polynomials (arith + math.fma)")
def polynomial_approximation(module_op):
    approximate(module_op)

