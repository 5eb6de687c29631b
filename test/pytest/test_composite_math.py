"""clip_by_value/norm/global_norm, floor/ceil/round, is_nan/is_inf/is_finite, reduce_logsumexp/variance/std,
count_nonzero, add_n, linspace, meshgrid, sequence_mask: TF's docstring examples, values eager and compiled,
gradients by finite differences, dynamic dims, errors."""
import numpy as np
import pytest
from composite_cases import case_tests

import tfn

RNG = np.random.default_rng(3)
X = RNG.uniform(-3, 3, (3, 4))
V = RNG.uniform(-2, 2, (4,))


def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _clip_norm(x, c):
    n = np.sqrt(np.sum(x * x))
    return x * c / max(n, c)


# name: (function of tensors, NumPy reference, inputs, differentiable)
CASES = {
    "clip_by_value": (lambda x: tfn.clip_by_value(x, -1.5, 2.0), lambda x: np.clip(x, -1.5, 2.0), [X], True),
    "clip_by_value_tensor_bounds": (lambda x, lo: tfn.clip_by_value(x, lo, 2.5), lambda x, lo: np.clip(x, lo, 2.5),
                                    [X, np.array([[-1.0], [0.5], [-2.5]])], True),
    "clip_by_norm": (lambda x: tfn.clip_by_norm(x, 2.0), lambda x: _clip_norm(x, 2.0), [X], True),
    "clip_by_norm_axes": (lambda x: tfn.clip_by_norm(x, 2.0, axes=[1]),
                          lambda x: x * 2.0 / np.maximum(np.sqrt(np.sum(x * x, 1, keepdims=True)), 2.0), [X], True),
    "clip_by_global_norm": (lambda x, v: tfn.clip_by_global_norm([x, v], 3.0)[0][1],
                            lambda x, v: v * 3.0 / max(np.sqrt(np.sum(x * x) + np.sum(v * v)), 3.0), [X, V], True),
    "global_norm": (lambda x, v: tfn.linalg.global_norm([x, v]),
                    lambda x, v: np.sqrt(np.sum(x * x) + np.sum(v * v)), [X, V], True),
    "floor": (tfn.floor, np.floor, [X], False),
    "ceil": (tfn.math.ceil, np.ceil, [X], False),
    "round": (tfn.round, np.round, [np.array([-2.5, -1.5, -0.5, -0.4, 0.5, 1.5, 2.5, 2.6, 3.49, 1e17])], False),
    "reduce_logsumexp": (tfn.reduce_logsumexp, _lse, [X * 30], True),
    "reduce_logsumexp_axis": (lambda x: tfn.math.reduce_logsumexp(x, 1, keepdims=True),
                              lambda x: _lse(x, 1, True), [X], True),
    "reduce_variance": (lambda x: tfn.math.reduce_variance(x, 0), lambda x: np.var(x, 0), [X], True),
    "reduce_std": (lambda x: tfn.math.reduce_std(x, [0, 1], keepdims=True),
                   lambda x: np.std(x, keepdims=True), [X], True),
    "add_n": (lambda x, y, z: tfn.add_n([x, y, z]), lambda x, y, z: x + y + z, [X, X * 2, X - 1], True),
    "linspace": (lambda a, b: tfn.linspace(a, b, 5, axis=-1),
                 lambda a, b: np.linspace(a, b, 5, axis=-1), [V, V * 3 + 1], True),
    "meshgrid": (lambda a, b: tfn.meshgrid(a, b)[1] * tfn.meshgrid(a, b)[0],
                 lambda a, b: np.prod(np.meshgrid(a, b), 0), [V, V[:3]], True),
}


test_values_eager_and_compiled, test_gradients_match_finite_differences = case_tests(CASES)


@pytest.mark.parametrize("fn", [tfn.floor, tfn.math.ceil, tfn.round])
def test_rounding_has_no_gradient(fn):
    x = tfn.constant(X)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(fn(x))
    assert tape.gradient(y, x) is None


SPECIAL = np.array([-2.5, -0.5, -0.0, 0.5, 2.5, np.inf, -np.inf, np.nan, 1e30, -3e38], np.float32)


@pytest.mark.parametrize("fn,ref", [(tfn.floor, np.floor), (tfn.math.ceil, np.ceil), (tfn.round, np.round),
                                    (tfn.math.is_nan, np.isnan), (tfn.math.is_inf, np.isinf),
                                    (tfn.math.is_finite, np.isfinite)])
def test_special_values_eager_and_compiled(fn, ref):
    want = ref(SPECIAL)
    for got in (fn(tfn.constant(SPECIAL)), tfn.function(fn)(tfn.constant(SPECIAL))):
        np.testing.assert_array_equal(got.numpy(), want)
        if want.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))


def test_tf_docstring_examples():
    t = tfn.constant([[-10., -1., 0.], [0., 2., 10.]])
    assert tfn.clip_by_value(t, clip_value_min=-1, clip_value_max=1).numpy().tolist() == [[-1, -1, 0], [0, 1, 1]]
    t = tfn.constant([[-1, 0., 10.], [-1, 0, 10]])
    assert tfn.clip_by_value(t, clip_value_min=[[2], [1]], clip_value_max=100).numpy().tolist() == \
        [[2, 2, 10], [1, 1, 10]]
    np.testing.assert_allclose(tfn.clip_by_norm(tfn.constant([[1, 2, 3, 4, 5]], tfn.float32), 2.0).numpy(),
                               [[0.26967996, 0.5393599, 0.80903983, 1.0787199, 1.3483998]], rtol=1e-6)
    x = tfn.constant([[0., 0., 0.], [0., 0., 0.]])
    np.testing.assert_allclose(tfn.reduce_logsumexp(x).numpy(), np.log(6), rtol=1e-6)
    np.testing.assert_allclose(tfn.reduce_logsumexp(x, 0).numpy(), [np.log(2)] * 3, rtol=1e-6)
    np.testing.assert_allclose(tfn.reduce_logsumexp(x, 1, keepdims=True).numpy(), [[np.log(3)]] * 2, rtol=1e-6)
    x = tfn.constant([[1., 2.], [3., 4.]])
    assert tfn.math.reduce_variance(x).numpy() == 1.25 and tfn.math.reduce_variance(x, 0).numpy().tolist() == [1, 1]
    np.testing.assert_allclose(tfn.math.reduce_std(x).numpy(), 1.118034, rtol=1e-6)
    x = tfn.constant([[0, 1, 0], [1, 1, 0]])
    assert tfn.math.count_nonzero(x).numpy() == 3 and tfn.math.count_nonzero(x).dtype is tfn.int64
    assert tfn.math.count_nonzero(x, axis=0).numpy().tolist() == [1, 2, 0]
    assert tfn.math.count_nonzero(x, axis=1, keepdims=True).numpy().tolist() == [[1], [2]]
    assert tfn.math.count_nonzero(tfn.constant(["", "a", "  ", "b", ""])).numpy() == 3
    assert tfn.math.count_nonzero(x, dtype=tfn.int32).dtype is tfn.int32
    assert tfn.add_n([tfn.constant([1, 2]), tfn.constant([5, 6])]).numpy().tolist() == [6, 8]
    assert tfn.linspace(10.0, 12.0, 3).numpy().tolist() == [10, 11, 12]
    assert tfn.linspace([0., 5.], [10., 40.], 5, axis=0).numpy().tolist() == \
        [[0, 5], [2.5, 13.75], [5, 22.5], [7.5, 31.25], [10, 40]]
    assert tfn.linspace(1.0, 2.0, 1).numpy().tolist() == [1] and tfn.linspace(1.0, 2.0, 0).shape == [0]
    X_, Y_ = tfn.meshgrid([1, 2, 3], [4, 5, 6])
    assert X_.numpy().tolist() == [[1, 2, 3]] * 3 and Y_.numpy().tolist() == [[4] * 3, [5] * 3, [6] * 3]
    assert [g.shape for g in tfn.meshgrid([1, 2], [3, 4, 5], [6], indexing="ij")] == [[2, 3, 1]] * 3
    assert tfn.sequence_mask([1, 3, 2], 5).numpy().tolist() == \
        [[True, False, False, False, False], [True, True, True, False, False], [True, True, False, False, False]]
    assert tfn.sequence_mask([[1, 3], [2, 0]]).numpy().tolist() == \
        [[[True, False, False], [True, True, True]], [[True, True, False], [False, False, False]]]
    assert tfn.sequence_mask([2], 3, dtype=tfn.float32).numpy().tolist() == [[1, 1, 0]]
    clipped, norm = tfn.clip_by_global_norm([tfn.constant([3., 4.]), None, tfn.constant([[12.]])], 6.5)
    assert norm.numpy() == 13 and clipped[1] is None
    assert clipped[0].numpy().tolist() == [1.5, 2] and clipped[2].numpy().tolist() == [[6]]
    clipped, _ = tfn.clip_by_global_norm([tfn.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(clipped[0].numpy()).all()
    assert tfn.round(tfn.constant([1, -2])).numpy().tolist() == [1, -2]
    assert tfn.debugging.is_nan is tfn.math.is_nan


def test_dynamic_dims():
    @tfn.function(input_signature=[tfn.TensorSpec([None, None], tfn.float32), tfn.TensorSpec([None], tfn.int32)])
    def f(x, lengths):
        return (tfn.reduce_logsumexp(x, 1), tfn.math.reduce_variance(x, 0), tfn.sequence_mask(lengths),
                tfn.math.count_nonzero(x > 0, 1), tfn.clip_by_norm(x, 1.0, axes=[1]), tfn.meshgrid(lengths, x[0])[1])
    x = X.astype(np.float32)
    lse, var, mask, count, clipped, grid = f(tfn.constant(x), tfn.constant([0, 2, 1]))
    np.testing.assert_allclose(lse.numpy(), _lse(X, 1), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), np.var(X, 0), rtol=1e-5)
    assert mask.numpy().tolist() == [[False, False], [True, True], [True, False]]
    assert count.numpy().tolist() == np.sum(X > 0, 1).tolist()
    np.testing.assert_allclose(clipped.numpy(), X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1), rtol=1e-5)
    assert grid.shape == [4, 3] and grid.numpy()[:, 0].tolist() == x[0].tolist()


def test_errors_name_the_problem_and_line():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Floor does not support dtype int32"):
        tfn.floor(tfn.constant([1, 2]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="IsNan does not support dtype int32"):
        tfn.math.is_nan(tfn.constant([1]))
    with pytest.raises(TypeError, match="clip_value_min has dtype float32, but t has dtype int32"):
        tfn.clip_by_value(tfn.constant([1, 2]), tfn.constant(0.0), 3)
    with pytest.raises(ValueError, match="must broadcast to t's shape"):
        tfn.clip_by_value(tfn.constant([1.0, 2.0]), tfn.zeros([3, 2]), 3.0)
    with pytest.raises(TypeError, match="input must be either real or complex, received int32"):
        tfn.math.reduce_variance(tfn.constant([1, 2]))
    with pytest.raises(ValueError, match="same dtype and shape"):
        tfn.add_n([tfn.ones([2]), tfn.ones([3])])
    with pytest.raises(ValueError, match="at least one Tensor"):
        tfn.add_n([])
    with pytest.raises(TypeError, match="lengths must be integers"):
        tfn.sequence_mask(tfn.constant([1.0]))
    with pytest.raises(ValueError, match="indexing must be 'xy' or 'ij'"):
        tfn.meshgrid([1], [2], indexing="yx")

    @tfn.function
    def traced(x):
        return tfn.floor(x)
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Floor does not support(.|\n)*test_composite_math.py"):
        traced(tfn.constant([1, 2]))
