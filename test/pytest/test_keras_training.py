"""tfn.keras training: losses and metrics against NumPy, optimizer updates against their published rules over
several steps, fit/evaluate/predict converging eagerly and compiled, the progress bar's non-terminal output."""
import io
import re

import numpy as np
import pytest

import tfn as tf

K = tf.keras
RNG = np.random.default_rng(11)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_losses_match_numpy():
    logits = RNG.standard_normal((6, 4)).astype(np.float32) * 30  # large: the log-softmax must stay finite
    labels = RNG.integers(0, 4, 6)
    want = -_log_softmax(logits.astype(np.float64))[np.arange(6), labels].mean()
    got = K.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    np.testing.assert_allclose(float(got), want, rtol=1e-5)
    probs = np.exp(_log_softmax(logits[:, :] / 30))
    onehot = np.eye(4)[labels]
    np.testing.assert_allclose(float(K.losses.CategoricalCrossentropy()(onehot, probs)),
                               -(onehot * np.log(np.clip(probs, 1e-7, 1))).sum(-1).mean(), rtol=1e-5)
    z = RNG.integers(0, 2, (6, 1)).astype(np.float32)
    x = RNG.standard_normal((6, 1)).astype(np.float32) * 20
    p = 1 / (1 + np.exp(-x.astype(np.float64)))
    bce = -(z * np.log(np.clip(p, 1e-300, 1)) + (1 - z) * np.log(np.clip(1 - p, 1e-300, 1)))
    np.testing.assert_allclose(float(K.losses.BinaryCrossentropy(from_logits=True)(z, x)), bce.mean(), rtol=1e-4)
    y, yhat = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 3))
    np.testing.assert_allclose(float(K.losses.MeanSquaredError()(y, yhat)), ((y - yhat) ** 2).mean(), rtol=1e-5)


def test_metrics_accumulate():
    acc = K.metrics.SparseCategoricalAccuracy()
    acc.update_state([1, 2], [[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]])
    acc.update_state([0], [[0.9, 0.1, 0.0]])
    assert float(acc.result()) == pytest.approx(2 / 3)
    mean = K.metrics.Mean()
    mean.update_state([1.0, 2.0, 6.0])
    assert float(mean.result()) == 3.0
    mean.reset_state()
    assert float(mean.result()) == 0.0
    exact = K.metrics.Accuracy()
    exact.update_state([1, 2, 3, 4], [1, 2, 0, 4])
    assert float(exact.result()) == 0.75


def _run(opt, steps=4):
    """Variable trajectory of `steps` updates with gradients g_t = 2 w + t (a fixed recipe the references reuse)."""
    w = tf.Variable(np.array([1.0, -2.0, 0.5], np.float32))
    out = []
    for t in range(steps):
        g = 2 * w.numpy() + t
        opt.apply_gradients([(tf.constant(g), w)])
        out.append(w.numpy().copy())
    return np.array(out)


def _reference(update, steps=4):
    w = np.array([1.0, -2.0, 0.5], np.float64)
    state, out = {}, []
    for t in range(steps):
        w = update(w, 2 * w + t, t + 1, state)
        out.append(w.copy())
    return np.array(out)


def _sgd(lr, mom, nesterov):
    def update(w, g, t, s):
        if not mom:
            return w - lr * g
        s["m"] = mom * s.get("m", 0) - lr * g
        return w + (mom * s["m"] - lr * g if nesterov else s["m"])
    return update


def _adam(lr, b1=0.9, b2=0.999, eps=1e-7, wd=0.0):
    def update(w, g, t, s):
        w = w - lr * wd * w
        s["m"] = s.get("m", 0) + (g - s.get("m", 0)) * (1 - b1)
        s["v"] = s.get("v", 0) + (g * g - s.get("v", 0)) * (1 - b2)
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        return w - alpha * s["m"] / (np.sqrt(s["v"]) + eps)
    return update


def _rmsprop(lr, rho=0.9, eps=1e-7, mom=0.0):
    def update(w, g, t, s):
        s["v"] = rho * s.get("v", 0) + (1 - rho) * g * g
        inc = lr * g / np.sqrt(s["v"] + eps)
        if mom:
            s["m"] = mom * s.get("m", 0) + inc
            inc = s["m"]
        return w - inc
    return update


@pytest.mark.parametrize("make,update", [
    (lambda: K.optimizers.SGD(0.1), _sgd(0.1, 0, False)),
    (lambda: K.optimizers.SGD(0.1, momentum=0.9), _sgd(0.1, 0.9, False)),
    (lambda: K.optimizers.SGD(0.1, momentum=0.9, nesterov=True), _sgd(0.1, 0.9, True)),
    (lambda: K.optimizers.Adam(0.1), _adam(0.1)),
    (lambda: K.optimizers.AdamW(0.1, weight_decay=0.05), _adam(0.1, wd=0.05)),
    (lambda: K.optimizers.RMSprop(0.01), _rmsprop(0.01)),
    (lambda: K.optimizers.RMSprop(0.01, momentum=0.5), _rmsprop(0.01, mom=0.5)),
], ids=["sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "rmsprop_momentum"])
def test_optimizer_updates_follow_published_rules(make, update):
    np.testing.assert_allclose(_run(make()), _reference(update), rtol=2e-5, atol=1e-6)


def test_exponential_decay_and_clipnorm():
    schedule = K.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    lrs = []

    def update(w, g, t, s):
        lrs.append(0.1 * 0.5 ** ((t - 1) / 2))
        return w - lrs[-1] * g

    np.testing.assert_allclose(_run(K.optimizers.SGD(schedule)), _reference(update), rtol=1e-5)

    def clipped(w, g, t, s):
        return w - 0.1 * g * min(1.0, 1.0 / np.linalg.norm(g))

    np.testing.assert_allclose(_run(K.optimizers.SGD(0.1, clipnorm=1.0)), _reference(clipped), rtol=1e-5)


def test_optimizer_compiled_equals_eager_and_slots_are_lazy():
    opt = K.optimizers.Adam(0.1)
    assert len(opt.variables) == 1
    w = tf.Variable(np.array([1.0, -2.0, 0.5], np.float32))

    @tf.function
    def step():
        opt.apply_gradients([(2 * w.value() + tf.cast(opt.iterations, tf.float32), w)])

    for _ in range(4):
        step()
    np.testing.assert_allclose(w.numpy(), _reference(_adam(0.1))[-1], rtol=2e-5, atol=1e-5)
    assert int(opt.iterations) == 4 and len(opt.variables) == 3


def test_the_guides_two_optimizer_program():
    opt1, opt2 = K.optimizers.Adam(learning_rate=1e-2), K.optimizers.Adam(learning_rate=1e-3)

    @tf.function
    def train_step(w, x, y, optimizer):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * x - y))
        gradients = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w, x, y = tf.Variable(2.0), tf.constant([-1.0]), tf.constant([2.0])
    train_step(w, x, y, opt1)
    with pytest.raises(ValueError, match="singleton tfn.Variables created on the first call"):
        train_step(w, x, y, opt2)
    train_1, train_2 = tf.function(train_step.python_function), tf.function(train_step.python_function)
    for i in range(4):
        (train_1 if i % 2 == 0 else train_2)(w, x, y, opt1 if i % 2 == 0 else opt2)
    assert int(opt1.iterations) == 3 and int(opt2.iterations) == 2


def _regression_data():
    x = RNG.standard_normal((128, 3)).astype(np.float32)
    return x, (x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25)


@pytest.mark.parametrize("run_eagerly", [True, False], ids=["eager", "compiled"])
def test_regression_converges(run_eagerly):
    tf.random.set_seed(1)
    x, y = _regression_data()
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse", run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=32, epochs=15, verbose=0)
    assert history.history["loss"][-1] < 1e-3 < history.history["loss"][0]
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.5, -2.0, 0.5], atol=0.02)
    assert model.evaluate(x, y, verbose=0) < 1e-3
    np.testing.assert_allclose(model.predict(x[:5]), y[:5], atol=0.05)


@pytest.mark.parametrize("run_eagerly", [True, False], ids=["eager", "compiled"])
def test_depthwise_model_learns_its_filter(run_eagerly):
    """A tiny DepthwiseConv2D model (3 x 3, 2 channels, multiplier 2, SAME) fits data made by a known filter."""
    tf.random.set_seed(3)
    x = RNG.standard_normal((64, 6, 6, 2)).astype(np.float32)
    true_k = RNG.standard_normal((3, 3, 2, 2)).astype(np.float32) * 0.5
    y = tf.nn.depthwise_conv2d(x, true_k, [1, 1, 1, 1], "SAME").numpy() + 0.1
    model = K.Sequential([K.Input(shape=(6, 6, 2)), K.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)])
    model.compile(optimizer=K.optimizers.Adam(0.05), loss="mse", run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=16, epochs=25, verbose=0)
    assert history.history["loss"][-1] < 1e-3 < history.history["loss"][0]
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), true_k, atol=0.03)
    np.testing.assert_allclose(model.layers[0].bias.numpy(), 0.1, atol=0.03)


def _blobs():
    centres = np.array([[2, 2], [-2, 2], [0, -2.5]], np.float32)
    labels = RNG.integers(0, 3, 240)
    return (centres[labels] + RNG.standard_normal((240, 2)).astype(np.float32) * 0.5), labels.astype(np.int32)


@pytest.mark.parametrize("run_eagerly", [True, False], ids=["eager", "compiled"])
def test_classifier_converges_with_validation(run_eagerly):
    tf.random.set_seed(2)
    x, y = _blobs()
    model = K.Sequential([K.Input(shape=(2,)), K.layers.Dense(16, activation="relu"), K.layers.Dropout(0.1),
                          K.layers.Dense(3)])
    model.compile(optimizer=K.optimizers.Adam(0.05), metrics=["accuracy"],
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=run_eagerly)
    history = model.fit(x[:200], y[:200], batch_size=50, epochs=8, validation_data=(x[200:], y[200:]), verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.history["accuracy"][-1] > 0.9 and history.history["val_accuracy"][-1] > 0.9
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy > 0.9 and loss < history.history["loss"][0]


def test_progress_bar_without_terminal_prints_one_line_per_epoch(capsys):
    tf.random.set_seed(3)
    x, y = _regression_data()
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    model.fit(x, y, batch_size=40, epochs=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    pattern = r"4/4 ━{20} \d+s \d+(s|ms|us)/step - loss: \d+\.\d{4} - mae: \d+\.\d{4}"
    assert re.fullmatch(pattern, lines[1]) and re.fullmatch(pattern, lines[3]), lines
    assert "\r" not in "".join(lines)


def test_progress_bar_on_a_terminal_redraws_in_place():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    bar = K.callbacks.Progbar(3, verbose=1, stream=stream)
    for i in range(1, 4):
        bar.update(i, {"loss": 1.0 / i})
    bar.finish(3, {"loss": 0.25})
    text = stream.getvalue()
    assert text.startswith("\r1/3 ━━━━━━") and text.endswith(" - loss: 0.2500\x1b[K\n") and text.count("\n") == 1
    quiet = io.StringIO()
    K.callbacks.Progbar(3, verbose=2, stream=quiet).finish(3, {"loss": 0.5})
    assert re.fullmatch(r"3/3 - \d+s - \d+(s|ms|us)/step - loss: 0\.5000\n", quiet.getvalue())


def test_save_and_load_weights(tmp_path):
    model = K.Sequential([K.layers.Dense(4, input_shape=(3,)), K.layers.BatchNormalization(), K.layers.Dense(1)])
    other = K.Sequential([K.layers.Dense(4, input_shape=(3,)), K.layers.BatchNormalization(), K.layers.Dense(1)])
    path = str(tmp_path / "model.weights.npz")
    model.save_weights(path)
    other.load_weights(path)
    for a, b in zip(model.weights, other.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="expects"):
        K.Sequential([K.layers.Dense(4, input_shape=(3,))]).load_weights(path)


def test_fit_requires_compile():
    with pytest.raises(RuntimeError, match="compile"):
        K.Sequential([K.layers.Dense(1)]).fit(np.ones((2, 1)), np.ones((2, 1)))


def test_compiled_fit_updates_batch_norm_statistics_and_accepts_float64():
    tf.random.set_seed(4)
    x = RNG.standard_normal((64, 3)) * 3 + 5  # float64, as NumPy makes it: cast to the layers' float32
    y = x.sum(axis=1, keepdims=True)
    model = K.Sequential([K.Input(shape=(3,)), K.layers.BatchNormalization(momentum=0.5), K.layers.Dense(1)])
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
    model.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0)
    bn = model.layers[0]
    np.testing.assert_allclose(bn.moving_mean.numpy(), x.mean(0), rtol=0.2)  # 6 updates with momentum 0.5
    assert model.predict(x[:4]).dtype == np.float32


def _fit_losses(data, **kwargs):
    """Per-epoch losses of a fresh seeded classifier trained on `data` (arrays, or one dataset)."""
    tf.random.set_seed(5)
    model = K.Sequential([K.Input(shape=(2,)), K.layers.Dense(8, activation="relu"), K.layers.Dense(3)])
    model.compile(optimizer=K.optimizers.SGD(0.1), metrics=["accuracy"],
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model, model.fit(*data, epochs=3, **{"verbose": 0, **kwargs}).history


def test_fit_on_a_dataset_equals_fit_on_the_same_batches_of_arrays():
    x, y = _blobs()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(50)  # 240 rows: a last batch of 40
    val = tf.data.Dataset.from_tensor_slices((x[:60], y[:60])).batch(25)
    _, expected = _fit_losses((x, y), batch_size=50, shuffle=False, validation_data=(x[:60], y[:60]))
    model, got = _fit_losses((ds,), validation_data=val)
    assert sorted(got) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-6)
    assert expected["loss"][-1] < expected["loss"][0]
    np.testing.assert_allclose(model.evaluate(ds, verbose=0), model.evaluate(x, y, verbose=0), rtol=1e-6)
    logs = model.evaluate(ds.map(lambda a, b: (a, b)), verbose=0, return_dict=True)
    assert sorted(logs) == ["accuracy", "loss"]
    np.testing.assert_allclose(model.predict(ds), model.predict(x), rtol=1e-6)
    np.testing.assert_allclose(model.predict(tf.data.Dataset.from_tensor_slices(x).batch(64)), model.predict(x),
                               rtol=1e-6)


def test_fit_on_a_generator_dataset_shows_unknown_length_then_learns_it(capsys):
    x, y = _blobs()

    def gen():
        for i in range(0, 240, 60):
            yield x[i:i + 60], y[i:i + 60]

    sig = (tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None], tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    _, expected = _fit_losses((x, y), batch_size=60, shuffle=False)
    _, got = _fit_losses((ds,), verbose=2)
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=1e-6)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/3" and len(lines) == 6
    assert all(re.match(r"4/4 - \d+s - \d+(s|ms|us)/step - accuracy: ", line) for line in lines[1::2]), lines


def test_progress_bar_of_unknown_length_counts_steps():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    bar = K.callbacks.Progbar(None, verbose=1, stream=stream)
    bar.update(1, {"loss": 1.0})
    assert re.fullmatch(r"\r      1/Unknown \d+s \d+(s|ms|us)/step - loss: 1\.0000\x1b\[K", stream.getvalue())
    bar.finish(2, {"loss": 0.5})
    assert re.search(r"\r2/2 ━{20} \d+s .* - loss: 0\.5000\x1b\[K\n$", stream.getvalue())


def test_dataset_arguments_raise_keras_errors():
    x, y = _regression_data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.fit(ds, batch_size=8, verbose=0)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model.evaluate(ds, y, verbose=0)
    with pytest.raises(ValueError, match="repeats forever"):
        model.fit(ds.repeat(), verbose=0)
    with pytest.raises(ValueError, match=r"must have \(x, y\) elements"):
        model.fit(tf.data.Dataset.from_tensor_slices(x).batch(8), verbose=0)


@pytest.mark.parametrize("bad", [7, -1])
def test_sparse_labels_outside_the_classes_raise(bad):
    """A label outside [0, classes) made an all-zero one-hot row: a silent zero loss for that example. It raises
    TF's InvalidArgumentError when the step runs, naming the label."""
    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Received a label value of {bad} which is outside the valid range of \[0, 3\)"):
        model.fit(np.ones([4, 3], np.float32), np.array([0, 1, bad, 2]), epochs=1, verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"label value of {bad}"):
        tf.keras.losses.sparse_categorical_crossentropy(tf.constant([bad]), tf.constant([[0.2, 0.3, 0.5]]))


@pytest.mark.parametrize("x, y, match", [
    (np.ones([10, 3], np.float32), np.ones([7, 1], np.float32), "Data cardinality is ambiguous.*'x' sizes: 10 'y' "
                                                                "sizes: 7"),
    ("abc", np.ones([4, 1], np.float32), "Unrecognized data type: x='abc'"),
    (np.ones([4, 3], np.float32), 3.0, "Unrecognized data type: y=3.0")])
def test_fit_and_evaluate_check_the_arrays_of_samples(x, y, match):
    """x and y of different lengths (or not arrays of samples) were an IndexError from the batching past the end of
    the shorter one; Keras's ValueError names the sizes."""
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=match):
        model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match=match):
        model.evaluate(x, y, verbose=0)
