"""tan, the inverse and hyperbolic trigonometric functions, erfc and atan2: eagerly and compiled against Python's
math module (float64, rounded once), over sizes the vectoriser takes, and their gradients by central differences."""
import math

import numpy as np
import pytest
from opcheck import central_differences

import tfn

UNARY = {"atan": (math.atan, -20, 20), "asin": (math.asin, -1, 1), "acos": (math.acos, -1, 1),
         "tan": (math.tan, -1.5, 1.5), "sinh": (math.sinh, -80, 80), "cosh": (math.cosh, -80, 80),
         "asinh": (math.asinh, -1e4, 1e4), "acosh": (math.acosh, 1, 1e4), "atanh": (math.atanh, -0.999, 0.999),
         "erfc": (math.erfc, -4, 9)}


def _reference(fn, x):
    return np.array([fn(float(v)) for v in x.ravel()], np.float64).reshape(x.shape)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_correctly_rounded_eager_and_compiled(name, dtype):
    fn, lo, hi = UNARY[name]
    x = np.linspace(lo, hi, 1037).astype(dtype)  # odd length: vector body and remainder
    want = _reference(fn, x).astype(dtype)
    op = getattr(tfn.math, name)
    for got in (op(tfn.constant(x)).numpy(), tfn.function(op)(tfn.constant(x)).numpy()):
        np.testing.assert_array_max_ulp(got, want, maxulp=1)  # NumPy's and libm's float64 differ by 1 ulp at most


def test_top_level_exports():
    for name in ("atan", "asin", "acos", "tan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2"):
        assert getattr(tfn, name) is getattr(tfn.math, name)
    assert not hasattr(tfn, "erfc")  # TF exports erfc under tf.math only


def test_edge_values():
    x = tfn.constant([np.nan, np.inf, -np.inf, 2.0, -0.0], tfn.float32)
    np.testing.assert_array_equal(tfn.math.asin(x).numpy(), [np.nan, np.nan, np.nan, np.nan, -0.0])
    np.testing.assert_array_equal(tfn.math.atan(x).numpy(), np.arctan(x.numpy()))
    np.testing.assert_array_equal(tfn.math.erfc(x).numpy(), np.float32([np.nan, 0.0, 2.0, math.erfc(2.0), 1.0]))
    np.testing.assert_array_equal(tfn.function(tfn.math.cosh)(x).numpy(), np.cosh(x.numpy()))
    with pytest.raises(tfn.errors.InvalidArgumentError):
        tfn.math.atan(tfn.constant([1, 2]))


def test_atan2_quadrants_and_broadcasting():
    rng = np.random.default_rng(3)
    y = rng.normal(size=(64, 33)).astype(np.float32)
    x = rng.normal(size=(33,)).astype(np.float32)
    y[0, :4], x[:4] = [0.0, -0.0, 0.0, -0.0], [0.0, 0.0, -1.0, -1.0]
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(tfn.atan2(y, x).numpy(), want)
    np.testing.assert_array_equal(tfn.function(tfn.math.atan2)(tfn.constant(y), tfn.constant(x)).numpy(), want)
    np.testing.assert_array_equal(tfn.math.atan2(x=x, y=y).numpy(), want)  # TF's keywords: y first


@pytest.mark.parametrize("name", sorted(UNARY) + ["atan2"])
def test_gradients_by_central_differences(name):
    rng = np.random.default_rng(5)
    lo, hi = (-2.0, 2.0) if name == "atan2" else (UNARY[name][1], UNARY[name][2])
    lo, hi = max(lo, -3.0), min(hi, 3.0)
    if name == "acosh":
        lo, hi = 1.2, 3.0
    shrink = 0.9 if name in ("asin", "acos", "atanh") else 1.0
    args = [(rng.uniform(lo, hi, size=(2, 3)) * shrink).astype(np.float64) for _ in range(2 if name == "atan2" else 1)]
    op = getattr(tfn.math, name)

    def grads(*xs):
        with tfn.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            loss = tfn.reduce_sum(op(*xs) * tfn.constant(np.arange(6.0).reshape(2, 3)))
        return tape.gradient(loss, list(xs))

    weights = np.arange(6.0).reshape(2, 3)
    want = central_differences(lambda a: float(np.sum(_apply(name, a) * weights)), args, 1e-6)
    for got in (grads(*[tfn.constant(a) for a in args]),
                tfn.function(grads)(*[tfn.constant(a) for a in args])):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-6)


def _apply(name, args):
    if name == "atan2":
        return np.arctan2(*args)
    return _reference(UNARY[name][0], args[0])


def test_gpu_kernels_emulated():
    """The GPU pipeline (run on the CPU by tfn-gpu-emulate) takes the libm functions too."""
    from test_gpu_emulate import X, Y, _run
    got = _run(lambda x, y: tfn.math.atan2(x, y) + tfn.math.asinh(x) + tfn.math.erfc(y) + tfn.math.cosh(x * 0.1),
               [X, Y])
    x, y = X.astype(np.float64), Y.astype(np.float64)
    want = np.arctan2(x, y) + np.arcsinh(x) + _reference(math.erfc, y) + np.cosh(x * 0.1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
