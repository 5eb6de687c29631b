"""tfn.image: the values TensorFlow 2.21's tf.image gives for the same inputs (written down from it), the same
results compiled as eager, NumPy references for the geometry, and the errors."""
import numpy as np
import pytest

import tfn as tf

RNG = np.random.default_rng(0)
X22 = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32).reshape(1, 2, 2, 1)

# tf.image.resize(X22, [4, 4], method=...)[0, :, :, 0] in TensorFlow 2.21
TF_RESIZED = {
    "bilinear": [[0.0, 0.25, 0.75, 1.0], [0.5, 0.75, 1.25, 1.5], [1.5, 1.75, 2.25, 2.5], [2.0, 2.25, 2.75, 3.0]],
    "nearest": [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 3.0, 3.0]],
    "bicubic": [[-0.264706, 0.030672, 0.616387, 0.911765], [0.32605, 0.621429, 1.207143, 1.502521],
                [1.497479, 1.792857, 2.378572, 2.67395], [2.088235, 2.383614, 2.969328, 3.264706]],
    "area": [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 3.0, 3.0]],
}


@pytest.mark.parametrize("method", sorted(TF_RESIZED))
def test_resize_gives_tensorflows_values(method):
    got = tf.image.resize(X22, [4, 4], method=method)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy()[0, :, :, 0], TF_RESIZED[method], atol=2e-6)
    compiled = tf.function(lambda x: tf.image.resize(x, [4, 4], method=method))(X22)
    np.testing.assert_allclose(compiled.numpy(), got.numpy(), atol=1e-6)


def test_resize_down_area_and_shapes():
    y = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    np.testing.assert_allclose(tf.image.resize(y, [2, 2], method="area").numpy()[0, :, :, 0],
                               [[4 / 3, 8 / 3], [16 / 3, 20 / 3]], rtol=1e-6)  # TF 2.21's values
    img = RNG.random((5, 7, 3)).astype(np.float32)
    assert tf.image.resize(img, [9, 4]).shape == (9, 4, 3)
    assert tf.image.resize(img, [10, 10], preserve_aspect_ratio=True).shape == (7, 10, 3)
    u8 = (img * 255).astype(np.uint8)
    assert tf.image.resize(u8, [3, 3], method="nearest").dtype == tf.uint8
    # bilinear by explicit loops over TF's half-pixel formula
    out = tf.image.resize(img, [3, 11]).numpy()
    for i in range(3):
        for j in range(11):
            sy, sx = (i + 0.5) * 5 / 3 - 0.5, (j + 0.5) * 7 / 11 - 0.5
            y0, x0 = int(np.floor(sy)), int(np.floor(sx))
            ty, tx = sy - y0, sx - x0
            def px(r, c):
                return img[min(max(r, 0), 4), min(max(c, 0), 6)]
            want = ((1 - ty) * ((1 - tx) * px(y0, x0) + tx * px(y0, x0 + 1))
                    + ty * ((1 - tx) * px(y0 + 1, x0) + tx * px(y0 + 1, x0 + 1)))
            np.testing.assert_allclose(out[i, j], want, atol=1e-5)
    with pytest.raises(ValueError, match="unknown method"):
        tf.image.resize(img, [2, 2], method="lanczos9")
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize(img[0], [2, 2])


def test_resize_has_a_gradient():
    img = tf.constant(RNG.random((1, 4, 5, 2)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(img)
        total = tf.reduce_sum(tf.image.resize(img, [7, 3]) * np.arange(42, dtype=np.float32).reshape(1, 7, 3, 2))
    grad = tape.gradient(total, img).numpy()
    eps, x = 1e-2, img.numpy()

    def f(v):
        return float(np.sum(tf.image.resize(v, [7, 3]).numpy() * np.arange(42).reshape(1, 7, 3, 2)))
    for idx in [(0, 0, 0, 0), (0, 2, 3, 1), (0, 3, 4, 0)]:
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        np.testing.assert_allclose(grad[idx], (f(plus) - f(minus)) / (2 * eps), rtol=1e-2, atol=1e-2)


def test_flips_rotations_and_crops_match_numpy():
    img = RNG.random((2, 5, 7, 3)).astype(np.float32)
    np.testing.assert_array_equal(tf.image.flip_left_right(img).numpy(), img[:, :, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(img[0]).numpy(), img[0, ::-1])
    for k in range(4):
        np.testing.assert_array_equal(tf.image.rot90(img, k).numpy(), np.rot90(img, k, axes=(1, 2)))
    np.testing.assert_array_equal(tf.image.transpose(img[0]).numpy(), img[0].transpose(1, 0, 2))
    np.testing.assert_array_equal(tf.image.crop_to_bounding_box(img, 1, 2, 3, 4).numpy(), img[:, 1:4, 2:6])
    padded = tf.image.pad_to_bounding_box(img[0], 1, 2, 8, 10).numpy()
    assert padded.shape == (8, 10, 3) and np.array_equal(padded[1:6, 2:9], img[0]) and padded.sum() == img[0].sum()
    np.testing.assert_array_equal(tf.image.central_crop(img, 0.6).numpy(), img[:, 1:4, 1:6])  # TF's rounding
    crop_pad = tf.image.resize_with_crop_or_pad(img[0], 4, 9).numpy()
    assert crop_pad.shape == (4, 9, 3) and np.array_equal(crop_pad[:, 1:8], img[0, 0:4])
    with pytest.raises(ValueError, match="does not fit"):
        tf.image.crop_to_bounding_box(img, 3, 0, 3, 7)
    compiled = tf.function(lambda v: tf.image.rot90(tf.image.central_crop(v, 0.6), 1))(img)
    np.testing.assert_array_equal(compiled.numpy(), np.rot90(img[:, 1:4, 1:6], 1, axes=(1, 2)))


def test_colour_and_dtype_conversions_give_tensorflows_values():
    assert tf.image.rgb_to_grayscale(tf.constant([[[200, 100, 50]]], tf.uint8)).numpy().tolist() == [[[124]]]
    np.testing.assert_allclose(tf.image.convert_image_dtype(tf.constant([0, 128, 255], tf.uint8), tf.float32),
                               [0.0, 0.501960814, 1.0], rtol=1e-6)
    back = tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 0.999, 1.2]), tf.uint8, saturate=True)
    assert back.numpy().tolist() == [0, 127, 255, 255]
    bright = tf.image.adjust_brightness(tf.constant([[[10, 250, 128]]], tf.uint8), 0.1)
    assert bright.numpy().tolist() == [[[35, 255, 153]]]
    gray = np.full((2, 2, 1), 0.25, np.float32)
    assert tf.image.grayscale_to_rgb(gray).shape == (2, 2, 3)
    img = RNG.random((2, 5, 7, 3)).astype(np.float32)
    mean = img.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(tf.image.adjust_contrast(img, 1.7).numpy(), (img - mean) * 1.7 + mean, atol=1e-6)
    std = tf.image.per_image_standardization(img).numpy()
    np.testing.assert_allclose(std.mean(axis=(1, 2, 3)), [0, 0], atol=1e-6)
    np.testing.assert_allclose(std.std(axis=(1, 2, 3)), [1, 1], atol=1e-5)
    np.testing.assert_allclose(tf.image.adjust_gamma(img, 2.0, gain=0.5).numpy(), 0.5 * img ** 2, rtol=1e-5)


def test_random_augmentations_are_seeded_and_stateless_ones_repeat():
    batch = RNG.random((64, 4, 4, 1)).astype(np.float32)
    flipped = tf.image.random_flip_left_right(batch, seed=1).numpy()
    same = [np.array_equal(f, b) for f, b in zip(flipped, batch)]
    mirrored = [np.array_equal(f, b[:, ::-1]) for f, b in zip(flipped, batch)]
    assert all(s or m for s, m in zip(same, mirrored)) and 16 < sum(mirrored) < 48
    a = tf.image.stateless_random_flip_up_down(batch, seed=[1, 2]).numpy()
    np.testing.assert_array_equal(a, tf.image.stateless_random_flip_up_down(batch, seed=[1, 2]).numpy())
    b = tf.image.stateless_random_brightness(batch, 0.2, seed=[3, 4]).numpy() - batch
    assert np.ptp(b) < 1e-6 and abs(b.flat[0]) <= 0.2
    crop = tf.image.random_crop(batch[0], [2, 3, 1], seed=5).numpy()
    windows = [batch[0][i:i + 2, j:j + 3] for i in range(3) for j in range(2)]
    assert crop.shape == (2, 3, 1) and any(np.array_equal(crop, w) for w in windows)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(batch, 0.5, 0.2)


def test_measures():
    img = RNG.random((2, 5, 7, 3)).astype(np.float32)
    want = np.abs(np.diff(img, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(img, axis=2)).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.total_variation(img).numpy(), want, rtol=1e-5)
    dy, dx = tf.image.image_gradients(img)
    assert dy.shape == img.shape and np.allclose(dy.numpy()[:, :-1], np.diff(img, axis=1))
    assert np.all(dx.numpy()[:, :, -1] == 0)
    noisy = img + 0.01
    np.testing.assert_allclose(tf.image.psnr(img, noisy, 1.0).numpy(), [40.0, 40.0], rtol=1e-4)
