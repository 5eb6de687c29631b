"""tfn.keras's noise layers (GaussianNoise, GaussianDropout, SpatialDropout1D/2D: active with training=True only,
new draws on every compiled call) and ActivityRegularization with Layer.add_loss / losses (its penalty is added to
fit's and evaluate's loss, as in Keras; predictions are unaffected)."""
import numpy as np
import pytest
from keras_layer_checks import check_config, fit_reduces_loss

import tfn as tf

L = tf.keras.layers


def test_gaussian_noise_and_dropout_statistics_training_only():
    x = np.ones((200, 100), np.float32)
    noise = L.GaussianNoise(0.5)
    np.testing.assert_array_equal(noise(x).numpy(), x)  # inference: the identity
    f = tf.function(lambda t: noise(t, training=True))
    a, b = f(x).numpy(), f(x).numpy()
    assert abs((a - 1).mean()) < 0.02 and abs((a - 1).std() - 0.5) < 0.02
    assert not np.array_equal(a, b)  # a new draw on every compiled call
    drop = L.GaussianDropout(0.2)
    np.testing.assert_array_equal(drop(x, training=False).numpy(), x)
    d = drop(tf.constant(x), training=True).numpy()
    assert abs(d.mean() - 1) < 0.02 and abs(d.std() - np.sqrt(0.2 / 0.8)) < 0.02
    tf.random.set_seed(8)
    first = f(x).numpy()
    tf.random.set_seed(8)
    np.testing.assert_array_equal(f(x).numpy(), first)
    check_config(L.GaussianNoise(0.1, seed=3), x)
    check_config(L.GaussianDropout(0.3), x)
    with pytest.raises(ValueError, match="stddev"):
        L.GaussianNoise(2.0)
    with pytest.raises(ValueError, match="rate"):
        L.GaussianDropout(-0.1)


def test_alpha_dropout_keeps_selu_statistics():
    x = tf.nn.selu(tf.constant(np.random.default_rng(3).standard_normal((400, 250)).astype(np.float32))).numpy()
    layer = L.AlphaDropout(0.2)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = tf.function(lambda t: layer(t, training=True))(x).numpy()
    assert abs(y.mean() - x.mean()) < 0.02 and abs(y.std() - x.std()) < 0.02  # mean 0, variance 1 kept
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.2, atol=1e-5)
    assert 0.18 < dropped.mean() < 0.22
    np.testing.assert_allclose(y[~dropped], a * x[~dropped] - a * alpha_p * 0.2, rtol=1e-5, atol=1e-5)
    check_config(L.AlphaDropout(0.1, seed=2), x)


@pytest.mark.parametrize("cls,shape", [(L.SpatialDropout1D, (6, 40, 8)), (L.SpatialDropout2D, (6, 5, 8, 8))])
def test_spatial_dropout_drops_whole_channels(cls, shape):
    x = np.ones(shape, np.float32)
    layer = cls(0.5)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = tf.function(lambda t: layer(t, training=True))(x).numpy()
    per_channel = y.reshape(shape[0], -1, shape[-1])
    assert np.all(per_channel.min(1) == per_channel.max(1))  # one value per example and channel
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.2 < (y == 0).mean() < 0.8
    with pytest.raises(ValueError, match=f"expected ndim={len(shape)}"):
        cls(0.5)(np.ones((2, 3), np.float32))
    check_config(cls(0.3, seed=4), x)


def test_activity_regularization_adds_its_penalty_to_losses():
    x = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    reg = L.ActivityRegularization(l1=0.1, l2=0.01)
    np.testing.assert_array_equal(reg(x).numpy(), x)
    want = (0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum()) / 2
    assert len(reg.losses) == 1
    np.testing.assert_allclose(reg.losses[0].numpy(), want, rtol=1e-6)
    reg(x)
    assert len(reg.losses) == 1  # each outermost call replaces the last call's losses

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.reg = L.ActivityRegularization(l2=1.0)
            self.dense = L.Dense(1, kernel_initializer="ones")

        def call(self, t):
            return self.dense(self.reg(t))

    net = Net()
    net(x)
    np.testing.assert_allclose([v.numpy() for v in net.losses], [(x ** 2).sum() / 2], rtol=1e-6)
    check_config(reg, x)


def test_activity_regularization_in_fit_evaluate_predict():
    tf.random.set_seed(9)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    dense = L.Dense(4, kernel_initializer="ones", bias_initializer="ones")
    model = tf.keras.Sequential([dense, L.ActivityRegularization(l2=0.05), L.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer="sgd", loss="mse")
    h = (x @ np.ones((4, 4)) + 1)
    p = h.sum(1, keepdims=True)
    mse = ((p - y) ** 2).mean()
    penalty = 0.05 * (h ** 2).sum() / 64
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=64, verbose=0), mse + penalty, rtol=1e-4)
    np.testing.assert_allclose(model.predict(x, batch_size=64), p, rtol=1e-5)
    fit_reduces_loss(model, x, y, epochs=6, batch_size=16, optimizer=tf.keras.optimizers.SGD(0.001), factor=0.9)
    # the penalty pulls the hidden activations toward zero: a heavily regularised copy ends with smaller ones
    tf.random.set_seed(9)
    heavy = tf.keras.Sequential([L.Dense(4), L.ActivityRegularization(l1=1.0), L.Dense(1)])
    light = tf.keras.Sequential([L.Dense(4), L.Dense(1)])
    for m in (heavy, light):
        m.build((None, 4))
    light.set_weights(heavy.get_weights())
    for m in (heavy, light):
        m.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="mse")
        m.fit(x, y, batch_size=16, epochs=10, verbose=0)
    size = [np.abs(m.layers[0](x).numpy()).mean() for m in (heavy, light)]
    assert size[0] < 0.7 * size[1], size


def test_noise_layers_train_in_a_model():
    tf.random.set_seed(10)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((128, 12, 3)).astype(np.float32)
    y = x[:, :, 0].mean(1, keepdims=True) * 3
    model = tf.keras.Sequential([L.GaussianNoise(0.05), L.Conv1D(6, 3, padding="same"), L.SpatialDropout1D(0.1),
                                 L.GaussianDropout(0.1), L.GlobalAveragePooling1D(), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=12, factor=0.6, optimizer=tf.keras.optimizers.Adam(0.01))
    a, b = model.predict(x[:8]), model.predict(x[:8])
    np.testing.assert_array_equal(a, b)  # predict: no noise
