"""tf.tensordot, tf.norm, tf.linalg.matvec / cross / matrix_transpose / adjoint / tensor_diag / tensor_diag_part:
eagerly and compiled against NumPy, TF's argument errors, and gradients by central differences."""
import numpy as np
import pytest
from opcheck import central_differences, check

import tfn

RNG = np.random.default_rng(4)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)
Y = RNG.normal(size=(5, 4, 2)).astype(np.float32)


@pytest.mark.parametrize("axes", [0, 1, 2, [[1, 2], [1, 0]], [[2], [0]], ([-1], [-3])])
def test_tensordot(axes):
    a, b = {0: (X[0], Y[0]), 2: (X, Y.transpose(1, 0, 2).copy())}.get(axes if isinstance(axes, int) else -1, (X, Y))
    np_axes = axes if isinstance(axes, int) else tuple(list(x) for x in axes)
    check(lambda a, b: tfn.tensordot(a, b, axes), lambda a, b: np.tensordot(a, b, np_axes), a, b)
    assert tfn.linalg.tensordot is tfn.tensordot


def test_matvec_cross_transpose():
    v = X[:, 0, :]
    check(tfn.linalg.matvec, lambda a, b: np.einsum("bij,bj->bi", a, b), X, v)
    check(lambda a, b: tfn.linalg.matvec(a, b, transpose_a=True), lambda a, b: np.einsum("bji,bj->bi", a, b),
          X, X[:, :, 0])
    check(tfn.linalg.cross, np.cross, X[:, :, :3], X[:, :, 2:])
    check(tfn.linalg.matrix_transpose, lambda a: a.transpose(0, 2, 1), X)
    check(tfn.linalg.adjoint, lambda a: a.transpose(0, 2, 1), X)
    with pytest.raises(ValueError, match="rank >= 2"):
        tfn.linalg.matrix_transpose([1.0, 2.0])


def test_tensor_diag():
    d = X[0, :2, :3]
    full = np.diag(d.ravel()).reshape(2, 3, 2, 3)
    check(tfn.linalg.tensor_diag, lambda d: full, d)
    check(tfn.linalg.tensor_diag_part, lambda t: d, full)
    fn = tfn.function(tfn.linalg.tensor_diag_part, input_signature=[tfn.TensorSpec([None, 3, None, 3], tfn.float32)])
    np.testing.assert_array_equal(fn(full).numpy(), d)


@pytest.mark.parametrize("ord", ["euclidean", 1, 2, np.inf, 3.5])
def test_vector_norms(ord):
    np_ord = 2 if ord == "euclidean" else ord
    check(lambda x: tfn.norm(x, ord), lambda x: np.float32(np.linalg.norm(x.ravel(), np_ord)), X)
    check(lambda x: tfn.norm(x, ord, axis=1), lambda x: np.linalg.norm(x, np_ord, axis=1), X)
    check(lambda x: tfn.linalg.norm(x, ord, axis=-1, keepdims=True),
          lambda x: np.linalg.norm(x, np_ord, axis=-1, keepdims=True), X)


@pytest.mark.parametrize("ord", ["fro", "euclidean", 1, 2, np.inf])
def test_matrix_norms(ord):
    np_ord = "fro" if ord == "euclidean" else ord
    check(lambda x: tfn.norm(x, ord, axis=[1, 2]), lambda x: np.linalg.norm(x, np_ord, axis=(1, 2)), X)
    check(lambda x: tfn.norm(x, ord, axis=(2, 0), keepdims=True),
          lambda x: np.linalg.norm(x, np_ord, axis=(2, 0), keepdims=True), X)


def test_norm_errors():
    with pytest.raises(ValueError, match="supported vector norm"):
        tfn.norm(X, "fro", axis=1)
    with pytest.raises(ValueError, match="supported matrix norm"):
        tfn.norm(X, 3, axis=[0, 1])


def test_gradients():
    a, b = X.astype(np.float64), Y.astype(np.float64)
    cases = [(lambda a, b: tfn.tensordot(a, b, [[1, 2], [1, 0]]), lambda a, b: np.tensordot(a, b, ([1, 2], [1, 0]))),
             (lambda a, b: tfn.norm(a, 3.5, axis=1) + tfn.norm(b, 1), lambda a, b: np.linalg.norm(a, 3.5, axis=1)
              + np.abs(b).sum()),
             (lambda a, b: tfn.norm(a, np.inf, axis=[1, 2]), lambda a, b: np.linalg.norm(a, np.inf, axis=(1, 2)))]
    for fn, ref in cases:
        def grads(a, b, fn=fn):
            with tfn.GradientTape() as tape:
                tape.watch([a, b])
                loss = tfn.reduce_sum(fn(a, b))
            return tape.gradient(loss, [a, b], unconnected_gradients="zero")
        want = central_differences(lambda v, ref=ref: float(np.sum(ref(*v))), [a.copy(), b.copy()], 1e-6)
        for got in (grads(tfn.constant(a), tfn.constant(b)), tfn.function(grads)(tfn.constant(a), tfn.constant(b))):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_lstsq_rank(shape):
    a = RNG.normal(size=shape)
    b = RNG.normal(size=shape[:-1] + (2,))
    check(tfn.linalg.pinv, np.linalg.pinv, a)
    check(tfn.linalg.lstsq, lambda a, b: np.linalg.pinv(a) @ b, a, b)
    check(tfn.linalg.matrix_rank, lambda a: np.linalg.matrix_rank(a).astype(np.int32), a)
    assert int(tfn.linalg.matrix_rank(np.ones((3, 3)))) == 1
    reg = tfn.linalg.lstsq(a, b, l2_regularizer=0.5).numpy()
    at = np.swapaxes(a, -1, -2)
    want = (np.linalg.solve(at @ a + 0.5 * np.eye(shape[-1]), at @ b) if shape[-2] >= shape[-1]
            else at @ np.linalg.solve(a @ at + 0.5 * np.eye(shape[-2]), b))
    np.testing.assert_allclose(reg, want, rtol=1e-10, atol=1e-12)


def test_normalize_and_lstsq_gradient():
    x, n = tfn.linalg.normalize(np.array([[3.0, 4.0], [6.0, 8.0]]), axis=1)
    np.testing.assert_allclose(x.numpy(), [[0.6, 0.8], [0.6, 0.8]])
    np.testing.assert_allclose(n.numpy(), [[5.0], [10.0]])
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))

    def grads(a, b):
        with tfn.GradientTape() as tape:
            tape.watch([a, b])
            loss = tfn.reduce_sum(tfn.sin(tfn.linalg.lstsq(a, b)))
        return tape.gradient(loss, [a, b])
    want = central_differences(lambda v: float(np.sum(np.sin(np.linalg.lstsq(v[0], v[1], rcond=None)[0]))),
                               [a.copy(), b.copy()], 1e-6)
    for got in (grads(tfn.constant(a), tfn.constant(b)), tfn.function(grads)(tfn.constant(a), tfn.constant(b))):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)
