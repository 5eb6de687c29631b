"""tfn.keras.callbacks: the hooks fit/evaluate/predict call and their order and logs, EarlyStopping (stopping
epoch, baseline, start_from_epoch, restored weights), LearningRateScheduler (no retrace), ReduceLROnPlateau,
ModelCheckpoint files, TerminateOnNaN, CSVLogger, LambdaCallback. Quantities a rule watches are written into the
logs by a callback placed before it (callbacks share each epoch's logs dict, as in Keras), so each rule is checked
against a known sequence."""
import csv
import math

import numpy as np
import pytest

import tfn as tf

K = tf.keras
RNG = np.random.default_rng(5)
X = RNG.standard_normal((24, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


def _model(lr=0.05, run_eagerly=True, optimizer=None):
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=optimizer or K.optimizers.SGD(lr), loss="mse", run_eagerly=run_eagerly)
    return model


def _feed(key, values):
    """A callback writing values[epoch] into the epoch's logs under `key`."""
    return K.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: logs.__setitem__(key, values[epoch]))


class Recorder(K.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def _note(self, *event):
        self.events.append(event)

    def on_train_begin(self, logs=None):
        self._note("train_begin", self.params["epochs"], self.params["steps"])

    def on_epoch_begin(self, epoch, logs=None):
        self._note("epoch_begin", epoch)

    def on_train_batch_begin(self, batch, logs=None):
        self._note("train_batch_begin", batch)

    def on_train_batch_end(self, batch, logs=None):
        self._note("train_batch_end", batch, sorted(logs))

    def on_test_begin(self, logs=None):
        self._note("test_begin")

    def on_test_batch_end(self, batch, logs=None):
        self._note("test_batch_end", batch, sorted(logs))

    def on_test_end(self, logs=None):
        self._note("test_end", sorted(logs))

    def on_epoch_end(self, epoch, logs=None):
        self._note("epoch_end", epoch, sorted(logs))

    def on_train_end(self, logs=None):
        self._note("train_end", sorted(logs))

    def on_predict_begin(self, logs=None):
        self._note("predict_begin")

    def on_predict_batch_end(self, batch, logs=None):
        self._note("predict_batch_end", batch, logs["outputs"].shape)

    def on_predict_end(self, logs=None):
        self._note("predict_end")


def test_hooks_run_in_keras_order_with_its_logs():
    model, rec = _model(), Recorder()
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse", metrics=["mae"], run_eagerly=True)
    history = model.fit(X[:16], Y[:16], batch_size=8, epochs=2, verbose=0, callbacks=[rec],
                        validation_data=(X[16:], Y[16:]))
    train, val = ["loss", "mae"], ["loss", "mae", "val_loss", "val_mae"]
    epoch = lambda e: [("epoch_begin", e), ("train_batch_begin", 0), ("train_batch_end", 0, train),  # noqa: E731
                       ("train_batch_begin", 1), ("train_batch_end", 1, train), ("test_begin",),
                       ("test_batch_end", 0, train), ("test_end", train), ("epoch_end", e, val)]
    assert rec.events == [("train_begin", 2, 2)] + epoch(0) + epoch(1) + [("train_end", val)]
    assert history is model.history and history.epoch == [0, 1] and sorted(history.history) == val
    assert rec.model is model
    rec.events = []
    model.evaluate(X, Y, batch_size=16, verbose=0, callbacks=[rec])
    assert rec.events == [("test_begin",), ("test_batch_end", 0, train), ("test_batch_end", 1, train),
                          ("test_end", train)]
    rec.events = []
    model.predict(X, batch_size=16, callbacks=[rec])
    assert rec.events == [("predict_begin",), ("predict_batch_end", 0, (16, 1)), ("predict_batch_end", 1, (8, 1)),
                          ("predict_end",)]


def test_epoch_logs_hold_the_epoch_metrics_and_a_callback_may_add_to_history():
    model = _model()
    seen = []
    history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[
        _feed("extra", [7.0, 8.0]), K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(dict(logs)))])
    assert history.history["extra"] == [7.0, 8.0]
    assert [s["loss"] for s in seen] == history.history["loss"]
    np.testing.assert_allclose(model.evaluate(X, Y, verbose=0), np.mean((model.predict(X) - Y) ** 2), rtol=1e-5)


def test_a_batch_callback_setting_stop_training_stops_fit_after_that_batch():
    model, batches = _model(), []

    def on_batch_end(batch, logs):
        batches.append(batch)
        if batch == 1:
            model.stop_training = True

    history = model.fit(X, Y, batch_size=4, epochs=3, verbose=0,
                        callbacks=[K.callbacks.LambdaCallback(on_train_batch_end=on_batch_end)])
    assert batches == [0, 1] and history.epoch == [0]
    model.fit(X, Y, batch_size=4, epochs=1, verbose=0)  # a new fit starts with stop_training cleared
    assert model.history.epoch == [0] and not model.stop_training


def test_callbacks_must_be_callback_instances():
    with pytest.raises(TypeError, match="keras.callbacks.Callback"):
        _model().fit(X, Y, epochs=1, verbose=0, callbacks=[lambda: None])
    with pytest.raises(TypeError, match="must be callable"):
        K.callbacks.LambdaCallback(on_epoch_end=3)


@pytest.mark.parametrize("values, kwargs, stopped", [
    ([5.0, 4.0, 4.5, 4.2, 4.1, 3.0], dict(patience=2), 3),          # no improvement on epochs 2 and 3
    ([5.0, 4.0, 3.95, 3.9, 3.0, 1.0], dict(patience=2, min_delta=0.2), 3),  # 0.05 steps are not improvements
    ([1.0, 2.0, 3.0, 2.5, 2.9, 4.0], dict(patience=1, mode="max"), 3),
    # improvements short of the baseline do not restart the patience (without it: no stop)
    ([5.0, 4.0, 4.5, 4.6, 2.0, 1.0], dict(patience=3, baseline=2.5), 2),
    ([5.0, 4.0, 4.5, 4.6, 2.0, 1.0], dict(patience=3), None),
    ([5.0, 6.0, 7.0, 8.0, 9.0, 9.5], dict(patience=1, start_from_epoch=3), 4),
    ([5.0, 4.0, 3.0, 2.0, 1.0, 0.5], dict(patience=0), None),
])
def test_early_stopping_stops_at_keras_epoch(values, kwargs, stopped):
    es = K.callbacks.EarlyStopping(monitor="score", **{"mode": "min", **kwargs})
    history = _model().fit(X, Y, batch_size=12, epochs=6, verbose=0, callbacks=[_feed("score", values), es])
    assert history.epoch == list(range(6 if stopped is None else stopped + 1))
    assert es.stopped_epoch == (stopped or 0)


def test_early_stopping_restores_the_best_epochs_weights(capsys):
    model, snapshots = _model(), []
    keep = K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: snapshots.append(model.get_weights()))
    es = K.callbacks.EarlyStopping(monitor="score", mode="min", patience=2, restore_best_weights=True, verbose=1)
    model.fit(X, Y, batch_size=8, epochs=8, verbose=0, callbacks=[keep, _feed("score", [3, 1, 2, 2, 0, 0, 0, 0]), es])
    assert len(snapshots) == 4 and es.best_epoch == 1
    for got, want in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(snapshots[1][0], snapshots[3][0])  # training moved on after the best epoch
    out = capsys.readouterr().out
    assert "Epoch 4: early stopping" in out and "Restoring model weights from the end of the best epoch: 2." in out


def test_monitor_mode_auto_follows_the_metric_direction():
    model = _model()
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse", metrics=["mae", "accuracy", "mean"],
                  run_eagerly=True)
    model.stop_training = False
    for monitor, op in (("val_loss", "lt"), ("mae", "lt"), ("val_accuracy", "gt")):
        es = K.callbacks.EarlyStopping(monitor=monitor)
        es.set_model(model)
        es._set_monitor_op()
        assert es.monitor_op.__name__ == op
    es = K.callbacks.EarlyStopping(monitor="mean")
    es.set_model(model)
    with pytest.raises(ValueError, match="automatically determine"):
        es._set_monitor_op()
    with pytest.warns(UserWarning, match="not available"):
        _model().fit(X, Y, epochs=1, verbose=0, callbacks=[K.callbacks.EarlyStopping(monitor="val_loss")])


def test_learning_rate_scheduler_sets_the_rate_the_compiled_step_reads_without_retracing():
    model = _model(lr=0.1, run_eagerly=False)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0)
    step = model._steps["train_step"]
    traces = step.experimental_get_tracing_count()
    weights = []
    schedule = K.callbacks.LearningRateScheduler(lambda epoch, lr: 0.0 if epoch == 1 else lr * 0.5)
    history = model.fit(X, Y, batch_size=8, epochs=3, verbose=0, callbacks=[
        schedule, K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: weights.append(model.get_weights()))])
    assert step.experimental_get_tracing_count() == traces and model._steps["train_step"] is step
    np.testing.assert_allclose(history.history["learning_rate"], [0.05, 0.0, 0.0])
    np.testing.assert_array_equal(weights[0][0], weights[1][0])  # lr 0 in epoch 1: no change
    np.testing.assert_array_equal(weights[1][0], weights[2][0])
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0,
              callbacks=[K.callbacks.LearningRateScheduler(lambda epoch: 0.2)])  # the one-argument form
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(0.2)
    assert not np.array_equal(model.get_weights()[0], weights[2][0])
    assert step.experimental_get_tracing_count() == traces
    with pytest.raises(ValueError, match="should be a float"):
        model.fit(X, Y, epochs=1, verbose=0, callbacks=[K.callbacks.LearningRateScheduler(lambda e, lr: "fast")])


def test_reduce_lr_on_plateau_with_cooldown_and_floor():
    model = _model(lr=1.0)
    plateau = K.callbacks.ReduceLROnPlateau(monitor="score", factor=0.5, patience=2, cooldown=2, min_lr=0.2,
                                            mode="min")
    history = model.fit(X, Y, batch_size=24, epochs=9, verbose=0, callbacks=[
        _feed("score", [5, 5, 5, 5, 5, 5, 5, 5, 5]), plateau])
    # logs hold each epoch's rate: halved (1 -> 0.5) at the end of epoch 2, cooling down through epoch 3 (the count
    # runs out at epoch 4's start, which starts waiting again), halved at 5 (0.25), at 8 floored at 0.2
    np.testing.assert_allclose(history.history["learning_rate"], [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25])
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        K.callbacks.ReduceLROnPlateau(factor=1.5)


def test_model_checkpoint_formats_names_and_saves_the_best(tmp_path):
    model, snapshots = _model(), []
    keep = K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: snapshots.append(model.get_weights()))
    every = K.callbacks.ModelCheckpoint(str(tmp_path / "all" / "w.{epoch:02d}-{score:.2f}.weights.h5"),
                                        save_weights_only=True)
    best = K.callbacks.ModelCheckpoint(str(tmp_path / "best.weights.h5"), monitor="score", mode="min",
                                       save_best_only=True, save_weights_only=True, verbose=1)
    model.fit(X, Y, batch_size=8, epochs=4, verbose=0, callbacks=[keep, _feed("score", [3.0, 1.5, 2.0, 1.75]),
                                                                  every, best])
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [
        "w.01-3.00.weights.h5", "w.02-1.50.weights.h5", "w.03-2.00.weights.h5", "w.04-1.75.weights.h5"]
    fresh = _model()
    fresh.load_weights(str(tmp_path / "best.weights.h5"))  # written at epoch 2, the best
    for got, want in zip(fresh.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(got, want)
    fresh.load_weights(str(tmp_path / "all" / "w.03-2.00.weights.h5"))
    np.testing.assert_array_equal(fresh.get_weights()[0], snapshots[2][0])
    with pytest.raises(ValueError, match="must end in `.keras`"):
        K.callbacks.ModelCheckpoint(str(tmp_path / "m.weights.h5"))
    whole = K.callbacks.ModelCheckpoint(str(tmp_path / "m-{epoch}.keras"))
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[whole])
    reloaded = K.models.load_model(str(tmp_path / "m-1.keras"))
    for got, want in zip(reloaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(KeyError, match="Failed to format"):
        _model().fit(X, Y, epochs=1, verbose=0, callbacks=[K.callbacks.ModelCheckpoint(
            str(tmp_path / "{nope}.weights.h5"), save_weights_only=True)])


def test_model_checkpoint_every_n_batches(tmp_path):
    saver = K.callbacks.ModelCheckpoint(str(tmp_path / "e{epoch}-b{batch}.weights.h5"), save_freq=4,
                                        save_weights_only=True)
    _model().fit(X, Y, batch_size=4, epochs=2, verbose=0, callbacks=[saver])  # 6 batches an epoch, 12 in all
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e1-b4.weights.h5", "e2-b2.weights.h5", "e2-b6.weights.h5"]


def test_terminate_on_nan_stops_after_the_bad_batch():
    x = X.copy()
    x[9] = np.nan  # in the third batch of 4
    batches = []
    history = _model().fit(x, Y, batch_size=4, epochs=3, shuffle=False, verbose=0, callbacks=[
        K.callbacks.TerminateOnNaN(), K.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batches.append(b))])
    assert batches == [0, 1, 2] and history.epoch == [0] and math.isnan(history.history["loss"][0])
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 2"):
        _model().fit(x, Y, batch_size=4, epochs=1, shuffle=False, verbose=0,
                     callbacks=[K.callbacks.TerminateOnNaN(raise_error=True)])


def test_csv_logger_writes_a_row_per_epoch(tmp_path):
    path = tmp_path / "log.csv"
    history = _model().fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[K.callbacks.CSVLogger(str(path))])
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "loss", "val_loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1"] and [r[2] for r in rows[1:]] == ["NA", "NA"]
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], history.history["loss"], rtol=1e-6)
    _model().fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[K.callbacks.CSVLogger(str(path), append=True)])
    rows = list(csv.reader(open(path)))
    assert len(rows) == 4 and rows[3][0] == "0"  # appended without a second header


def test_progress_bar_is_a_callback_after_the_users(capsys):
    _model().fit(X, Y, batch_size=12, epochs=1, verbose=2, callbacks=[_feed("extra", [1.5])])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/1" and lines[1].startswith("2/2 - ") and " - extra: 1.5000 - loss: " in lines[1]
    _model().evaluate(X, Y, batch_size=12, verbose=2)
    assert capsys.readouterr().out.startswith("2/2 - ")


class _Crash(K.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt("the process is stopped")


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_backup_and_restore_resumes_weights_optimizer_state_and_epoch(tmp_path, run_eagerly):
    def adam_model():
        model = _model(optimizer=K.optimizers.Adam(0.05), run_eagerly=run_eagerly)
        model.set_weights([np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)])
        return model

    whole = adam_model()
    whole.fit(X, Y, batch_size=8, epochs=4, shuffle=False, verbose=0)
    backup = str(tmp_path / "backup")
    first = adam_model()
    with pytest.raises(KeyboardInterrupt):
        first.fit(X, Y, batch_size=8, epochs=4, shuffle=False, verbose=0,
                  callbacks=[K.callbacks.BackupAndRestore(backup), _Crash(2)])
    resumed = adam_model()
    history = resumed.fit(X, Y, batch_size=8, epochs=4, shuffle=False, verbose=0,
                          callbacks=[K.callbacks.BackupAndRestore(backup)])
    assert history.epoch == [2, 3]
    assert int(resumed.optimizer.iterations.numpy()) == 12
    for got, want in zip(resumed.get_weights(), whole.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not (tmp_path / "backup").exists()  # removed once fit ended normally
    with pytest.raises(ValueError, match="Empty `backup_dir`"):
        K.callbacks.BackupAndRestore("")


def test_tensorboard_writes_epoch_scalars_and_histograms(tmp_path):
    """The epoch logs as `epoch_<name>` scalars in train/ and validation/ event files, weight histograms every
    histogram_freq epochs, batch scalars every update_freq batches."""
    from test_summary import _summaries
    model = _model()
    board = K.callbacks.TensorBoard(str(tmp_path), histogram_freq=2, update_freq=4)
    model.fit(X, Y, batch_size=8, epochs=3, verbose=0, validation_data=(X, Y), callbacks=[board])
    train = _summaries(tmp_path / "train")
    tags = {(step, tag, kind) for step, tag, kind, _ in train}
    assert {(e, "epoch_loss", "scalar") for e in range(3)} <= tags
    assert any(tag.endswith("/histogram") and step == 0 for step, tag, kind in tags)
    assert not any(tag.endswith("/histogram") and step == 1 for step, tag, kind in tags)
    assert any(tag == "batch_loss" for _, tag, _ in tags)
    validation = _summaries(tmp_path / "validation")
    assert [(s, t) for s, t, _, _ in validation if t == "epoch_loss"] == [(0, "epoch_loss"), (1, "epoch_loss"),
                                                                          (2, "epoch_loss")]
