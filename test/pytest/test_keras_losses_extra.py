"""tfn.keras.losses beyond the crossentropies: each loss class and function against a NumPy reference written
from Keras's definition, the reductions and sample weights, label smoothing, and the names compile accepts."""
import numpy as np
import pytest

import tfn as tf

K = tf.keras
RNG = np.random.default_rng(21)
EPS = 1e-7
T = RNG.uniform(0.1, 2.0, (6, 4)).astype(np.float32)
P = RNG.uniform(0.1, 2.0, (6, 4)).astype(np.float32)


def _softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def _huber(t, p, d=1.0):
    e = np.abs(p - t)
    return np.where(e <= d, 0.5 * e ** 2, d * e - 0.5 * d ** 2).mean(-1)


def _l2n(x):
    return x / np.sqrt(np.maximum((x ** 2).sum(-1, keepdims=True), 1e-12))


REFERENCES = {  # name: (class, function, per-example NumPy reference)
    "mape": (K.losses.MeanAbsolutePercentageError, K.losses.mape,
             lambda t, p: 100 * np.abs((t - p) / np.maximum(np.abs(t), EPS)).mean(-1)),
    "msle": (K.losses.MeanSquaredLogarithmicError, K.losses.msle,
             lambda t, p: ((np.log(p + 1) - np.log(t + 1)) ** 2).mean(-1)),
    "huber": (K.losses.Huber, K.losses.huber, _huber),
    "log_cosh": (K.losses.LogCosh, K.losses.log_cosh, lambda t, p: np.log(np.cosh(p - t)).mean(-1)),
    "kld": (K.losses.KLDivergence, K.losses.kld,
            lambda t, p: (np.clip(t, EPS, 1) * np.log(np.clip(t, EPS, 1) / np.clip(p, EPS, 1))).sum(-1)),
    "poisson": (K.losses.Poisson, K.losses.poisson, lambda t, p: (p - t * np.log(p + EPS)).mean(-1)),
    "cosine_similarity": (K.losses.CosineSimilarity, K.losses.cosine_similarity,
                          lambda t, p: -(_l2n(t) * _l2n(p)).sum(-1)),
    "mse": (K.losses.MeanSquaredError, K.losses.MSE, lambda t, p: ((t - p) ** 2).mean(-1)),
    "mae": (K.losses.MeanAbsoluteError, K.losses.MAE, lambda t, p: np.abs(t - p).mean(-1)),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_regression_losses_match_numpy(name):
    cls, fn, ref = REFERENCES[name]
    want = ref(T.astype(np.float64), P.astype(np.float64))
    np.testing.assert_allclose(fn(T, P).numpy(), want, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(float(cls()(T, P)), want.mean(), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(float(K.losses.get(name)(T, P)), want.mean(), rtol=2e-5, atol=1e-6)


def test_huber_delta_and_log_cosh_stay_finite():
    t, p = np.zeros((2, 3), np.float32), np.array([[0.5, -2.0, 4.0], [100.0, -100.0, 0.0]], np.float32)
    np.testing.assert_allclose(K.losses.Huber(delta=2.0)(t, p).numpy(), _huber(t, p, 2.0).mean(), rtol=1e-6)
    big = K.losses.log_cosh(t, p).numpy()
    assert np.all(np.isfinite(big))
    np.testing.assert_allclose(big[1], (100 - np.log(2)) * 2 / 3, rtol=1e-6)


def test_hinge_losses_take_zero_one_labels_as_minus_one_one():
    z = RNG.integers(0, 2, (5, 3)).astype(np.float32)
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    s = 2 * z - 1
    np.testing.assert_allclose(K.losses.hinge(z, x).numpy(), np.maximum(1 - s * x, 0).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(K.losses.hinge(s, x).numpy(), np.maximum(1 - s * x, 0).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(float(K.losses.SquaredHinge()(z, x)), (np.maximum(1 - s * x, 0) ** 2).mean(-1).mean(),
                               rtol=1e-6)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    pos, neg = (onehot * x).sum(-1), ((1 - onehot) * x).max(-1)
    np.testing.assert_allclose(float(K.losses.CategoricalHinge()(onehot, x)), np.maximum(neg - pos + 1, 0).mean(),
                               rtol=1e-6)


@pytest.mark.parametrize("balance", [False, True])
def test_binary_focal_crossentropy(balance):
    z = RNG.integers(0, 2, (6, 2)).astype(np.float64)
    logits = RNG.standard_normal((6, 2)) * 3
    p = np.clip(1 / (1 + np.exp(-logits)), EPS, 1 - EPS)
    bce = -(z * np.log(p) + (1 - z) * np.log(1 - p))
    p_t = z * p + (1 - z) * (1 - p)
    focal = (1 - p_t) ** 2.0 * bce
    if balance:
        focal *= z * 0.25 + (1 - z) * 0.75
    loss = K.losses.BinaryFocalCrossentropy(apply_class_balancing=balance, from_logits=True)
    np.testing.assert_allclose(float(loss(z.astype(np.float32), logits.astype(np.float32))), focal.mean(-1).mean(),
                               rtol=1e-4)
    np.testing.assert_allclose(float(K.losses.get("binary_focal_crossentropy")(z, p.astype(np.float32))),
                               ((1 - p_t) ** 2 * bce).mean(), rtol=1e-4)


def test_label_smoothing():
    onehot = np.eye(4, dtype=np.float32)[[0, 3, 1]]
    probs = RNG.dirichlet(np.ones(4), 3).astype(np.float32)
    smooth = onehot * 0.8 + 0.2 / 4
    want = -(smooth * np.log(np.clip(probs, EPS, 1))).sum(-1).mean()
    np.testing.assert_allclose(float(K.losses.CategoricalCrossentropy(label_smoothing=0.2)(onehot, probs)), want,
                               rtol=1e-5)
    z = np.array([[1.0], [0.0]], np.float32)
    p = np.array([[0.9], [0.3]], np.float32)
    zs = z * 0.9 + 0.05
    want = -(zs * np.log(p) + (1 - zs) * np.log(1 - p)).mean()
    np.testing.assert_allclose(float(K.losses.BinaryCrossentropy(label_smoothing=0.1)(z, p)), want, rtol=1e-5)


def test_reductions_and_sample_weights():
    per = ((T - P) ** 2).mean(-1).astype(np.float64)
    w = RNG.uniform(0, 2, 6).astype(np.float32)
    cases = {"sum_over_batch_size": (per * w).sum() / 6, "sum": (per * w).sum(),
             "mean_with_sample_weight": (per * w).sum() / w.sum(), "mean": (per * w).sum() / 6}
    for reduction, want in cases.items():
        got = K.losses.MeanSquaredError(reduction=reduction)(T, P, sample_weight=w)
        np.testing.assert_allclose(float(got), want, rtol=1e-5, err_msg=reduction)
    for none in (None, "none"):
        got = K.losses.MeanSquaredError(reduction=none)(T, P, sample_weight=w[:, None])  # (6, 1) weights: squeezed
        np.testing.assert_allclose(got.numpy(), per * w, rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        K.losses.Huber(reduction="average")


def test_names_and_custom_losses():
    for name, cls in [("huber", K.losses.Huber), ("logcosh", K.losses.LogCosh),
                      ("MSLE", K.losses.MeanSquaredLogarithmicError), ("kl_divergence", K.losses.KLDivergence),
                      ("Poisson", K.losses.Poisson), ("bce", K.losses.BinaryCrossentropy)]:
        assert isinstance(K.losses.get(name), cls)
    assert K.losses.Huber().name == "huber_loss" and K.losses.LogCosh().name == "log_cosh"
    with pytest.raises(ValueError, match="Could not interpret loss identifier: hubber"):
        K.losses.get("hubber")

    class Cubic(K.losses.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_true - y_pred) ** 3, axis=-1)

    assert Cubic().name == "cubic"
    np.testing.assert_allclose(float(Cubic(reduction="sum")(T, P)), (np.abs(T - P) ** 3).mean(-1).sum(), rtol=1e-5)


@pytest.mark.parametrize("loss", ["huber", "log_cosh", "mape"])
def test_compiled_fit_accepts_the_names(loss):
    x = RNG.standard_normal((32, 2)).astype(np.float32)
    y = x @ np.array([[1.5], [-0.5]], np.float32) + 3.0
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer=K.optimizers.Adam(0.1), loss=loss)
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, batch_size=8, epochs=8, verbose=0)
    assert history.history["loss"][-1] < before
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0),
                               float(K.losses.get(loss)(y, model.predict(x))), rtol=1e-4)
