"""tfn-vectorize-elementwise: compute-heavy elementwise kernels as vector loops (64 lanes with AVX-512) agree with
NumPy."""
import re

import numpy as np
import pytest

import tfn

RNG = np.random.default_rng(11)
LANES = tfn.config.get_target().vector_bits // 8  # the pass's default: four vector registers of f32 lanes


def _heavy(x):
    return tfn.tanh(tfn.exp(x * 0.5) - 1.0) * 2.0


def _heavy_np(x):
    half, one, two = (np.asarray(v, x.dtype) for v in (0.5, 1.0, 2.0))
    return np.tanh(np.exp(x * half) - one) * two


def _check(f, x, rtol=2e-6, atol=1e-6):
    got = f(x).numpy()
    want = _heavy_np(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# around the vector width (64 with AVX-512) and the partial last tile; rows shorter than LANES are left to LLVM
@pytest.mark.parametrize("shape", [(64,), (65,), (1000,), (3, 130), (7, 7, 200), (130, 3), (0,), (2, 0, 100)])
def test_static_shapes_match_numpy(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    f = tfn.function(_heavy)
    _check(f, x)
    vectorised = re.search(rf"vector<(1x)*{LANES}xf32>", f.get_concrete_function(x).ir("bufferized")) is not None
    if x.size:  # an empty tensor's kernel folds away
        assert vectorised == (shape[-1] >= LANES)


def test_dynamic_length_uses_masked_tiles():
    f = tfn.function(_heavy, input_signature=[tfn.TensorSpec([None], tfn.float32)])
    for n in (1, 5, 63, 64, 100, 1001):
        _check(f, RNG.standard_normal(n).astype(np.float32))
    assert "vector.create_mask" in f.get_concrete_function().ir("bufferized")


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float16, 2e-3)])
def test_other_float_types(dtype, tol):
    x = RNG.standard_normal(1000).astype(dtype)
    _check(tfn.function(_heavy), x, rtol=tol, atol=tol)


def test_special_values_survive_the_vector_path():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0, 1e-30] * 20, np.float32)
    _check(tfn.function(_heavy), x)


def test_broadcast_operands_and_comparisons():
    a = RNG.standard_normal((50, 200)).astype(np.float32)
    b = RNG.standard_normal(200).astype(np.float32)
    c = RNG.standard_normal((50, 1)).astype(np.float32)

    @tfn.function
    def f(a, b, c):
        y = tfn.exp(a + b) * tfn.tanh(b) - tfn.exp(a - c)
        return y, tfn.where(y > 0.5, tfn.tanh(y), y * 2.0), tfn.exp(a) > 1.5

    y, w, m = f(a, b, c)
    want = np.exp(a + b) * np.tanh(b) - np.exp(a - c)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.numpy(), np.where(want > 0.5, np.tanh(want), want * 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m.numpy(), np.exp(a) > 1.5)


def test_long_integer_chain():
    def chain(x):
        for i in range(20):
            x = x * 3 + 1 if i % 2 else x - 7
        return x

    x = RNG.integers(-100, 100, 1000).astype(np.int32)
    f = tfn.function(chain)
    np.testing.assert_array_equal(f(x).numpy(), chain(x))
    # no transcendental math: twice the lanes, to hide the latency of the dependent ops
    assert f"vector<{2 * LANES}xi32>" in f.get_concrete_function(x).ir("bufferized")


@pytest.mark.parametrize("n", [1000, 1024, 4 * LANES + 1])
def test_arithmetic_chain_full_tiles_unmasked(n):
    """The bench's 50-op chain: full tiles are plain vector reads and writes, only a peeled last tile is masked."""
    def chain(x):
        for i in range(50):
            k = i % 4
            x = x * 0.999 if k == 0 else x + 0.001 if k == 1 else x - 0.0005 if k == 2 else x / 1.0001
        return x

    x = RNG.random(n, dtype=np.float32) + 0.5
    f = tfn.function(chain)
    np.testing.assert_allclose(f(x).numpy(), chain(x.astype(np.float64)), rtol=2e-6)
    ir = f.get_concrete_function(x).ir("bufferized")
    assert f"vector<{2 * LANES}xf32>" in ir
    assert ir.count("vector.create_mask") + ir.count("vector.constant_mask") == (n % (2 * LANES) != 0)


def test_long_arithmetic_body_keeps_the_lanes_and_one_masked_loop():
    """Past LONG_BODY_OPS ops the body is neither widened nor peeled (compile time): one loop of masked tiles."""
    def chain(x):
        for i in range(200):
            x = x * 0.999 if i % 2 else x + 0.001
        return x

    x = RNG.random(1000, dtype=np.float32) + 0.5
    f = tfn.function(chain)
    np.testing.assert_allclose(f(x).numpy(), chain(x.astype(np.float64)), rtol=1e-5)
    ir = f.get_concrete_function(x).ir("bufferized")
    assert f"vector<{LANES}xf32>" in ir and f"vector<{2 * LANES}xf32>" not in ir
    assert ir.count("scf.for") == 1 and "vector.create_mask" in ir
