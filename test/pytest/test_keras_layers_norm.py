"""tfn.keras's per-example normalisation layers against NumPy: LayerNormalization, GroupNormalization,
UnitNormalization, RMSNormalization (outputs, weights, gradients, configs, errors, a model that trains)."""
import numpy as np
import pytest
from keras_layer_checks import check_config, check_gradients, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def layer_norm_ref(x, gamma=None, beta=None, axes=(-1,), eps=1e-3):
    axes = tuple(axes)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    shape = [x.shape[a] if a % x.ndim in [b % x.ndim for b in axes] else 1 for a in range(x.ndim)]
    if gamma is not None:
        y = y * gamma.reshape(shape)
    if beta is not None:
        y = y + beta.reshape(shape)
    return y


def group_norm_ref(x, groups, gamma, beta, eps=1e-3):
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(*x.shape[:-1], groups, c // groups)
    axes = tuple(range(1, x.ndim - 1)) + (x.ndim,)
    mean = g.mean(axis=axes, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=axes, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    assert y.shape[0] == n
    return y * gamma + beta


def test_layer_normalization_last_axis_matches_numpy_with_gradients():
    layer = L.LayerNormalization()
    x = rand(4, 3, 5) * 3 + 1
    y = compiled_equals_eager(layer, x)
    np.testing.assert_allclose(y, layer_norm_ref(x), rtol=1e-4, atol=1e-5)
    assert [v.name for v in layer.weights] == [f"{layer.name}/gamma:0", f"{layer.name}/beta:0"]
    assert [tuple(v.shape) for v in layer.weights] == [(5,), (5,)]
    layer.set_weights([rand(5), rand(5)])
    gamma, beta = layer.get_weights()
    np.testing.assert_allclose(layer(x).numpy(), layer_norm_ref(x, gamma, beta), rtol=1e-4, atol=1e-5)
    check_gradients(layer, rand(2, 2, 5), lambda x, g, b: layer_norm_ref(x, g, b))
    check_config(layer, x)


def test_layer_normalization_several_axes_no_center_no_scale():
    x = rand(2, 3, 4, 5)
    layer = L.LayerNormalization(axis=[1, 2], epsilon=1e-5)
    layer(x)
    g, b = rand(3, 4), rand(3, 4)
    layer.set_weights([g, b])
    np.testing.assert_allclose(layer(x).numpy(), layer_norm_ref(x, g, b, (1, 2), 1e-5), rtol=1e-4, atol=1e-5)
    bare = L.LayerNormalization(axis=(-1, 1), center=False, scale=False)
    np.testing.assert_allclose(bare(x).numpy(), layer_norm_ref(x, axes=(1, 3)), rtol=1e-4, atol=1e-5)
    assert bare.weights == []
    only_scale = L.LayerNormalization(center=False)
    only_scale(x)
    assert [v.name.split("/")[-1] for v in only_scale.weights] == ["gamma:0"]
    with pytest.raises(TypeError, match="axis"):
        L.LayerNormalization(axis="last")
    with pytest.raises(ValueError, match="Duplicate axes"):
        L.LayerNormalization(axis=[1, -3])(x)


def test_group_normalization_matches_numpy_with_gradients():
    x = rand(3, 4, 5, 6)
    layer = L.GroupNormalization(groups=3)
    y = compiled_equals_eager(layer, x)
    np.testing.assert_allclose(y, group_norm_ref(x, 3, 1, 0), rtol=1e-4, atol=1e-4)
    g, b = rand(6), rand(6)
    layer.set_weights([g, b])
    np.testing.assert_allclose(layer(x).numpy(), group_norm_ref(x, 3, g, b), rtol=1e-4, atol=1e-4)
    check_gradients(L.GroupNormalization(groups=2, gamma_initializer="random_normal",
                                         beta_initializer="random_normal"),
                    rand(2, 3, 4), lambda x, g, b: group_norm_ref(x, 2, g, b))
    instance = L.GroupNormalization(groups=-1)  # one group per channel: instance normalisation
    np.testing.assert_allclose(instance(x).numpy(), group_norm_ref(x, 6, 1, 0), rtol=1e-4, atol=1e-4)
    assert instance.groups == 6
    check_config(L.GroupNormalization(groups=2, epsilon=1e-4), x)


def test_group_normalization_unknown_batch_inside_function_and_errors():
    layer = L.GroupNormalization(groups=2)
    f = tf.function(lambda t: layer(t), input_signature=[tf.TensorSpec([None, 3, 4], tf.float32)])
    x = rand(5, 3, 4)
    np.testing.assert_allclose(f(x).numpy(), group_norm_ref(x, 2, 1, 0), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="groups"):
        L.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match="cannot be more than the number of channels"):
        L.GroupNormalization(groups=8)(rand(2, 4))
    with pytest.raises(ValueError, match="must be a multiple"):
        L.GroupNormalization(groups=3)(rand(2, 4))


def test_unit_and_rms_normalization():
    x = rand(4, 3, 5)
    unit = compiled_equals_eager(L.UnitNormalization(), x)
    np.testing.assert_allclose(unit, x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)
    both = L.UnitNormalization(axis=[1, 2])(x).numpy()
    np.testing.assert_allclose(both, x / np.sqrt((x ** 2).sum(axis=(1, 2), keepdims=True)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(L.UnitNormalization()(np.zeros((2, 3), np.float32)).numpy(), 0)
    with tf.GradientTape() as tape:
        z = tf.zeros([2, 3])
        tape.watch(z)
        out = tf.reduce_sum(L.UnitNormalization()(z))
    assert np.all(np.isfinite(tape.gradient(out, z).numpy()))  # a zero vector's gradient stays finite
    rms = L.RMSNormalization(epsilon=1e-6)
    y = compiled_equals_eager(rms, x)
    np.testing.assert_allclose(y, x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6), rtol=1e-4, atol=1e-5)
    assert [tuple(v.shape) for v in rms.weights] == [(5,)]
    check_gradients(L.RMSNormalization(), rand(2, 4),
                    lambda x, s: x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6) * s)
    check_config(L.UnitNormalization(axis=1), x)
    with pytest.raises(TypeError, match="axis"):
        L.UnitNormalization(axis=None)


def test_model_with_layer_and_group_normalization_trains():
    tf.random.set_seed(1)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((128, 8)) * 5 + 3).astype(np.float32)
    y = (x[:, :1] - x[:, 1:2]) / 5
    model = tf.keras.Sequential([L.Dense(16, activation="relu"), L.LayerNormalization(),
                                 L.Reshape((4, 4)), L.GroupNormalization(groups=2), L.Flatten(), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=12, factor=0.5)
    assert len(model.trainable_weights) == 8  # two Dense kernels and biases, two gammas and betas
