"""tfn.keras's Rescaling and Normalization (given statistics, or learnt by adapt from arrays, datasets and
iterables of batches; invert) against NumPy, in a model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def test_rescaling():
    images = np.array([[[0, 128, 255]]], np.uint8)
    np.testing.assert_allclose(L.Rescaling(1 / 255)(images).numpy(), images / 255, rtol=1e-6)
    x = rand(2, 3)
    np.testing.assert_allclose(compiled_equals_eager(L.Rescaling(2.0, offset=-1.0), x), x * 2 - 1, rtol=1e-6)
    np.testing.assert_allclose(L.Rescaling([1.0, 2.0, 3.0])(x).numpy(), x * [1, 2, 3], rtol=1e-6)
    check_config(L.Rescaling(0.5, 0.25), x)


@pytest.mark.parametrize("axis,reduce", [(-1, (0, 1)), (None, (0, 1, 2)), ((1, 2), (0,))])
def test_normalization_adapt_matches_numpy(axis, reduce):
    data = rand(40, 4, 3) * 3 + 2
    layer = L.Normalization(axis=axis)
    layer.adapt(data)
    mean, std = data.mean(axis=reduce, keepdims=True), data.std(axis=reduce, keepdims=True)
    np.testing.assert_allclose(compiled_equals_eager(layer, data), (data - mean) / std, rtol=1e-4, atol=1e-4)
    assert [v.name.split("/")[-1] for v in layer.non_trainable_weights] == ["mean:0", "variance:0", "count:0"]
    assert layer.trainable_weights == [] and int(layer.count.numpy()) == np.prod([data.shape[d] for d in reduce])
    batched = L.Normalization(axis=axis)
    batched.adapt(tf.data.Dataset.from_tensor_slices(data).batch(7))  # the statistics of all batches together
    np.testing.assert_allclose(batched.adapt_mean.numpy(), layer.adapt_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(batched.adapt_variance.numpy(), layer.adapt_variance.numpy(), rtol=1e-4)
    listed = L.Normalization(axis=axis)
    listed.adapt([data[:13], data[13:]])
    np.testing.assert_allclose(listed.adapt_variance.numpy(), layer.adapt_variance.numpy(), rtol=1e-4)


def test_normalization_given_statistics_invert_and_errors():
    x = rand(5, 3)
    given = L.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 1.0, 0.25])
    want = (x - [1, 2, 3]) / [2, 1, 0.5]
    np.testing.assert_allclose(given(x).numpy(), want, rtol=1e-5, atol=1e-6)
    back = L.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 1.0, 0.25], invert=True)
    np.testing.assert_allclose(back(want.astype(np.float32)).numpy(), x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(L.Normalization(mean=0.0, variance=0.0)(x).numpy(), x / 1e-7, rtol=1e-5)
    check_config(given, x)
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        L.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="adapt"):
        given.adapt(x)
    with pytest.raises(ValueError, match="range"):
        L.Normalization(axis=3)(x)
    adapted = L.Normalization()
    adapted.adapt(x)
    with pytest.raises(ValueError, match="incompatible shape"):
        adapted.adapt(rand(5, 4))


def test_normalized_model_trains():
    tf.random.set_seed(15)
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((128, 3)) * [100, 0.01, 5] + [1000, 0, -20]).astype(np.float32)  # wild scales
    y = ((x[:, :1] - 1000) / 100 + (x[:, 1:2] / 0.01)).astype(np.float32)
    norm = L.Normalization()
    norm.adapt(x)
    model = tf.keras.Sequential([norm, L.Dense(8, activation="relu"), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=10, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.02))
    assert not any(w is v for w in model.trainable_weights for v in norm.weights)  # fit leaves the statistics
