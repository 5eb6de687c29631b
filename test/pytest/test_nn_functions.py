"""tfn.nn's activations, losses and normalisation functions: values against NumPy formulas (eager and compiled),
gradients against finite differences (float64), errors for bad input, dropout's mask."""
import math

import numpy as np
import pytest
from composite_cases import tape_grads
from opcheck import central_differences

import tfn

_erf = np.vectorize(math.erf)
_sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731

# name: (function of tensors, NumPy reference of arrays, input arrays)
X = np.linspace(-3.1, 2.9, 12).reshape(3, 4)
Z = np.array([[0, 1, 0.3, 1], [1, 0, 0.5, 0.2], [0.9, 0.1, 1, 0]])
CASES = {
    "relu6": (tfn.nn.relu6, lambda x: np.clip(x, 0, 6), [X * 3]),
    "leaky_relu": (lambda x: tfn.nn.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), [X]),
    "elu": (tfn.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [X]),
    "selu": (tfn.nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), [X]),
    "gelu": (tfn.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), [X]),
    "gelu_tanh": (lambda x: tfn.nn.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), [X]),
    "silu": (tfn.nn.silu, lambda x: x * _sig(x), [X]),
    "swish_beta": (lambda x: tfn.nn.swish(x, beta=2.0), lambda x: x * _sig(2 * x), [X]),
    "softsign": (tfn.nn.softsign, lambda x: x / (1 + np.abs(x)), [X]),
    "log_sigmoid": (tfn.math.log_sigmoid, lambda x: np.log(_sig(x)), [X * 5]),
    "sigmoid_ce": (lambda z, x: tfn.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
                   lambda z, x: -z * np.log(_sig(x)) - (1 - z) * np.log(1 - _sig(x)), [Z, X]),
    "weighted_ce": (lambda z, x: tfn.nn.weighted_cross_entropy_with_logits(z, x, 3.0),
                    lambda z, x: -3.0 * z * np.log(_sig(x)) - (1 - z) * np.log(1 - _sig(x)), [Z, X]),
    "l2_loss": (tfn.nn.l2_loss, lambda x: np.sum(x * x) / 2, [X]),
    "log_poisson": (lambda z, c: tfn.nn.log_poisson_loss(z, c, compute_full_loss=True),
                    lambda z, c: np.exp(c) - z * c + np.where(
                        z > 1, z * np.log(np.maximum(z, 1)) - z + 0.5 * np.log(2 * np.pi * np.maximum(z, 1)), 0),
                    [Z * 3, X]),
    "bias_add": (tfn.nn.bias_add, lambda x, b: x + b, [X, np.array([0.5, -1.0, 2.0, 0.25])]),
    "bias_add_nchw": (lambda x, b: tfn.nn.bias_add(x, b, data_format="NCHW"), lambda x, b: x + b[:, None, None],
                      [np.arange(24.0).reshape(2, 3, 2, 2) / 10, np.array([1.0, -2.0, 0.5])]),
    "moments_mean": (lambda x: tfn.nn.moments(x, [0])[0], lambda x: x.mean(0), [X]),
    "moments_var": (lambda x: tfn.nn.moments(x, [0, 1], keepdims=True)[1], lambda x: x.var(keepdims=True), [X]),
    "batch_norm": (lambda x, m, v, o, s: tfn.nn.batch_normalization(x, m, v, o, s, 1e-3),
                   lambda x, m, v, o, s: (x - m) * s / np.sqrt(v + 1e-3) + o,
                   [X, X.mean(0), X.var(0) + 0.5, np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, 2.0, 0.5, 1.5])]),
    "l2_normalize": (lambda x: tfn.nn.l2_normalize(x, axis=1), lambda x: x / np.linalg.norm(x, axis=1, keepdims=True),
                     [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_eager_and_compiled(name):
    fn, ref, arrays = CASES[name]
    want = ref(*arrays)
    eager = fn(*[tfn.constant(a) for a in arrays])
    compiled = tfn.function(fn, autograph=False)(*[tfn.constant(a) for a in arrays])
    np.testing.assert_allclose(eager.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled.numpy(), want, rtol=1e-12, atol=1e-12)
    f32 = fn(*[tfn.constant(a.astype(np.float32)) for a in arrays])
    assert f32.dtype is tfn.float32
    np.testing.assert_allclose(f32.numpy(), want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name):
    fn, ref, arrays = CASES[name]
    w = np.random.default_rng(0).uniform(-1, 1, np.shape(ref(*arrays)))
    got = tape_grads(fn, arrays, w, compiled=False)
    want = central_differences(lambda xs: np.sum(ref(*xs) * w), arrays, 1e-6)
    for g, wanted in zip(got, want):
        np.testing.assert_allclose(g, wanted, rtol=1e-6, atol=1e-6)
    compiled = tape_grads(fn, arrays, w, compiled=True)
    for c, e in zip(compiled, got):
        np.testing.assert_allclose(c, e, rtol=1e-12, atol=1e-12)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="same shape"):
        tfn.nn.sigmoid_cross_entropy_with_logits(labels=tfn.ones([2, 3]), logits=tfn.ones([3, 2]))
    with pytest.raises(ValueError, match="Both labels and logits"):
        tfn.nn.sigmoid_cross_entropy_with_logits(logits=tfn.ones([2]))
    with pytest.raises(ValueError, match="bias of 3 values for a value of 4 channels"):
        tfn.nn.bias_add(tfn.ones([2, 4]), tfn.ones([3]))
    with pytest.raises(ValueError, match="bias must be 1-D"):
        tfn.nn.bias_add(tfn.ones([2, 4]), tfn.ones([1, 4]))
    with pytest.raises(TypeError, match="gelu needs a floating-point tensor, got int32"):
        tfn.nn.gelu(tfn.constant([1, 2]))
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        tfn.nn.dropout(tfn.ones([3]), 1.0)
    with pytest.raises(ValueError, match="floating point"):
        tfn.nn.dropout(tfn.constant([1, 2]), 0.5)


def test_dropout_scales_kept_elements_and_draws_anew_each_call():
    x = tfn.ones([200, 50])
    y = tfn.nn.dropout(x, 0.3, seed=1).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert 0.25 < np.mean(y == 0) < 0.35
    step = tfn.function(lambda a: tfn.nn.dropout(a, 0.5))
    first, second = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(first == 0, second == 0)
    shared = tfn.nn.dropout(x, 0.5, noise_shape=[200, 1]).numpy()  # one draw per row
    assert all(len(np.unique(row)) == 1 for row in shared)
    assert tfn.nn.dropout(x, 0).numpy() is not None and np.array_equal(tfn.nn.dropout(x, 0).numpy(), x.numpy())


def test_keras_activations_by_name():
    x = tfn.constant(X)
    for name, fn in [("gelu", tfn.nn.gelu), ("swish", tfn.nn.silu), ("elu", tfn.nn.elu), ("selu", tfn.nn.selu),
                     ("softsign", tfn.nn.softsign), ("relu6", tfn.nn.relu6)]:
        np.testing.assert_array_equal(tfn.keras.layers.Dense(4, activation=name, kernel_initializer="ones")(x),
                                      fn(tfn.keras.layers.Dense(4, kernel_initializer="ones")(x)))
    np.testing.assert_allclose(tfn.keras.activations.get("hard_sigmoid")(x), np.clip(X + 3, 0, 6) / 6)


@pytest.mark.parametrize("bad", [7, -1])
def test_sparse_softmax_cross_entropy_names_a_label_outside_the_classes(bad):
    """TF's message naming the label, eagerly and compiled (the gather's own check named GatherV2's indices)."""
    logits = tfn.ones([3, 4])

    def loss(labels):
        return tfn.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    for f in (loss, tfn.function(loss)):
        with pytest.raises(tfn.errors.InvalidArgumentError,
                           match=rf"Received a label value of {bad} which is outside the valid range of \[0, 4\)"):
            f(tfn.constant([0, bad, 1]))
    np.testing.assert_allclose(loss(tfn.constant([0, 3, 1])).numpy(), [np.log(4.0)] * 3, rtol=1e-6)
