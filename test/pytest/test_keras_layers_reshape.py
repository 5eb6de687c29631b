"""tfn.keras's shape layers against NumPy: Reshape, Permute, RepeatVector, Cropping1D/2D, ZeroPadding1D/2D,
UpSampling1D/2D and Lambda, eagerly, compiled and with an unknown batch size, plus a model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers

def bilinear_2x(x):
    """Half-pixel-centre bilinear 2x upsampling, by hand: output i samples (i + 0.5) / 2 - 0.5, edges clamped."""
    def axis_weights(n):
        w = np.zeros((2 * n, n))
        for i in range(2 * n):
            s = min(max((i + 0.5) / 2 - 0.5, 0), n - 1)
            lo = int(np.floor(s))
            w[i, lo] += 1 - (s - lo)
            w[i, min(lo + 1, n - 1)] += s - lo
        return w
    return np.einsum("ih,jw,nhwc->nijc", axis_weights(x.shape[1]), axis_weights(x.shape[2]), x).astype(np.float32)


CASES = [
    (lambda: L.Reshape((4, 3)), (2, 3, 4), lambda x: x.reshape(2, 4, 3)),
    (lambda: L.Reshape((-1, 2)), (2, 3, 4), lambda x: x.reshape(2, 6, 2)),
    (lambda: L.Permute((2, 1)), (2, 3, 4), lambda x: x.transpose(0, 2, 1)),
    (lambda: L.Permute((3, 1, 2)), (2, 3, 4, 5), lambda x: x.transpose(0, 3, 1, 2)),
    (lambda: L.RepeatVector(3), (2, 4), lambda x: np.repeat(x[:, None], 3, axis=1)),
    (lambda: L.Cropping1D((1, 2)), (2, 6, 3), lambda x: x[:, 1:4]),
    (lambda: L.Cropping1D(0), (2, 6, 3), lambda x: x),
    (lambda: L.Cropping2D(((1, 0), (2, 1))), (2, 5, 6, 3), lambda x: x[:, 1:, 2:5]),
    (lambda: L.Cropping2D(1), (2, 5, 6, 3), lambda x: x[:, 1:4, 1:5]),
    (lambda: L.ZeroPadding1D((1, 2)), (2, 4, 3), lambda x: np.pad(x, ((0, 0), (1, 2), (0, 0)))),
    (lambda: L.ZeroPadding2D(((1, 0), (0, 2))), (2, 3, 4, 2), lambda x: np.pad(x, ((0, 0), (1, 0), (0, 2), (0, 0)))),
    (lambda: L.ZeroPadding2D(), (2, 3, 4, 2), lambda x: np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))),
    (lambda: L.UpSampling1D(3), (2, 4, 3), lambda x: np.repeat(x, 3, axis=1)),
    (lambda: L.UpSampling2D((2, 3)), (2, 3, 4, 2), lambda x: np.repeat(np.repeat(x, 2, axis=1), 3, axis=2)),
    (lambda: L.UpSampling2D(2, interpolation="bilinear"), (1, 3, 2, 1), lambda x: bilinear_2x(x)),
    (lambda: L.Lambda(lambda t, k: t * k + 1.0, arguments={"k": 2.0}), (2, 3), lambda x: x * 2 + 1),
]


@pytest.mark.parametrize("make,shape,ref", CASES)
def test_shape_layers_match_numpy(make, shape, ref):
    x = rand(*shape)
    layer = make()
    np.testing.assert_allclose(compiled_equals_eager(layer, x), ref(x), rtol=1e-6, atol=1e-6)
    spec = tf.TensorSpec([None, *shape[1:]], tf.float32)  # the batch size known only when the function runs
    np.testing.assert_allclose(tf.function(lambda t: layer(t), input_signature=[spec])(x).numpy(), ref(x),
                               rtol=1e-6, atol=1e-6)
    if not isinstance(layer, L.Lambda):
        check_config(layer, x)


def test_shape_layer_gradients_route_back():
    x = tf.constant(rand(2, 4, 3))
    w = rand(2, 5, 6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = L.UpSampling1D(2)(L.Cropping1D((1, 1))(L.ZeroPadding1D((1, 2))(x)))  # (2, 7, 3) -> (2, 5, 3) -> (2, 10, 3)
        y = L.Permute((2, 1))(L.Reshape((6, 5))(y[:, :, :3]))
        loss = tf.reduce_sum(y * w)
    # the same computation in NumPy, differentiated by hand: every op is linear, so the gradient is its transpose
    g = w.transpose(0, 2, 1).reshape(2, 10, 3)
    g = g.reshape(2, 5, 2, 3).sum(2)  # UpSampling1D(2): each input step fed two outputs
    g = np.pad(g, ((0, 0), (1, 1), (0, 0)))[:, 1:5]  # crop (1, 1) then pad (1, 2) undone
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), g, rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="target_shape"):
        L.Reshape((-1, -1))
    with pytest.raises(ValueError, match="total size"):
        L.Reshape((5,))(rand(2, 3))
    with pytest.raises(ValueError, match="Permute"):
        L.Permute((1, 3))
    with pytest.raises(TypeError, match="dims"):
        L.Permute(3)
    with pytest.raises(TypeError, match="target_shape"):
        L.Reshape(5)
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        L.RepeatVector(2)(rand(2, 3, 4))
    with pytest.raises(TypeError, match="integer"):
        L.RepeatVector(2.0)
    with pytest.raises(ValueError, match="smaller than the input length"):
        L.Cropping1D((2, 2))(rand(1, 4, 1))
    with pytest.raises(ValueError, match="cropping"):
        L.Cropping2D((1, 2, 3))
    with pytest.raises(ValueError, match="padding"):
        L.ZeroPadding1D(-1)
    with pytest.raises(ValueError, match="bilinear"):
        L.UpSampling2D(interpolation="bicubic")
    with pytest.raises(TypeError, match="callable"):
        L.Lambda(3)


def test_lambda_traced_in_fit_and_sees_training():
    seen = []

    def scale(t, training=None):
        seen.append(training)
        return t * 0.5

    tf.random.set_seed(5)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((96, 6)).astype(np.float32)
    y = x[:, :2].sum(1, keepdims=True)
    model = tf.keras.Sequential([L.Reshape((3, 2)), L.Permute((2, 1)), L.Lambda(scale), L.ZeroPadding1D(1),
                                 L.Cropping1D((1, 1)), L.UpSampling1D(2), L.Flatten(), L.RepeatVector(2),
                                 L.Flatten(), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=12, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.01))
    assert True in seen  # the compiled train step called the Lambda with training=True
    assert model.predict(x[:4]).shape == (4, 1)
