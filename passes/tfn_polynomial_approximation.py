"""tfn-polynomial-approximation: f32 math.exp/log/tanh as arith/math.fma polynomials, within one float32 ulp.

libm's expf/logf/tanhf are scalar calls, so a loop containing them is not vectorised; these polynomials are plain
arithmetic: on the 64-lane vectors of tfn-vectorize-elementwise, or vectorised by LLVM like other elementwise ops.
f64 and f16 stay on libm. The f32 sigmoid (no math op) is built by tfn-to-linalg from `sigmoid_f32` below.
Error against float64 NumPy over every float32 exponent and densely where the function varies (test_ulp.py asserts
at most 1 ulp, 0.5 ulp on average), with the range reduction that gets there:
  exp      0.74 ulp max, 0.25 mean: e**x = 2**n (1 + r + c), r = x - n ln2 (Cody-Waite), 1 + r + c as a sum of two
           floats, one rounding fma; 2**n in two factors, the second exact but for subnormal results (0.25 ulp more)
  log      0.77 ulp max, 0.25 mean: x = m 2**e with m in [sqrt(1/2), sqrt(2)), Cephes' polynomial in m - 1
  tanh     0.80 ulp max, 0.26 mean: t + t**3 P(t**2) below 0.55; above, 1 - 2 / (1 + e**2t) with 1 + e**2t as two
           floats and the reciprocal refined by a Newton step on its residual
  sigmoid  0.74 ulp max, 0.25 mean: the same reciprocal of 1 + e**-|x|; for x < 0, e**x / (1 + e**x) rounded once
Special values follow libm: exp(nan) = nan, exp(inf) = inf, exp(-inf) = 0, exp(x > 88.73) = inf; log(+-0) = -inf,
log(x < 0) = nan, log(inf) = inf, log(subnormal) is finite; tanh(+-inf) = +-1 (and +-1 from |x| > 9.01), tanh(-0) = -0,
sigmoid saturates to exactly 0 and 1; nan stays nan (quiet).
On vectors, exp and tanh branch once per vector (scf.if on the and of a lane test) to a short path that gives the
same bits where it applies: exp when every lane is in [-86.5, 88] (results normal: no clamps, 2**n put straight into
the exponent field, no nan select; 18 ops instead of 30), tanh when every lane is below 0.55 in magnitude (the
polynomial alone: 11 ops instead of 40 and a division); vectors with a lane outside take the whole recipe, so
mixed vectors pay a compare and a branch more. The 50-op exp/tanh chain of 10**6 f32 (values settle near 0.2, so
9 of its 10 tanh take the short path) went from 14.1 to 9.2 ms CPU with AVX2, 9.2 to 6.1 ms with AVX-512. Scalars
keep the branch-free recipe (a branch would keep LLVM from vectorising their loop).
A vector math.erf, atan2, ... (LIBM_ONLY: no LLVM intrinsic) is unrolled into scalar ones here, for
convert-math-to-libm.
A tanh of another type (f64, f16) is expanded into exp-based arithmetic by upstream math-expand-ops{ops=tanh},
which this pass runs on the module only when it holds such a tanh: it used to be a pipeline step of its own,
a greedy rewrite of the whole module (~4 ms of bench (h)'s step) that changed nothing a later pass would not
also do when no tanh was left.
"""
from mlir import ir
from mlir.dialects import arith, math, scf, vector

from tfn.passes.registry import register
from tfn.passes.registry import run as run_pipeline

LOG2E = 1.44269504088896341
# ln 2 = LN2_HI + LN2_LO (Cody-Waite): n * LN2_HI is exact for |n| < 2**15
LN2_HI, LN2_LO = 0.693359375, -2.1219444170128554e-4
# (e**r - 1 - r) / r**2 on |r| <= ln2/2, highest power first: relative error 2**-27.9 (EXP_POLY4: 2**-22.9, enough
# where the polynomial's share of the result is small)
EXP_POLY = (1.9908785179723054e-4, 1.392874401062727e-3, 8.333245292305946e-3, 4.1666530072689056e-2,
            0.1666666716337204, 0.5)
EXP_POLY4 = (1.3905816012993455e-3, 8.362955413758755e-3, 4.166676104068756e-2, 0.16666579246520996, 0.5)
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
# (tanh(t) - t) / t**3 as a polynomial in t**2 on |t| <= TANH_SMALL: relative error 2**-24
TANH_SMALL = 0.55
TANH_POLY = (-6.457474548369646e-3, 2.1224575117230415e-2, -5.3894948214292526e-2, 0.1333303600549698,
             -0.3333333134651184)
TANH_BIG = 9.5  # tanh(t) rounds to 1 for t > 9.01
EXP_MIN, EXP_MAX = -104.0, 88.75  # e**x rounds to 0 below, overflows to inf above
# e**x = 2**n (hi + lo) is a normal float with n in [-125, 127] on this range (n = -126 needs x < -86.99, n = 128
# needs x > 88.38; hi + lo lies in [0.70, 1.42]): the vector fast path of exp_f32 needs neither clamps nor two factors
EXP_FAST_MIN, EXP_FAST_MAX = -86.5, 88.0
SQRTHF = 0.707106781186547524


class Builder:
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

    def at_most(self, x, bound):
        """min(x, bound), and bound for nan: x86's vminps itself (arith.minnumf costs a compare and blend more)."""
        c = self.f(bound)
        return arith.select(self.cmp("OLT", x, c), x, c)

    def at_least(self, x, bound):
        """max(x, bound), and bound for nan (vmaxps)."""
        c = self.f(bound)
        return arith.select(self.cmp("OGT", x, c), x, c)

    def pow2(self, n):
        """2**n for an i32 n in [-126, 127], built from its exponent bits."""
        return arith.bitcast(self.ftype, arith.shli(arith.addi(n, self.i(127)), self.i(23)))


def _const(type_, attr):
    if isinstance(type_, ir.VectorType):
        attr = ir.DenseElementsAttr.get_splat(type_, attr)
    return arith.constant(type_, attr)


def _exp_reduce(b, x, coeffs=EXP_POLY):
    """(n, r, c) with e**x = 2**n (1 + r + c), |r| <= ln2/2 and |c| < 0.07, for x in [EXP_MIN, EXP_MAX]; n is an
    i32. r's own rounding (2**-26 at most) costs 0.02 ulp of the results built on it."""
    fx = math.floor(b.fma(x, b.f(LOG2E), b.f(0.5)))
    r = b.fma(fx, b.f(-LN2_LO), b.fma(fx, b.f(-LN2_HI), x))  # the inner fma is exact
    c = arith.mulf(arith.mulf(r, r), b.poly(coeffs, r))
    return arith.fptosi(b.itype, fx), r, c


def _split_one_plus(b, r, c):
    """(hi, lo) with hi + lo = 1 + r + c, hi = fl(1 + r) and lo exact but for the rounding of a tiny sum."""
    hi = arith.addf(b.f(1.0), r)
    return hi, arith.addf(arith.addf(arith.subf(b.f(1.0), hi), r), c)


def _scale_exponent(b, n):
    """(s1, s2) normal powers of two with s1 * s2 = 2**n, n in [-150, 128]: s2 = 2**(n >> 1) applied last is exact
    unless the result overflows (to inf, as expf) or is subnormal (one more rounding: at most 0.25 ulp)."""
    k = arith.shrsi(n, b.i(1))
    return b.pow2(arith.subi(n, k)), b.pow2(k)


def exp_f32(b, x):
    """e**x = 2**n (hi + lo) rounded once by fma(2**n, hi, 2**n lo): at most 0.77 ulp, 0.25 ulp on average.
    Overflows to inf and underflows through the subnormals like expf; nan stays nan."""
    xc = b.at_least(b.at_most(x, EXP_MAX), EXP_MIN)
    n, r, c = _exp_reduce(b, xc)
    hi, lo = _split_one_plus(b, r, c)
    s1, s2 = _scale_exponent(b, n)
    y = arith.mulf(b.fma(s1, hi, arith.mulf(s1, lo)), s2)
    return arith.select(b.cmp("UNO", x, x), b.f(float("nan")), y)  # a quiet nan


def exp_f32_fast(b, x):
    """exp_f32 for x in [EXP_FAST_MIN, EXP_FAST_MAX] only, bit for bit: the result 2**n round(hi + lo) is normal,
    so it is round(hi + lo) with n added to its exponent field (fma(s1, hi, s1 lo) s2 rounds the same sum once and
    scales it exactly)."""
    n, r, c = _exp_reduce(b, x)
    hi, lo = _split_one_plus(b, r, c)
    bits = arith.addi(arith.bitcast(b.itype, arith.addf(hi, lo)), arith.shli(n, b.i(23)))
    return arith.bitcast(b.ftype, bits)


def exp_f32_vector(b, x):
    """exp_f32 on a vector: the fast path when every lane is in [EXP_FAST_MIN, EXP_FAST_MAX] (one branch per vector;
    nan fails the test), the whole exp_f32 otherwise. Values of elementwise chains nearly always take the fast path,
    18 vector ops instead of 30."""
    inside = arith.andi(b.cmp("OGE", x, b.f(EXP_FAST_MIN)), b.cmp("OLE", x, b.f(EXP_FAST_MAX)))
    return _branch(b, _all_lanes(b, inside), lambda: exp_f32_fast(b, x), lambda: exp_f32(b, x))


def _vector_or_scalar(vector_fn, scalar_fn):
    """vector_fn for vector types (branches per vector), scalar_fn for scalars: a branch in a scalar loop would keep
    LLVM from vectorising it."""
    return lambda b, x: (vector_fn if isinstance(b.ftype, ir.VectorType) else scalar_fn)(b, x)


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


def _reciprocal(b, dh, dl):
    """(q, e) with 1 / (dh + dl) = q + e q to about 2**-45: one division and a Newton step on the residual."""
    q = arith.divf(b.f(1.0), arith.addf(dh, dl))
    e = b.fma(arith.negf(q), dl, b.fma(arith.negf(q), dh, b.f(1.0)))
    return q, e


def _tanh_small(b, t):
    """tanh(t) = t + t**3 P(t**2) for 0 <= t < TANH_SMALL (and nan)."""
    t2 = arith.mulf(t, t)
    return b.fma(t, arith.mulf(t2, b.poly(TANH_POLY, t2)), t)


def _all_lanes(b, mask):
    """The i1 that is true when every lane of the vector mask is (a vector.reduction of any shape)."""
    shape = ir.VectorType(mask.type).shape
    if len(shape) != 1:
        n = 1
        for d in shape:
            n *= d
        mask = vector.shape_cast(ir.VectorType.get([n], ir.IntegerType.get_signless(1)), mask)
    return vector.reduction(ir.IntegerType.get_signless(1), ir.Attribute.parse("#vector.kind<and>"), mask)


def _branch(b, cond, then, otherwise):
    """scf.if cond: then() else otherwise(), each a function building one value of b's type."""
    op = scf.IfOp(cond, [b.ftype], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.yield_([then()])
    with ir.InsertionPoint(op.else_block):
        scf.yield_([otherwise()])
    return op.results[0]


def tanh_f32_vector(b, x):
    """tanh_f32 on a vector: only the polynomial when every lane is below TANH_SMALL in magnitude (one branch per
    vector; nan fails the test), bit for bit the same; both paths and the select otherwise. Small activations and
    chains settling near a fixed point take the short path: 11 vector ops and no division instead of 40."""
    t = math.absf(x)
    return _branch(b, _all_lanes(b, b.cmp("OLT", t, b.f(TANH_SMALL))),
                   lambda: math.copysign(_tanh_small(b, t), x), lambda: tanh_f32(b, x))


def tanh_f32(b, x):
    """tanh(x) within 0.8 ulp (0.26 ulp on average over [-3, 3]): t + t**3 P(t**2) for |x| < 0.55, else
    1 - 2 / (1 + e**2t) with e**2t = 2**n (1 + r + c) and the reciprocal refined; +-1 beyond 9.01, -0.0 and nan
    kept."""
    t = math.absf(x)
    small = _tanh_small(b, t)
    tc = b.at_most(t, TANH_BIG)
    n, r, c = _exp_reduce(b, arith.addf(tc, tc), EXP_POLY4)
    s = b.pow2(n)
    dh = b.fma(s, r, arith.addf(s, b.f(1.0)))  # 1 + s exact: n <= 28, and n > 23 only where 2 / (1 + e**2t) < 2**-24
    q, e = _reciprocal(b, dh, arith.mulf(s, c))
    big = b.fma(b.f(-2.0), b.fma(e, q, q), b.f(1.0))
    y = arith.select(b.cmp("OGE", t, b.f(TANH_SMALL)), big, small)  # nan: the small path, which keeps it
    return math.copysign(y, x)


def sigmoid_f32(b, x):
    """1 / (1 + e**-x) within 0.76 ulp over the whole float32 range, 0.25 ulp on average: with t = -|x|,
    e**t = 2**n (1 + r + c) and D = 1 + e**t as a sum of two floats, 1 / D refined (x >= 0) or e**t / D rounded
    once (x < 0, down through the subnormals); nan stays nan."""
    t = b.at_least(arith.negf(math.absf(x)), EXP_MIN)
    n, r, c = _exp_reduce(b, t)
    s1, s2 = _scale_exponent(b, n)
    s = arith.mulf(s1, s2)
    sp1 = arith.addf(s, b.f(1.0))
    dh = b.fma(s, r, sp1)
    sp1_lo = arith.subf(s, arith.subf(sp1, b.f(1.0)))  # 1 + s rounds for n < -23
    dl = b.fma(s, c, arith.addf(b.fma(s, r, arith.subf(sp1, dh)), sp1_lo))
    q, e = _reciprocal(b, dh, dl)
    ql = arith.mulf(e, q)
    pos = arith.addf(q, ql)
    hi, lo = _split_one_plus(b, r, c)
    neg = arith.mulf(b.fma(arith.mulf(s1, hi), q, arith.mulf(s1, b.fma(hi, ql, arith.mulf(lo, q)))), s2)
    y = arith.select(b.cmp("OLT", x, b.f(0.0)), neg, pos)
    return arith.select(b.cmp("UNO", x, x), b.f(float("nan")), y)  # a quiet nan


APPROXIMATIONS = {"math.exp": _vector_or_scalar(exp_f32_vector, exp_f32), "math.log": log_f32,
                  "math.tanh": _vector_or_scalar(tanh_f32_vector, tanh_f32)}


def _is_f32(type_):
    if isinstance(type_, ir.VectorType):
        type_ = ir.VectorType(type_).element_type
    return isinstance(type_, ir.F32Type)


# no LLVM intrinsic (or none every LLVM has): convert-math-to-libm calls libm per element, on scalars only
LIBM_ONLY = {"math.erf", "math.erfc", "math.atan", "math.asin", "math.acos", "math.tan", "math.sinh", "math.cosh",
             "math.asinh", "math.acosh", "math.atanh", "math.atan2"}


def scalarize(op):
    """A vector math op as one scalar op per element (vector.from_elements), so that libm can be called later."""
    vtype = ir.VectorType(op.results[0].type)
    n = 1
    for d in vtype.shape:
        n *= d
    flat = ir.VectorType.get([n], vtype.element_type)
    xs = [vector.shape_cast(flat, operand) for operand in op.operands]
    elems = [ir.Operation.create(op.name, [vtype.element_type], [vector.extract(x, [], [i]) for x in xs]).result
             for i in range(n)]
    return vector.shape_cast(vtype, vector.from_elements(flat, elems))


# Upstream's expansion of the tanh ops this pass leaves (not f32): exp-based arithmetic instead of libm's tanh.
EXPAND_OTHER_TANH = "math-expand-ops{ops=tanh}"


def approximate(root):
    """Replace every f32 math.exp/log/tanh under root by its polynomial and every vector LIBM_ONLY op by
    scalar ones;
    returns (how many were replaced, whether a tanh of another type is left)."""
    ops, libm, other_tanh = [], [], []

    def visit(op):  # one walk finds all three kinds: the rewrites below make none of them
        name = op.name
        if name in APPROXIMATIONS:
            if _is_f32(op.results[0].type):
                ops.append(op)
            elif name == "math.tanh":
                other_tanh.append(op)
        elif name in LIBM_ONLY and isinstance(op.results[0].type, ir.VectorType):
            libm.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            new = APPROXIMATIONS[op.name](Builder(op.results[0].type), op.operands[0])
        op.results[0].replace_all_uses_with(new)
        op.erase()
    for op in libm:
        with ir.InsertionPoint(op), op.location:
            new = scalarize(op)
        op.results[0].replace_all_uses_with(new)
        op.erase()
    return len(ops), bool(other_tanh)


@register("tfn-polynomial-approximation",
          "Rewrite f32 math.exp/log/tanh into vectorisable Cephes-style polynomials (arith + math.fma); other tanh "
          "into exp-based arithmetic (math-expand-ops)")
def polynomial_approximation(module_op):
    _, other_tanh = approximate(module_op)
    if other_tanh:
        run_pipeline(EXPAND_OTHER_TANH, module_op)
