"""tfn.keras.metrics beyond accuracy: confusion counts, Precision/Recall (thresholds, top_k, class_id), AUC (ROC and
PR, each summation) against NumPy references, top-k accuracies, RMSE and the probabilistic metrics; all of them
accumulating over the batches of a compiled evaluate exactly as over one batch, and by name in compile."""
import numpy as np
import pytest

import tfn as tf

K = tf.keras
RNG = np.random.default_rng(8)
LABELS = RNG.integers(0, 2, 40).astype(np.float32)
SCORES = np.clip(LABELS * 0.3 + RNG.uniform(0, 0.7, 40), 0, 1).astype(np.float32)
WEIGHTS = RNG.uniform(0.5, 2.0, 40).astype(np.float32)


def _counts(labels, scores, thresholds, w=None):
    w = np.ones_like(scores) if w is None else w
    pos = scores[None, :] > np.asarray(thresholds)[:, None]
    lab = labels[None, :] != 0
    return {"tp": (pos & lab) @ w, "fp": (pos & ~lab) @ w, "tn": (~pos & ~lab) @ w, "fn": (~pos & lab) @ w}


def test_confusion_counts_with_thresholds_and_weights():
    thresholds = [0.2, 0.5, 0.8]
    want = _counts(LABELS, SCORES, thresholds, WEIGHTS)
    for cls, key in [(K.metrics.TruePositives, "tp"), (K.metrics.FalsePositives, "fp"),
                     (K.metrics.TrueNegatives, "tn"), (K.metrics.FalseNegatives, "fn")]:
        m = cls(thresholds=thresholds)
        m.update_state(LABELS[:25], SCORES[:25], sample_weight=WEIGHTS[:25])
        m.update_state(LABELS[25:], SCORES[25:], sample_weight=WEIGHTS[25:])
        np.testing.assert_allclose(m.result().numpy(), want[key], rtol=1e-5)
        single = cls()
        single.update_state(LABELS, SCORES)
        assert float(single.result()) == _counts(LABELS, SCORES, [0.5])[key][0]
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]"):
        K.metrics.TruePositives(thresholds=1.5)


def test_precision_and_recall():
    c = _counts(LABELS, SCORES, [0.3, 0.6])
    p, r = K.metrics.Precision(thresholds=[0.3, 0.6]), K.metrics.Recall(thresholds=[0.3, 0.6])
    for m in (p, r):
        m.update_state(LABELS[:10], SCORES[:10])
        m.update_state(LABELS[10:], SCORES[10:])
    np.testing.assert_allclose(p.result().numpy(), c["tp"] / (c["tp"] + c["fp"]), rtol=1e-6)
    np.testing.assert_allclose(r.result().numpy(), c["tp"] / (c["tp"] + c["fn"]), rtol=1e-6)
    p.reset_state()
    np.testing.assert_array_equal(p.result().numpy(), [0.0, 0.0])  # no predictions: 0, not NaN


def test_precision_recall_top_k_and_class_id():
    y = np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 12)]
    s = RNG.uniform(0, 1, (12, 4)).astype(np.float32)
    top2 = np.argsort(-s, axis=-1)[:, :2]
    kept = np.zeros_like(s, bool)
    np.put_along_axis(kept, top2, True, axis=-1)
    tp, fp, fn = (kept & (y == 1)).sum(), (kept & (y == 0)).sum(), (~kept & (y == 1)).sum()
    p, r = K.metrics.Precision(top_k=2), K.metrics.Recall(top_k=2)
    p.update_state(y, s)
    r.update_state(y, s)
    assert float(p.result()) == pytest.approx(tp / (tp + fp))
    assert float(r.result()) == pytest.approx(tp / (tp + fn))
    pc = K.metrics.Precision(class_id=2)
    pc.update_state(y, s)
    col_pos, col_lab = s[:, 2] > 0.5, y[:, 2] == 1
    assert float(pc.result()) == pytest.approx((col_pos & col_lab).sum() / col_pos.sum())


def _auc_reference(labels, scores, n, curve, method):
    """Keras's discretised AUC, from its definition: thresholds i/(n-1) with the ends nudged past 0 and 1."""
    thr = [-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7]
    c = {k: v.astype(np.float64) for k, v in _counts(labels, scores, thr).items()}
    div = lambda a, b: np.divide(a, b, out=np.zeros_like(a), where=b != 0)  # noqa: E731
    recall = div(c["tp"], c["tp"] + c["fn"])
    if curve == "ROC":
        x, y = div(c["fp"], c["fp"] + c["tn"]), recall
    else:
        x, y = recall, div(c["tp"], c["tp"] + c["fp"])
    h = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
         "majoring": np.maximum(y[:-1], y[1:])}[method]
    return ((x[:-1] - x[1:]) * h).sum()


@pytest.mark.parametrize("curve, method", [("ROC", "interpolation"), ("ROC", "minoring"), ("ROC", "majoring"),
                                           ("PR", "minoring"), ("PR", "majoring")])
def test_auc_matches_its_definition(curve, method):
    m = K.metrics.AUC(num_thresholds=37, curve=curve, summation_method=method)
    m.update_state(LABELS[:17], SCORES[:17])
    m.update_state(LABELS[17:], SCORES[17:])
    np.testing.assert_allclose(float(m.result()), _auc_reference(LABELS, SCORES, 37, curve, method), rtol=1e-5)


def test_auc_approaches_the_exact_areas():
    pos, neg = SCORES[LABELS == 1], SCORES[LABELS == 0]
    exact_roc = ((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())
    roc = K.metrics.AUC(num_thresholds=2000)
    roc.update_state(LABELS, SCORES)
    assert float(roc.result()) == pytest.approx(exact_roc, abs=2e-3)
    order = np.argsort(-SCORES)
    hits = LABELS[order]
    average_precision = (np.cumsum(hits) / np.arange(1, 41) * hits).sum() / hits.sum()
    pr = K.metrics.AUC(num_thresholds=2000, curve="PR")
    pr.update_state(LABELS, SCORES)
    assert float(pr.result()) == pytest.approx(average_precision, abs=2e-2)
    perfect = K.metrics.AUC(curve="PR")
    perfect.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert float(perfect.result()) == pytest.approx(1.0, abs=1e-6)


def test_auc_from_logits_multi_label_and_bad_arguments():
    logits = np.log(SCORES / (1 - SCORES + 1e-6) + 1e-6).astype(np.float32)
    a, b = K.metrics.AUC(from_logits=True), K.metrics.AUC()
    a.update_state(LABELS, logits)
    b.update_state(LABELS, 1 / (1 + np.exp(-logits)))
    assert float(a.result()) == pytest.approx(float(b.result()), abs=1e-6)
    y2 = np.stack([LABELS, 1 - LABELS], -1)
    s2 = np.stack([SCORES, RNG.uniform(0, 1, 40).astype(np.float32)], -1)
    ml = K.metrics.AUC(multi_label=True, num_labels=2, num_thresholds=50)
    ml.update_state(y2, s2)
    each = [_auc_reference(y2[:, i], s2[:, i], 50, "ROC", "interpolation") for i in range(2)]
    assert float(ml.result()) == pytest.approx(np.mean(each), rel=1e-5)
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        K.metrics.AUC(curve="ROCK")
    with pytest.raises(ValueError, match="num_thresholds"):
        K.metrics.AUC(num_thresholds=1)


def test_top_k_accuracies_count_ties_in():
    s = np.array([[0.1, 0.5, 0.4, 0.0], [0.3, 0.3, 0.3, 0.1], [0.9, 0.05, 0.03, 0.02]], np.float32)
    labels = np.array([2, 2, 3])
    m = K.metrics.SparseTopKCategoricalAccuracy(k=2)
    m.update_state(labels, s)
    assert float(m.result()) == pytest.approx(2 / 3)  # row 1: a three-way tie at the top counts in
    c = K.metrics.TopKCategoricalAccuracy(k=1)
    c.update_state(np.eye(4)[labels], s)
    assert float(c.result()) == pytest.approx(1 / 3)


def test_rmse_and_probabilistic_metrics():
    t, p = RNG.standard_normal((10, 3)), RNG.standard_normal((10, 3))
    m = K.metrics.RootMeanSquaredError()
    m.update_state(t[:4], p[:4])
    m.update_state(t[4:], p[4:])
    assert float(m.result()) == pytest.approx(np.sqrt(((t - p) ** 2).mean()), rel=1e-5)
    probs = RNG.dirichlet(np.ones(3), 10).astype(np.float32)
    labels = RNG.integers(0, 3, 10)
    sce = K.metrics.SparseCategoricalCrossentropy()
    sce.update_state(labels, probs)
    assert float(sce.result()) == pytest.approx(-np.log(probs[np.arange(10), labels]).mean(), rel=1e-5)
    cs = K.metrics.CosineSimilarity()
    cs.update_state(t, p)
    cos = (t * p).sum(-1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1)
    assert float(cs.result()) == pytest.approx(cos.mean(), rel=1e-5)
    s = K.metrics.Sum()
    s.update_state([1.0, 2.0], sample_weight=[2.0, 0.5])
    s.update_state(3.0)
    assert float(s.result()) == 6.0


def test_metrics_accumulate_over_compiled_evaluate_batches():
    x = RNG.standard_normal((23, 3)).astype(np.float32)
    y = (x[:, :1] - x[:, 1:2] > 0).astype(np.float32)
    model = K.Sequential([K.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(optimizer="sgd", loss="binary_crossentropy",
                  metrics=["AUC", "precision", K.metrics.Recall(thresholds=[0.3, 0.7]), "root_mean_squared_error",
                           K.metrics.AUC(curve="PR", summation_method="minoring", name="pr"), "binary_crossentropy"])
    logs = model.evaluate(x, y, batch_size=5, verbose=0, return_dict=True)  # 5 batches, the last of 3
    s = model.predict(x)[:, 0]
    labels = y[:, 0]
    c = _counts(labels, s, [0.3, 0.5, 0.7])
    assert logs["AUC"] == pytest.approx(_auc_reference(labels, s, 200, "ROC", "interpolation"), rel=1e-5)
    assert logs["pr"] == pytest.approx(_auc_reference(labels, s, 200, "PR", "minoring"), rel=1e-5)
    assert logs["precision"] == pytest.approx(c["tp"][1] / (c["tp"][1] + c["fp"][1]), rel=1e-6)
    np.testing.assert_allclose(logs["recall"], (c["tp"] / (c["tp"] + c["fn"]))[[0, 2]], rtol=1e-6)
    assert logs["root_mean_squared_error"] == pytest.approx(np.sqrt(((s - labels) ** 2).mean()), rel=1e-5)
    assert logs["binary_crossentropy"] == pytest.approx(logs["loss"], rel=1e-5)
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0, validation_data=(x, y))
    assert isinstance(history.history["val_recall"][0], np.ndarray)  # a vector metric logs its values


def test_metric_names_in_compile():
    for name, cls in [("auc", K.metrics.AUC), ("Precision", K.metrics.Precision), ("recall", K.metrics.Recall),
                      ("top_k_categorical_accuracy", K.metrics.TopKCategoricalAccuracy),
                      ("mape", K.metrics.MeanAbsolutePercentageError), ("true_positives", K.metrics.TruePositives),
                      ("RootMeanSquaredError", K.metrics.RootMeanSquaredError)]:
        m = K.metrics.get(name)
        assert isinstance(m, cls) and m.name == name
    assert isinstance(K.metrics.get("accuracy", K.losses.BinaryFocalCrossentropy()), K.metrics.BinaryAccuracy)
    assert isinstance(K.metrics.get("acc", K.losses.CategoricalFocalCrossentropy()), K.metrics.CategoricalAccuracy)
    fn = K.metrics.get(lambda t, p: tf.abs(t - p))
    fn.update_state([1.0, 2.0], [0.0, 0.0])
    assert float(fn.result()) == 1.5
    with pytest.raises(ValueError, match="Could not interpret metric identifier: aucc"):
        K.metrics.get("aucc")


def _f_beta_reference(y, s, beta, threshold=None, w=None):
    pred = (s >= s.max(-1, keepdims=True)) & (np.abs(s) > 1e-9) if threshold is None else s > threshold
    pred = pred.astype(np.float64)
    w = np.ones((len(y), 1)) if w is None else w[:, None]
    tp, fp, fn = (pred * y * w).sum(0), (pred * (1 - y) * w).sum(0), ((1 - pred) * y * w).sum(0)
    p, r = tp / (tp + fp + 1e-7), tp / (tp + fn + 1e-7)
    return (1 + beta ** 2) * p * r / (beta ** 2 * p + r + 1e-7), (y * w).sum(0)


def test_f_scores_per_class_and_averaged():
    y = np.eye(3)[RNG.integers(0, 3, 30)]
    s = RNG.dirichlet(np.ones(3), 30)
    w = RNG.uniform(0.5, 2, 30)
    per_class, support = _f_beta_reference(y, s, 1.0, w=w)
    f = K.metrics.F1Score()
    f.update_state(y[:11], s[:11], sample_weight=w[:11])
    f.update_state(y[11:], s[11:], sample_weight=w[11:])
    np.testing.assert_allclose(f.result().numpy(), per_class, rtol=1e-5)
    for average, want in (("macro", per_class.mean()), ("weighted", (per_class * support).sum() / support.sum())):
        m = K.metrics.F1Score(average=average)
        m.update_state(y, s, sample_weight=w)
        assert float(m.result()) == pytest.approx(want, rel=1e-5)
    fb, _ = _f_beta_reference(y, s, 2.0, threshold=0.4)
    m = K.metrics.FBetaScore(beta=2.0, threshold=0.4)
    m.update_state(y, s)
    np.testing.assert_allclose(m.result().numpy(), fb, rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid `beta`"):
        K.metrics.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="2D inputs"):
        K.metrics.F1Score().update_state(y[:, 0], s[:, 0])


def test_variables_made_by_the_first_compiled_update():
    x = RNG.standard_normal((21, 3)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[RNG.integers(0, 3, 21)]
    model = K.Sequential([K.layers.Dense(3, activation="softmax", input_shape=(3,))])
    model.compile(optimizer="sgd", loss="categorical_crossentropy",
                  metrics=[K.metrics.F1Score(average="macro"), K.metrics.AUC(multi_label=True, name="auc")])
    logs = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
    s = model.predict(x)
    assert logs["f1_score"] == pytest.approx(_f_beta_reference(y, s, 1.0)[0].mean(), rel=1e-5)
    each = [_auc_reference(y[:, i], s[:, i], 200, "ROC", "interpolation") for i in range(3)]
    assert logs["auc"] == pytest.approx(np.mean(each), rel=1e-5)
    assert model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True) == logs  # reset, then the same sums
