"""tf.math's guarded divisions and logarithms, lgamma/digamma and the small arithmetic helpers: eagerly and compiled
against NumPy / the math module, TF's values at the guarded points, and gradients (finite where TF's are)."""
import math

import numpy as np
import pytest
from opcheck import central_differences, check

import tfn

X = np.array([0.0, 0.0, 1.5, -2.0, 3.0, np.nan], np.float32)
Y = np.array([0.0, 2.0, 0.0, 4.0, np.e, 0.0], np.float32)


def _where(cond, a, b):
    return np.where(cond, a, b).astype(np.float32)


CASES = {
    "divide_no_nan": lambda x, y: _where(y == 0, 0.0, x / np.where(y == 0, 1, y)),
    "multiply_no_nan": lambda x, y: _where(y == 0, 0.0, x * y),
    "xlogy": lambda x, y: _where(x == 0, 0.0, x * np.log(np.where(x == 0, 1, y))),
    "xdivy": lambda x, y: _where(x == 0, 0.0, x / np.where(x == 0, 1, y)),
    "xlog1py": lambda x, y: _where(x == 0, 0.0, x * np.log1p(np.where(x == 0, 0, y))),
    "squared_difference": lambda x, y: np.square(x - y),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_guarded_binary(name):
    with np.errstate(all="ignore"):  # (the reference divides by 0 where its result is not taken)
        check(getattr(tfn.math, name), CASES[name], X, Y)


@pytest.mark.parametrize("name", ["divide_no_nan", "xlogy", "xdivy", "xlog1py", "multiply_no_nan"])
def test_guarded_gradients_are_finite_at_the_guard(name):
    x = tfn.constant([0.0, 2.0, 1.0])
    y = tfn.constant([0.0, 0.0, 3.0])

    def grads(x, y):
        with tfn.GradientTape() as tape:
            tape.watch([x, y])
            z = tfn.reduce_sum(getattr(tfn.math, name)(x, y))
        return tape.gradient(z, [x, y])
    for gx, gy in (grads(x, y), tfn.function(grads)(x, y)):
        assert np.all(np.isfinite(gx.numpy()[[0]])) and np.all(np.isfinite(gy.numpy()[[0]]))
    want = central_differences(lambda a: float(np.sum(CASES[name](*[v.astype(np.float32) for v in a]))),
                               [np.array([1.0]), np.array([3.0])], 1e-3)
    gx, gy = grads(tfn.constant([1.0]), tfn.constant([3.0]))
    np.testing.assert_allclose([gx.numpy()[0], gy.numpy()[0]], [want[0][0], want[1][0]], rtol=2e-3)


def test_small_helpers():
    x = np.array([2.0, -0.5, 4.0], np.float32)
    check(tfn.math.reciprocal, lambda x: 1 / x, x)
    check(tfn.math.reciprocal_no_nan, lambda x: np.where(x == 0, 0, 1 / np.where(x == 0, 1, x)).astype(np.float32),
          np.array([0.0, 2.0], np.float32))
    check(lambda x: tfn.math.scalar_mul(3.0, x), lambda x: 3 * x, x)
    check(tfn.math.rint, np.rint, np.array([0.5, 1.5, 2.5, -0.5, -1.7, 3.2], np.float32))
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    check(tfn.math.logical_xor, np.logical_xor, a, b)
    i, j = np.array([-7, 7, -7, 7, 6], np.int32), np.array([2, 2, -2, -2, 3], np.int32)
    check(tfn.truncatediv, lambda a, b: np.trunc(a / b).astype(np.int32), i, j)
    check(tfn.truncatemod, np.fmod, i, j)
    check(tfn.truncatemod, np.fmod, i.astype(np.float32) + 0.5, j.astype(np.float32))
    check(tfn.realdiv, np.true_divide, x, x[::-1].copy())
    with pytest.raises(ValueError, match="Only scalar multiply"):
        tfn.math.scalar_mul([1.0, 2.0], x)


def test_lgamma_digamma_values():
    xs = np.array([-2.5, -0.3, 1e-3, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 100.0, 1e10], np.float64)
    want = np.array([math.lgamma(v) for v in xs])
    for f in (tfn.math.lgamma, tfn.function(tfn.math.lgamma)):
        np.testing.assert_allclose(f(tfn.constant(xs)).numpy(), want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(f(tfn.constant(xs.astype(np.float32))).numpy(), want.astype(np.float32),
                                   rtol=2e-7)
    special = tfn.math.lgamma(tfn.constant([0.0, -3.0, np.inf, -np.inf, np.nan])).numpy()
    np.testing.assert_array_equal(special, [np.inf, np.inf, np.inf, np.inf, np.nan])
    # digamma: exact values (Euler's gamma, harmonic numbers) and the recurrence digamma(x + 1) = digamma(x) + 1/x
    euler = 0.5772156649015329
    exact = {1.0: -euler, 0.5: -euler - 2 * math.log(2), 5.0: 1 + 1 / 2 + 1 / 3 + 1 / 4 - euler}
    xs = np.array([-2.7, -0.3, 1e-3, 0.7, 3.3, 17.5, 1e4])
    for f in (tfn.math.digamma, tfn.function(tfn.math.digamma)):
        np.testing.assert_allclose(f(tfn.constant(list(exact), tfn.float64)).numpy(), list(exact.values()), rtol=1e-13)
        np.testing.assert_allclose(f(tfn.constant(xs + 1)).numpy(), f(tfn.constant(xs)).numpy() + 1 / xs,
                                   rtol=1e-12, atol=1e-12)
    assert np.isnan(tfn.math.digamma(tfn.constant([0.0, -2.0])).numpy()).all()


def test_lgamma_digamma_gradients():
    xs = np.array([-2.5, 0.7, 3.2, 12.0])

    def grads(x):
        with tfn.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = tfn.reduce_sum(tfn.math.lgamma(x)), tfn.reduce_sum(tfn.math.digamma(x))
        return tape.gradient(a, x), tape.gradient(b, x)
    h = 1e-5
    digamma = tfn.math.digamma(tfn.constant(xs)).numpy()
    psi = tfn.math.digamma
    trigamma = (psi(tfn.constant(xs + h)).numpy() - psi(tfn.constant(xs - h)).numpy()) / (2 * h)
    for ga, gb in (grads(tfn.constant(xs)), tfn.function(grads)(tfn.constant(xs))):
        np.testing.assert_allclose(ga.numpy(), digamma, rtol=1e-12)
        np.testing.assert_allclose(gb.numpy(), trigamma, rtol=1e-6)


def test_counting():
    check(lambda a: tfn.math.bincount(a, minlength=9), lambda a: np.bincount(a, minlength=9).astype(np.int32),
          np.array([1, 1, 3, 0, 7], np.int32))
    w = np.array([0.5, 0.25, 1.0, 2.0, 1.0], np.float32)
    check(lambda a, w: tfn.math.bincount(a, weights=w, maxlength=4),
          lambda a, w: np.bincount(a, weights=w)[:4].astype(np.float32), np.array([1, 1, 3, 0, 7], np.int32), w)
    check(lambda a: tfn.math.bincount(a, axis=-1), lambda a: np.array([[0, 1, 1], [0, 0, 2]], np.int32),
          np.array([[1, 2], [2, 2]], np.int32))
    check(lambda a, b: tfn.math.confusion_matrix(a, b, num_classes=4),
          lambda a, b: np.histogram2d(a, b, bins=4, range=[[0, 4], [0, 4]])[0].astype(np.int32),
          np.array([1, 2, 3, 3], np.int32), np.array([2, 2, 3, 0], np.int32))
    for fn in (tfn.math.bincount, tfn.function(tfn.math.bincount)):
        with pytest.raises(tfn.errors.InvalidArgumentError, match="non-negative"):
            fn(tfn.constant([1, -1]))
    pred = np.array([[0.1, 0.9, 0.9], [0.5, 0.4, 0.3], [1.0, 2.0, 3.0], [np.nan, 1.0, 2.0]], np.float32)
    check(lambda t, p: tfn.math.in_top_k(t, p, 1), lambda t, p: np.array([True, True, False, False]),  # (a tie is in)
          np.array([1, 0, 5, 2], np.int32), pred)
    check(tfn.math.invert_permutation, np.argsort, np.array([3, 4, 0, 2, 1], np.int32))
    check(tfn.math.zero_fraction, lambda x: np.float32(np.mean(x == 0)), np.array([[0, 1.0], [0, 0]], np.float32))
    check(tfn.math.is_non_decreasing, lambda x: np.all(np.diff(x.ravel()) >= 0), np.array([[1, 2], [2, 5]]))
    check(tfn.math.is_strictly_increasing, lambda x: np.all(np.diff(x.ravel()) > 0), np.array([[1, 2], [2, 5]]))
    check(lambda x: tfn.math.reduce_euclidean_norm(x, 1), lambda x: np.sqrt((x * x).sum(1)),
          np.array([[3.0, 4.0], [1.0, 1.0]], np.float32))


def test_aliases():
    assert tfn.math.softmax is tfn.nn.softmax and tfn.math.log_softmax is tfn.nn.log_softmax
    assert tfn.math.softsign is tfn.nn.softsign and tfn.linalg.l2_normalize is tfn.nn.l2_normalize
    assert tfn.newaxis is None and tfn.no_op() is None and tfn.group() is None
    assert tfn.broadcast_static_shape(tfn.TensorShape([2, 1]), tfn.TensorShape([3])).as_list() == [2, 3]
    np.testing.assert_array_equal(tfn.broadcast_dynamic_shape([2, 1], [3]).numpy(), [2, 3])
    assert tfn.get_static_value(tfn.constant([1, 2])).tolist() == [1, 2]
    seen = []

    @tfn.function
    def traced(x):
        seen.append((tfn.get_static_value(x), tfn.get_static_value(tfn.constant([1, 2]) * 2).tolist()))
        return x
    traced(tfn.constant(1.0))
    assert seen == [(None, [2, 4])]  # a traced argument is not known; constants and ops on them are
    check(lambda e: tfn.foldl(lambda a, x: a * 10 + x, e), lambda e: np.int32(123), np.array([1, 2, 3], np.int32))
    check(lambda e: tfn.foldr(lambda a, x: a * 10 + x, e, initializer=tfn.constant(0)), lambda e: np.int32(321),
          np.array([1, 2, 3], np.int32))


def test_erfinv_ndtri():
    y = np.array([-0.999999, -0.7, -0.3, 0.0, 1e-8, 0.2, 0.5, 0.9, 0.99999999, 1 - 1e-15])
    p = np.array([1e-300, 1e-30, 1e-10, 0.001, 0.3, 0.5, 0.8, 1 - 1e-10])
    for erfinv, ndtri in ((tfn.math.erfinv, tfn.math.ndtri), (tfn.function(tfn.math.erfinv),
                                                              tfn.function(tfn.math.ndtri))):
        x = erfinv(tfn.constant(y)).numpy()
        np.testing.assert_allclose([math.erfc(v) for v in x], 1 - y, rtol=1e-13)  # (erfc: the tails' precision)
        z = ndtri(tfn.constant(p)).numpy()
        np.testing.assert_allclose([0.5 * math.erfc(-v / math.sqrt(2)) for v in z], p, rtol=1e-12)
        x32 = erfinv(tfn.constant(y[1:-2].astype(np.float32))).numpy()
        np.testing.assert_allclose(x32, x[1:-2], rtol=2e-7, atol=1e-15)
    np.testing.assert_array_equal(tfn.math.erfinv(tfn.constant([-1.0, 1.0, 1.5, np.nan])).numpy(),
                                  [-np.inf, np.inf, np.nan, np.nan])
    np.testing.assert_array_equal(tfn.math.ndtri(tfn.constant([0.0, 1.0, -0.5])).numpy(), [-np.inf, np.inf, np.nan])

    def grads(a, b):
        with tfn.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            u, v = tfn.reduce_sum(tfn.math.erfinv(a)), tfn.reduce_sum(tfn.math.ndtri(b))
        return tape.gradient(u, a), tape.gradient(v, b)
    a, b = np.array([-0.9, 0.1, 0.6]), np.array([0.01, 0.4, 0.97])
    want_a = [(tfn.math.erfinv(v + 1e-6) - tfn.math.erfinv(v - 1e-6)).numpy() / 2e-6 for v in a]
    want_b = [(tfn.math.ndtri(v + 1e-7) - tfn.math.ndtri(v - 1e-7)).numpy() / 2e-7 for v in b]
    for ga, gb in (grads(tfn.constant(a), tfn.constant(b)), tfn.function(grads)(tfn.constant(a), tfn.constant(b))):
        np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-6)
        np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-6)
