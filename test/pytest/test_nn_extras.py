"""tf.nn's conv1d, conv2d_transpose, conv1d_transpose, 1-D and N-D pooling, space_to_depth/depth_to_space,
embedding_lookup, sufficient_statistics/normalize_moments, crelu, local_response_normalization and
compute_average_loss: eagerly and compiled against NumPy, and gradients by central differences."""
import numpy as np
import pytest
from opcheck import central_differences, check

import tfn

RNG = np.random.default_rng(8)


def _conv1d_ref(x, w, stride, same):
    k = w.shape[0]
    n = x.shape[1]
    out = -(-n // stride) if same else (n - k) // stride + 1
    total = max((out - 1) * stride + k - n, 0) if same else 0
    xp = np.pad(x, ((0, 0), (total // 2, total - total // 2), (0, 0)))
    return np.stack([sum(xp[:, i * stride + j] @ w[j] for j in range(k)) for i in range(out)], 1)


@pytest.mark.parametrize("stride,padding", [(1, "SAME"), (2, "SAME"), (2, "VALID")])
def test_conv1d(stride, padding):
    x = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    w = RNG.normal(size=(3, 3, 4)).astype(np.float32)
    check(lambda x, w: tfn.nn.conv1d(x, w, stride, padding),
          lambda x, w: _conv1d_ref(x, w, stride, padding == "SAME"), x, w)


def _grads(fn, args):
    def run(*xs):
        with tfn.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            loss = tfn.reduce_sum(fn(*xs) * tfn.sin(fn(*xs)))
        return tape.gradient(loss, list(xs))
    eager = run(*[tfn.constant(a) for a in args])
    compiled = tfn.function(run)(*[tfn.constant(a) for a in args])
    return eager, compiled


def _numeric(fn, args):
    def loss(vals):
        y = fn(*[tfn.constant(v) for v in vals]).numpy()
        return float(np.sum(y * np.sin(y)))
    return central_differences(loss, [a.copy() for a in args], 1e-6)


@pytest.mark.parametrize("strides,padding", [(1, "SAME"), (2, "SAME"), (2, "VALID")])
def test_conv2d_transpose_is_conv2d_input_gradient(strides, padding):
    x = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    w = RNG.normal(size=(3, 2, 3, 5)).astype(np.float32)
    g = RNG.normal(size=tfn.nn.conv2d(x, w, strides, padding).shape).astype(np.float32)
    xt = tfn.constant(x)
    with tfn.GradientTape() as tape:
        tape.watch(xt)
        loss = tfn.reduce_sum(tfn.nn.conv2d(xt, w, strides, padding) * g)
    want = tape.gradient(loss, xt).numpy()
    check(lambda g, w: tfn.nn.conv2d_transpose(g, w, x.shape, strides, padding), lambda g, w: want, g, w)
    with pytest.raises(ValueError, match="conv2d's output shape"):
        tfn.nn.conv2d_transpose(g, w, [2, 20, 6, 3], strides, padding)


def test_conv_transpose_gradients():
    y = RNG.normal(size=(1, 3, 3, 2))
    w = RNG.normal(size=(2, 3, 4, 2))
    fn = lambda y, w: tfn.nn.conv2d_transpose(y, w, [1, 5, 6, 4], 2, "SAME")  # noqa: E731
    want = _numeric(fn, [y, w])
    for got in _grads(fn, [y, w]):
        for g, n in zip(got, want):
            np.testing.assert_allclose(g.numpy(), n, rtol=1e-5, atol=1e-6)
    y1, w1 = RNG.normal(size=(2, 4, 3)), RNG.normal(size=(3, 2, 3))
    out = tfn.nn.conv1d_transpose(y1, w1, [2, 8, 2], 2)
    with tfn.GradientTape() as tape:
        x1 = tfn.constant(np.zeros((2, 8, 2)))
        tape.watch(x1)
        loss = tfn.reduce_sum(tfn.nn.conv1d(x1, w1, 2, "SAME") * y1)
    np.testing.assert_allclose(out.numpy(), tape.gradient(loss, x1).numpy(), rtol=1e-12)


def test_pooling_1d_and_nd():
    x = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    windows = np.stack([x[:, i * 2:i * 2 + 3] for i in range(4)], 1)
    check(lambda x: tfn.nn.max_pool1d(x, 3, 2, "VALID"), lambda x: windows.max(2), x)
    check(lambda x: tfn.nn.avg_pool1d(x, 3, 2, "VALID"), lambda x: windows.mean(2), x)
    check(lambda x: tfn.nn.max_pool(x, [3], [2], "VALID"), lambda x: windows.max(2), x)
    x4 = x.reshape(2, 9, 3, 1)
    check(lambda x: tfn.nn.avg_pool(x, 2, 1, "SAME"), lambda x: tfn.nn.avg_pool2d(x, 2, 1, "SAME").numpy(), x4)
    with pytest.raises(ValueError, match="1-D and 2-D"):
        tfn.nn.max_pool(x[0], 2, 2, "SAME")


def test_space_depth():
    x = RNG.normal(size=(2, 4, 6, 3)).astype(np.float32)
    want = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 3, 12)
    check(lambda x: tfn.nn.space_to_depth(x, 2), lambda x: want, x)
    check(lambda y: tfn.nn.depth_to_space(y, 2), lambda y: x, want)
    with pytest.raises(ValueError, match="multiples of block_size"):
        tfn.nn.space_to_depth(x, 4)


def test_embedding_lookup():
    p = RNG.normal(size=(10, 4))
    ids = np.array([[1, 3], [9, 1]], np.int32)
    check(lambda p, i: tfn.nn.embedding_lookup(p, i), lambda p, i: p[i], p, ids)
    check(lambda a, b, i: tfn.nn.embedding_lookup([a, b], i), lambda a, b, i: p[i], p[:5].copy(), p[5:].copy(), ids)
    norms = np.linalg.norm(tfn.nn.embedding_lookup(p, ids, max_norm=0.5).numpy(), axis=-1)
    np.testing.assert_allclose(norms, np.minimum(np.linalg.norm(p[ids], axis=-1), 0.5))
    eager, compiled = _grads(lambda p: tfn.nn.embedding_lookup(p, ids), [p])
    want = _numeric(lambda p: tfn.nn.embedding_lookup(p, ids), [p])
    for got in (eager, compiled):
        np.testing.assert_allclose(tfn.convert_to_tensor(got[0]).numpy(), want[0], rtol=1e-5, atol=1e-6)


def test_moments_crelu_lrn_average_loss():
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)

    def moments(x):
        return tfn.nn.normalize_moments(*tfn.nn.sufficient_statistics(x, [0, 1, 2], shift=0.5))
    check(lambda x: moments(x)[0], lambda x: x.mean((0, 1, 2)), x)
    check(lambda x: moments(x)[1], lambda x: x.var((0, 1, 2)), x)
    check(lambda x: tfn.nn.sufficient_statistics(x, [1])[0], lambda x: np.float32(3), x)
    check(tfn.nn.crelu, lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1), x)
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0),) * 3 + ((2, 2),))
    total = sum(sq[..., k:k + 5] for k in range(5))
    check(lambda x: tfn.nn.lrn(x, 2, 1.5, 0.3, 0.75), lambda x: (x / (1.5 + 0.3 * total) ** 0.75).astype(np.float32),
          x)
    lrn = lambda v: tfn.nn.local_response_normalization(v, 1, 1.0, 0.5, 0.5)  # noqa: E731
    small = x[:1, :1, :2].astype(np.float64)
    want = _numeric(lrn, [small])
    for got in _grads(lrn, [small]):
        np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-5, atol=1e-6)
    check(lambda v: tfn.nn.compute_average_loss(v), lambda v: np.float32(v.sum() / 4), x[0, 0, :, 0])
    check(lambda v, w: tfn.nn.compute_average_loss(v, w, global_batch_size=8),
          lambda v, w: np.float32((v * w).sum() / 8), x[0, 0, :, 0], x[0, 0, :, 1])


def test_conv_dispatch_separable_atrous_weighted_moments():
    x = RNG.normal(size=(2, 5, 6, 3)).astype(np.float32)
    dw = RNG.normal(size=(3, 3, 3, 2)).astype(np.float32)
    pw = RNG.normal(size=(1, 1, 6, 4)).astype(np.float32)
    ref = tfn.nn.conv2d(tfn.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME"), pw, 1, "VALID").numpy()
    check(lambda x, d, p: tfn.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME"), lambda *a: ref, x, dw, pw)
    w = dw[..., :1]
    check(lambda x, w: tfn.nn.atrous_conv2d(x, w, 2, "SAME"),
          lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME", dilations=2).numpy(), x, w)
    check(lambda x, w: tfn.nn.convolution(x, w, padding="SAME"), lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME").numpy(),
          x, w)
    check(lambda x, w: tfn.nn.convolution(x, w, 2), lambda x, w: tfn.nn.conv1d(x, w, 2, "VALID").numpy(),
          x[:, 0], dw[0])
    y = tfn.nn.conv2d(x, dw, 2, "SAME")
    np.testing.assert_array_equal(tfn.nn.conv_transpose(y, dw, x.shape, 2).numpy(),
                                  tfn.nn.conv2d_transpose(y, dw, x.shape, 2).numpy())
    weights = RNG.random(size=(2, 5, 6, 1)).astype(np.float32)
    full = np.broadcast_to(weights, x.shape).astype(np.float64)
    mean = (full * x).sum((0, 1, 2)) / full.sum((0, 1, 2))
    var = (full * (x - mean) ** 2).sum((0, 1, 2)) / full.sum((0, 1, 2))
    check(lambda x, w: tfn.nn.weighted_moments(x, [0, 1, 2], w)[0], lambda x, w: mean.astype(np.float32), x, weights)
    check(lambda x, w: tfn.nn.weighted_moments(x, [0, 1, 2], w)[1], lambda x, w: var.astype(np.float32), x, weights)
    assert float(tfn.nn.scale_regularization_loss([tfn.constant(1.0), tfn.constant(2.0)])) == 3.0
