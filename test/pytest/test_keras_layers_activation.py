"""tfn.keras's activation layers (LeakyReLU, PReLU, ELU, Identity, and ReLU's and Softmax's arguments) against
NumPy, with PReLU's trainable slope checked by gradients and by training."""
import numpy as np
import pytest
from keras_layer_checks import check_config, check_gradients, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def test_leaky_relu_elu_identity():
    x = rand(4, 5)
    np.testing.assert_allclose(compiled_equals_eager(L.LeakyReLU(), x), np.where(x >= 0, x, 0.3 * x), rtol=1e-6)
    np.testing.assert_allclose(L.LeakyReLU(negative_slope=0.1)(x).numpy(), np.where(x >= 0, x, 0.1 * x), rtol=1e-6)
    np.testing.assert_allclose(compiled_equals_eager(L.ELU(alpha=0.5), x), np.where(x > 0, x, 0.5 * np.expm1(x)),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(compiled_equals_eager(L.Identity(), x), x)
    with pytest.raises(ValueError, match="negative_slope"):
        L.LeakyReLU(negative_slope=-1)
    check_config(L.LeakyReLU(0.2), x)
    check_config(L.ELU(2.0), x)
    big = np.array([[100.0, -100.0]], np.float32)  # ELU of a large input: no overflow in the unused branch
    with tf.GradientTape() as tape:
        t = tf.constant(big)
        tape.watch(t)
        y = tf.reduce_sum(L.ELU()(t))
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), [[1.0, np.exp(-100.0)]], atol=1e-30)


def test_relu_and_softmax_arguments():
    x = rand(3, 6) * 3
    relu = L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5)
    want = np.minimum(np.where(x >= 0.5, x, 0.1 * (x - 0.5)), 2.0)
    np.testing.assert_allclose(compiled_equals_eager(relu, x), want, rtol=1e-6)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(L.Softmax(axis=0)(x).numpy(), e / e.sum(0), rtol=1e-5)


def test_prelu_weights_gradients_and_shared_axes():
    x = rand(3, 4, 5)
    layer = L.PReLU()
    np.testing.assert_allclose(layer(x).numpy(), np.maximum(x, 0))  # alpha starts at zero: ReLU
    assert [(v.name, tuple(v.shape)) for v in layer.weights] == [(f"{layer.name}/alpha:0", (4, 5))]
    alpha = rand(4, 5)
    layer.set_weights([alpha])
    np.testing.assert_allclose(compiled_equals_eager(layer, x), np.where(x > 0, x, alpha * x), rtol=1e-6)
    shared = L.PReLU(alpha_initializer="ones", shared_axes=[1])
    shared(x)
    assert tuple(shared.alpha.shape) == (1, 5)
    check_gradients(L.PReLU(alpha_initializer="random_normal", shared_axes=1), rand(2, 3, 4),
                    lambda x, a: np.where(x > 0, x, a * x))
    check_config(shared, x)
    with pytest.raises(ValueError, match="shared_axes"):
        L.PReLU(shared_axes=[3])(x)


def test_model_with_prelu_and_leaky_relu_trains_its_slopes():
    tf.random.set_seed(4)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    y = np.abs(x).sum(1, keepdims=True).astype(np.float32)  # |x|: needs the negative slopes to move
    prelu = L.PReLU(alpha_initializer="zeros")
    model = tf.keras.Sequential([L.Dense(8), prelu, L.Dense(8), L.LeakyReLU(0.1), L.ELU(), L.Dense(1)])
    model.build((None, 3))
    before = prelu.alpha.numpy().copy()
    fit_reduces_loss(model, x, y, epochs=15, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.01))
    assert not np.allclose(prelu.alpha.numpy(), before)  # the gradient reached the trainable slope
