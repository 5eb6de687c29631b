"""tfn.keras's image preprocessing layers: Resizing (bilinear / nearest with half-pixel centres: the values
TensorFlow's image resizing gives), CenterCrop, RandomFlip (training only), and an augmented model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def test_resizing_known_values():
    row = np.array([0.0, 1.0, 2.0], np.float32).reshape(1, 1, 3, 1)
    up = L.Resizing(1, 6)(row).numpy().ravel()
    np.testing.assert_allclose(up, [0, 0.25, 0.75, 1.25, 1.75, 2], rtol=1e-6)  # tf.image.resize's bilinear
    down = L.Resizing(1, 2)(np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1)).numpy().ravel()
    np.testing.assert_allclose(down, [0.5, 2.5], rtol=1e-6)  # samples at 0.5 and 2.5: no antialiasing
    nearest = L.Resizing(1, 5, interpolation="nearest")(row).numpy().ravel()
    np.testing.assert_array_equal(nearest, [0, 0, 1, 2, 2])  # floor((i + 0.5) * 3 / 5)
    x = rand(2, 4, 6, 3)
    np.testing.assert_allclose(compiled_equals_eager(L.Resizing(4, 6), x), x)
    assert L.Resizing(3, 3, crop_to_aspect_ratio=True)(x).shape == (2, 3, 3, 3)
    np.testing.assert_allclose(L.Resizing(4, 4, crop_to_aspect_ratio=True)(x).numpy(), x[:, :, 1:5])  # centred
    np.testing.assert_allclose(L.Resizing(2, 3)(x[0]).numpy(), L.Resizing(2, 3)(x).numpy()[0], rtol=1e-6)
    check_config(L.Resizing(3, 5, interpolation="nearest"), x)
    with pytest.raises(ValueError, match="interpolation"):
        L.Resizing(2, 2, interpolation="bicubic")
    with pytest.raises(ValueError, match="rank 3"):
        L.Resizing(2, 2)(rand(2, 3))


def test_resizing_gradient_is_the_transposed_interpolation():
    x = tf.constant(rand(1, 3, 1, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(L.Resizing(6, 1)(x))
    # the six samples weigh the three inputs (1 + .75, .25 + .75 + .75 + .25 ... ): each input's total weight
    np.testing.assert_allclose(tape.gradient(y, x).numpy().ravel(), [1.75 + 0.25, 0.75 * 2 + 0.25 * 2, 1.75 + 0.25],
                               rtol=1e-6)


def test_center_crop():
    x = rand(2, 7, 9, 3)
    np.testing.assert_array_equal(compiled_equals_eager(L.CenterCrop(4, 5), x), x[:, 1:5, 2:7])
    np.testing.assert_array_equal(L.CenterCrop(3, 3)(x[0]).numpy(), x[0, 2:5, 3:6])
    bigger = L.CenterCrop(10, 10)(x).numpy()  # larger than the image: crop to 1:1 then resize, as Keras
    np.testing.assert_allclose(bigger, L.Resizing(10, 10, crop_to_aspect_ratio=True)(x).numpy(), rtol=1e-6)
    check_config(L.CenterCrop(2, 3), x)


def test_random_flip_training_only():
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 2, 3, 4).repeat(200, axis=0)
    flip = L.RandomFlip("horizontal")
    np.testing.assert_array_equal(flip(x, training=False).numpy(), x)
    y = tf.function(lambda t: flip(t, training=True))(x).numpy()
    flipped = np.all(y == x[:, :, ::-1], axis=(1, 2, 3))
    assert np.all(flipped | np.all(y == x, axis=(1, 2, 3)))  # each image whole: flipped or not
    assert 0.3 < flipped.mean() < 0.7
    both = L.RandomFlip()(x, training=True).numpy()
    kinds = {(bool(np.all(b == x[0, :, ::-1])), bool(np.all(b == x[0, ::-1])), bool(np.all(b == x[0, ::-1, ::-1])),
              bool(np.all(b == x[0]))) for b in both}
    assert len(kinds) == 4  # all four combinations occur among 200 images
    check_config(L.RandomFlip("vertical", seed=3), x, lambda layer, t: layer(t, training=False))
    with pytest.raises(ValueError, match="mode"):
        L.RandomFlip("diagonal")


def test_augmented_image_model_trains():
    tf.random.set_seed(16)
    rng = np.random.default_rng(12)
    images = rng.integers(0, 256, (96, 10, 10, 1)).astype(np.uint8)
    y = (images.astype(np.float32).mean(axis=(1, 2, 3)) / 255)[:, None] * 4  # brightness: flip-invariant
    model = tf.keras.Sequential([L.Rescaling(1 / 255), L.RandomFlip(), L.CenterCrop(8, 8), L.Resizing(4, 4),
                                 L.Conv2D(4, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(1)])
    fit_reduces_loss(model, images, y, epochs=12, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.02))
