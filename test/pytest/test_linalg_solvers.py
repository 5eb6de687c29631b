"""tf.linalg's det, slogdet, logdet, inv, solve, cholesky, triangular_solve and cholesky_solve: eagerly and compiled
against NumPy (float32 to its rounding, float64 closely), batches, TF's errors, and TF's gradients checked by central
differences."""
import numpy as np
import pytest
from opcheck import central_differences

import tfn

RNG = np.random.default_rng(11)
A = RNG.normal(size=(3, 5, 5))
B = RNG.normal(size=(3, 5, 2))
SPD = A @ A.transpose(0, 2, 1) + 5 * np.eye(5)
LOW = np.linalg.cholesky(SPD)


def _both(fn, *args):
    tensors = [tfn.constant(a) for a in args]
    return fn(*tensors).numpy(), tfn.function(fn)(*tensors).numpy()


CASES = {
    "det": (tfn.linalg.det, np.linalg.det, [A]),
    "slogdet": (lambda a: tfn.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], [A]),
    "slogdet_sign": (lambda a: tfn.linalg.slogdet(a)[0], lambda a: np.linalg.slogdet(a)[0], [A]),
    "logdet": (tfn.linalg.logdet, lambda a: np.linalg.slogdet(a)[1], [SPD]),
    "inv": (tfn.linalg.inv, np.linalg.inv, [A]),
    "inv_adjoint": (lambda a: tfn.linalg.inv(a, adjoint=True), lambda a: np.linalg.inv(a.transpose(0, 2, 1)), [A]),
    "solve": (tfn.linalg.solve, np.linalg.solve, [A, B]),
    "solve_adjoint": (lambda a, b: tfn.linalg.solve(a, b, adjoint=True),
                      lambda a, b: np.linalg.solve(a.transpose(0, 2, 1), b), [A, B]),
    "cholesky": (tfn.linalg.cholesky, np.linalg.cholesky, [SPD]),
    "triangular_solve": (tfn.linalg.triangular_solve, np.linalg.solve, [LOW, B]),
    "triangular_solve_adjoint": (lambda a, b: tfn.linalg.triangular_solve(a, b, adjoint=True),
                                 lambda a, b: np.linalg.solve(a.transpose(0, 2, 1), b), [LOW, B]),
    "triangular_solve_upper": (lambda a, b: tfn.linalg.triangular_solve(a, b, lower=False),
                               lambda a, b: np.linalg.solve(np.triu(a), b), [LOW.transpose(0, 2, 1), B]),
    "cholesky_solve": (tfn.linalg.cholesky_solve, lambda c, b: np.linalg.solve(c @ c.transpose(0, 2, 1), b),
                       [LOW, B]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values(name, dtype):
    fn, ref, args = CASES[name]
    args = [a.astype(dtype) for a in args]
    want = ref(*[a.astype(np.float64) for a in args])
    rtol = 1e-5 if dtype == np.float32 else 1e-11  # float32: the float32 inputs' own conditioning
    for got in _both(fn, *args):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_a_single_matrix_and_a_triangle_read_only():
    a = np.array([[4.0, 99.0], [2.0, 3.0]])
    np.testing.assert_allclose(tfn.linalg.cholesky(a @ a.T * 0 + [[4.0, 99.0], [2.0, 5.0]]).numpy(),
                               [[2.0, 0.0], [1.0, 2.0]])
    np.testing.assert_allclose(tfn.linalg.triangular_solve(a, [[4.0], [8.0]]).numpy(), [[1.0], [2.0]])
    np.testing.assert_allclose(tfn.linalg.det([[0.0, 1.0], [1.0, 0.0]]).numpy(), -1.0)


def test_singular_and_not_positive_definite():
    singular = np.ones((2, 2))
    assert tfn.linalg.det(singular).numpy() == 0.0
    sign, log = tfn.linalg.slogdet(singular)
    assert sign.numpy() == 0.0 and log.numpy() == -np.inf
    for fn in (tfn.linalg.inv, tfn.function(tfn.linalg.inv)):
        with pytest.raises(tfn.errors.InvalidArgumentError, match="Input is not invertible"):
            fn(tfn.constant(singular))
    for fn in (tfn.linalg.cholesky, tfn.function(tfn.linalg.cholesky)):
        with pytest.raises(tfn.errors.InvalidArgumentError, match="Cholesky decomposition was not successful"):
            fn(tfn.constant(-np.eye(2)))
    with pytest.raises(ValueError, match="square"):
        tfn.linalg.det(np.ones((2, 3)))


GRADS = {
    "det": (tfn.linalg.det, np.linalg.det, [A[0]]),
    "logdet": (lambda a: tfn.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], [A[0]]),
    "inv": (tfn.linalg.inv, np.linalg.inv, [A[:2]]),
    "solve": (tfn.linalg.solve, np.linalg.solve, [A[:2], B[:2]]),
    "solve_adjoint": (lambda a, b: tfn.linalg.solve(a, b, adjoint=True),
                      lambda a, b: np.linalg.solve(a.transpose(0, 2, 1), b), [A[:2], B[:2]]),
    # cholesky reads the lower triangle: the check symmetrises its input, as TF's gradient assumes
    "cholesky": (lambda a: tfn.linalg.cholesky(0.5 * (a + tfn.linalg.matrix_transpose(a))),
                 lambda a: np.linalg.cholesky(0.5 * (a + a.transpose(0, 2, 1))), [SPD[:2]]),
    "triangular_solve": (tfn.linalg.triangular_solve, lambda a, b: np.linalg.solve(np.tril(a), b), [LOW[:2], B[:2]]),
    "triangular_solve_upper_adjoint": (
        lambda a, b: tfn.linalg.triangular_solve(a, b, lower=False, adjoint=True),
        lambda a, b: np.linalg.solve(np.triu(a).transpose(0, 2, 1), b), [LOW[:2].transpose(0, 2, 1), B[:2]]),
    "cholesky_solve": (tfn.linalg.cholesky_solve, lambda c, b: np.linalg.solve(np.tril(c) @ np.tril(c).transpose(
        0, 2, 1), b), [LOW[:2], B[:2]]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_by_central_differences(name):
    fn, ref, args = GRADS[name]
    weights = RNG.normal(size=np.shape(ref(*args)))

    def grads(*xs):
        with tfn.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            loss = tfn.reduce_sum(fn(*xs) * tfn.constant(weights))
        return tape.gradient(loss, list(xs))
    want = central_differences(lambda a: float(np.sum(ref(*a) * weights)), [a.copy() for a in args], 1e-6)
    for got in (grads(*[tfn.constant(a) for a in args]), tfn.function(grads)(*[tfn.constant(a) for a in args])):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_values_are_lapacks(shape, full):
    a = RNG.normal(size=shape)
    want_q, want_r = np.linalg.qr(a, mode="complete" if full else "reduced")
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        for fn in (tfn.linalg.qr, tfn.function(tfn.linalg.qr)):
            q, r = fn(tfn.constant(a.astype(dtype)), full_matrices=full)
            assert q.numpy().dtype == r.numpy().dtype == dtype
            np.testing.assert_allclose(q.numpy(), want_q, rtol=rtol, atol=rtol)
            np.testing.assert_allclose(r.numpy(), want_r, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr_gradient_by_central_differences(shape):
    a = RNG.normal(size=shape)
    wq, wr = (RNG.normal(size=x.shape) for x in np.linalg.qr(a))

    def grads(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            q, r = tfn.linalg.qr(x)
            loss = tfn.reduce_sum(q * wq) + tfn.reduce_sum(r * wr)
        return tape.gradient(loss, x)

    def loss(v):
        q, r = np.linalg.qr(v[0])
        return float(np.sum(q * wq) + np.sum(r * wr))
    want = central_differences(loss, [a.copy()], 1e-6)[0]
    for got in (grads(tfn.constant(a)), tfn.function(grads)(tfn.constant(a))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 9])
def test_eigh_values_vectors(n):
    m = RNG.normal(size=(2, n, n))
    a = np.tril(m) + 100 * np.triu(m, 1)  # only the lower triangle is read
    want_e, want_v = np.linalg.eigh(a, UPLO="L")
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 2e-6)):
        for fn in (tfn.linalg.eigh, tfn.function(tfn.linalg.eigh)):
            e, v = fn(tfn.constant(a.astype(dtype)))
            scale = np.abs(want_e).max()
            np.testing.assert_allclose(e.numpy(), want_e, rtol=rtol, atol=rtol * scale)
            np.testing.assert_allclose(np.abs(v.numpy()), np.abs(want_v), atol=10 * rtol * scale)
        np.testing.assert_allclose(tfn.linalg.eigvalsh(a.astype(dtype)).numpy(), want_e, rtol=rtol, atol=rtol * scale)


def test_eigh_gradient_by_central_differences():
    m = RNG.normal(size=(4, 4))
    a = m + m.T
    we, wv = RNG.normal(size=4), RNG.normal(size=(4, 4))

    def grads(x):
        with tfn.GradientTape(persistent=True) as tape:
            tape.watch(x)
            e, v = tfn.linalg.eigh(x)
            loss = tfn.reduce_sum(e * we) + tfn.reduce_sum(v * v * wv)  # (v * v: the eigenvectors' signs do not matter)
            only_e = tfn.reduce_sum(tfn.linalg.eigvalsh(x) * we)
        return tape.gradient(loss, x), tape.gradient(only_e, x)

    def loss(v):
        e, vec = np.linalg.eigh(v[0], UPLO="L")
        return float(np.sum(e * we) + np.sum(vec * vec * wv))
    want = central_differences(loss, [a.copy()], 1e-6)[0]
    want_e = central_differences(lambda v: float(np.sum(np.linalg.eigh(v[0], UPLO="L")[0] * we)), [a.copy()], 1e-6)[0]
    for got, got_e in (grads(tfn.constant(a)), tfn.function(grads)(tfn.constant(a))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_e.numpy(), want_e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (1, 3), (4, 4), (6, 3), (3, 6), (2, 7, 5)])
def test_svd_values_vectors(shape):
    a = RNG.normal(size=shape)
    want_u, want_s, want_vt = np.linalg.svd(a, full_matrices=False)
    want_v = np.swapaxes(want_vt, -1, -2)
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 2e-6)):
        for fn in (tfn.linalg.svd, tfn.function(tfn.linalg.svd)):
            s, u, v = fn(tfn.constant(a.astype(dtype)))
            np.testing.assert_allclose(s.numpy(), want_s, rtol=rtol, atol=rtol)
            np.testing.assert_allclose(np.abs(u.numpy()), np.abs(want_u), atol=10 * rtol)
            np.testing.assert_allclose(np.abs(v.numpy()), np.abs(want_v), atol=10 * rtol)
        s_only = tfn.linalg.svd(a.astype(dtype), compute_uv=False)
        np.testing.assert_allclose(s_only.numpy(), want_s, rtol=rtol, atol=rtol)
    s, u, v = tfn.linalg.svd(a, full_matrices=True)
    for x, k in ((u, shape[-2]), (v, shape[-1])):
        np.testing.assert_allclose(np.swapaxes(x.numpy(), -1, -2) @ x.numpy(), np.broadcast_to(np.eye(k), x.shape),
                                   atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_gradient_by_central_differences(shape):
    a = RNG.normal(size=shape)
    k = min(shape)
    ws, wu, wv = RNG.normal(size=k), RNG.normal(size=(shape[0], k)), RNG.normal(size=(shape[1], k))

    def grads(x):
        with tfn.GradientTape(persistent=True) as tape:
            tape.watch(x)
            s, u, v = tfn.linalg.svd(x)
            loss = tfn.reduce_sum(s * ws) + tfn.reduce_sum(u * u * wu) + tfn.reduce_sum(v * v * wv)
            only_s = tfn.reduce_sum(tfn.linalg.svd(x, compute_uv=False) * ws)
        return tape.gradient(loss, x), tape.gradient(only_s, x)

    def loss(x):
        u, s, vt = np.linalg.svd(x[0], full_matrices=False)
        return float(np.sum(s * ws) + np.sum(u * u * wu) + np.sum(vt.T * vt.T * wv))
    want = central_differences(loss, [a.copy()], 1e-6)[0]
    want_s = central_differences(lambda x: float(np.sum(np.linalg.svd(x[0], compute_uv=False) * ws)), [a.copy()],
                                 1e-6)[0]
    for got, got_s in (grads(tfn.constant(a)), tfn.function(grads)(tfn.constant(a))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_s.numpy(), want_s, rtol=1e-5, atol=1e-6)
