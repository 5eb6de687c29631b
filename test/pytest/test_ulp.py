"""float32 accuracy of the approximated math functions, eager and compiled: at most 1 ulp, 0.5 ulp on average, over
every float32 exponent (subnormals, huge values, +-inf, nan) and densely over each function's busy range."""
import math

import numpy as np
import pytest

import tfn
from tfn.passes import target

RNG = np.random.default_rng(20)
_ERF = np.frompyfunc(math.erf, 1, 1)


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# name -> (public function, float64 reference, the range where the function is neither constant nor x itself)
FUNCTIONS = {
    "exp": (tfn.exp, np.exp, (-104, 89)),
    "log": (tfn.math.log, np.log, (0, 4)),
    "tanh": (tfn.tanh, np.tanh, (-9, 9)),
    "sigmoid": (tfn.sigmoid, _sigmoid, (-104, 17)),
    "log1p": (tfn.math.log1p, np.log1p, (-1, 4)),
    "expm1": (tfn.math.expm1, np.expm1, (-17, 89)),
    "erf": (tfn.math.erf, lambda x: np.asarray(_ERF(x), np.float64), (-4, 4)),
    "softplus": (tfn.math.softplus, _softplus, (-104, 17)),
}


def whole_range(per_exponent=256):
    """Random float32 values of every exponent (0..255) and sign, then 0, +-inf, nan and the extremes."""
    exponents = np.repeat(np.arange(256, dtype=np.uint32), per_exponent)
    signs = RNG.integers(0, 2, exponents.size, dtype=np.uint32)
    bits = (signs << 31) | (exponents << 23) | RNG.integers(0, 1 << 23, exponents.size, dtype=np.uint32)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38]
    return np.concatenate([bits.view(np.float32), np.array(edges, np.float32)])


def ulp_errors(got, want):
    """|got - want| in ulps of the float32 nearest want (float64); specials must match exactly (nan, +-inf)."""
    got, want = got.astype(np.float64), np.asarray(want, np.float64)
    with np.errstate(over="ignore"):
        want32 = want.astype(np.float32).astype(np.float64)
    exact = np.isnan(want) | np.isinf(want32)
    np.testing.assert_array_equal(np.isnan(got[exact]), np.isnan(want[exact]))
    np.testing.assert_array_equal(got[exact & ~np.isnan(want)], want32[exact & ~np.isnan(want)])
    got, want = got[~exact], want[~exact]
    assert np.all(np.isfinite(got)), "an overflow where the result is finite"
    exponent = np.maximum(np.frexp(np.abs(want))[1] - 1, -126)
    return np.abs(got - want) / np.ldexp(1.0, exponent - 23)


SAMPLES = {name: np.concatenate([whole_range(), RNG.uniform(*busy, 100_000).astype(np.float32)])
           for name, (_, _, busy) in FUNCTIONS.items()}


@pytest.fixture(scope="module")
def compiled():
    """Every function's results on its samples from one compiled function."""
    names = sorted(FUNCTIONS)
    f = tfn.function(lambda *xs: [FUNCTIONS[n][0](x) for n, x in zip(names, xs)])
    return dict(zip(names, (r.numpy() for r in f(*(SAMPLES[n] for n in names)))))


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_within_one_ulp(name, mode, compiled):
    fn, reference, busy = FUNCTIONS[name]
    x = SAMPLES[name]
    got = fn(x).numpy() if mode == "eager" else compiled[name]
    with np.errstate(all="ignore"):
        want = reference(x.astype(np.float64))
    err = ulp_errors(got, want)
    busy_err = ulp_errors(got[-100_000:], want[-100_000:])
    with np.errstate(over="ignore"):
        worst = x[~(np.isnan(want) | np.isinf(want.astype(np.float32)))][np.argmax(err)]
    assert err.max() <= 1.0, f"{name} {mode}: {err.max():.3f} ulp at x={worst!r}"
    assert busy_err.mean() <= 0.5, f"{name} {mode}: mean {busy_err.mean():.3f} ulp on {busy}"


def _specials(v):
    return tfn.tanh(v), tfn.sigmoid(v), tfn.math.expm1(v), tfn.math.log1p(v), tfn.math.erf(v)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_special_values_are_exact(mode):
    """Saturation to +-1 / 0 / 1, -0.0 kept, nan propagated, as TF (and libm) give them."""
    x = np.array([-0.0, 0.0, 9.1, -9.1, 50, -50, 3e38, -3e38, np.inf, -np.inf, np.nan], np.float32)
    fn = _specials if mode == "eager" else tfn.function(_specials)
    tanh, sigmoid, expm1, log1p, erf = [r.numpy() for r in fn(x)]
    np.testing.assert_array_equal(tanh, [-0.0, 0, 1, -1, 1, -1, 1, -1, 1, -1, np.nan])
    np.testing.assert_array_equal(sigmoid[[0, 4, 6, 7, 8, 9, 10]], [0.5, 1, 1, 0, 1, 0, np.nan])
    np.testing.assert_array_equal(erf, [-0.0, 0, 1, -1, 1, -1, 1, -1, 1, -1, np.nan])
    np.testing.assert_array_equal(expm1[[5, 6, 7, 8, 9, 10]], [-1, np.inf, -1, np.inf, -1, np.nan])
    np.testing.assert_array_equal(log1p[[6, 7, 8, 9, 10]], [np.log1p(np.float32(3e38)), np.nan, np.inf, np.nan, np.nan])
    for r in (tanh, expm1, log1p, erf):
        assert np.signbit(r[0]) and not np.signbit(r[1])


def test_tanh_iteration_matches_float64():
    """x = tanh(x), 34 times: with every step within one ulp the float32 orbit stays within a few ulp of float64's
    (Eigen's rational tanh, 4.6 ulp and biased, drifted by tens)."""
    x0 = np.linspace(-3, 3, 61, dtype=np.float32)

    @tfn.function
    def orbit(x):
        for _ in range(34):
            x = tfn.tanh(x)
        return x

    want = x0.astype(np.float64)
    for _ in range(34):
        want = np.tanh(want)
    assert ulp_errors(orbit(x0).numpy(), want).max() <= 4  # correctly rounded steps: 2.4


@pytest.mark.parametrize("level", ["native", "avx2"])
@pytest.mark.parametrize("name,lo,hi", [("exp", -86.5, 88.0), ("tanh", -0.55, 0.55)])
def test_vector_short_paths_give_the_full_recipes_bits(name, lo, hi, level, monkeypatch):
    """A vector whose lanes all lie where exp (normal results) or tanh (the polynomial alone) has a short path takes
    it: same bits as the same lanes in vectors that take the whole recipe (one lane in 16 outside the range), within
    1 ulp, and the range's edges and -0.0 included."""
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    fn, reference, _ = FUNCTIONS[name]
    edges = np.array([lo, np.nextafter(np.float32(hi), np.float32(0)) if name == "tanh" else hi, -0.0, 0.0], np.float32)
    x = np.concatenate([np.sort(RNG.uniform(lo, hi, 1 << 16).astype(np.float32)), edges])
    forced = x.copy()
    forced[::16] = 100.0  # past both short paths' ranges, in every vector
    f = tfn.function(fn)
    short, full = f(x).numpy(), f(forced).numpy()
    keep = np.ones(x.size, bool)
    keep[::16] = False
    np.testing.assert_array_equal(short[keep].view(np.uint32), full[keep].view(np.uint32))
    err = ulp_errors(short, reference(x.astype(np.float64)))
    assert err.max() <= 1.0 and err.mean() <= 0.5, (err.max(), err.mean())
    if name == "tanh":
        assert np.signbit(short[-2]) and not np.signbit(short[-1])  # tanh(-0.0) = -0.0
    else:
        assert short[-2] == short[-1] == 1.0
