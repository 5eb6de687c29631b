"""Keras regularizers and constraints: a weight's penalty joins the model's losses and its training loss, an
activity regularizer penalises a layer's outputs, a constraint holds after every optimizer step, and all of them
survive Model.save."""
import numpy as np
import pytest

import tfn as tf

RNG = np.random.default_rng(0)
X, Y = RNG.random((32, 4)).astype(np.float32), RNG.random((32, 1)).astype(np.float32)


def _model(**dense_args):
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, **dense_args),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    return model


def test_penalties_values_and_their_effect_on_training():
    w = np.array([[1.0, -2.0], [3.0, 0.0]], np.float32)
    r = tf.keras.regularizers
    assert float(r.L1(0.1)(w)) == pytest.approx(0.6) and float(r.L2(0.1)(w)) == pytest.approx(1.4)
    assert float(r.L1L2(0.1, 0.1)(w)) == pytest.approx(2.0)
    assert float(r.OrthogonalRegularizer(1.0)(w)) == pytest.approx(1 / np.sqrt(5))  # |cos| of the two rows
    model = _model(kernel_regularizer=r.l2(0.5), bias_regularizer="l1")
    kernel = model.layers[0].kernel.numpy()
    assert len(model.losses) == 2 and float(model.losses[0]) == pytest.approx(0.5 * np.sum(kernel ** 2))
    plain = _model()
    plain_loss = plain.evaluate(X, Y, verbose=0)
    assert model.evaluate(X, Y, verbose=0) == pytest.approx(plain_loss + float(sum(model.losses)), rel=1e-5)
    model.fit(X, Y, epochs=3, batch_size=32, verbose=0)
    plain.fit(X, Y, epochs=3, batch_size=32, verbose=0)
    assert np.abs(model.layers[0].kernel.numpy()).sum() < np.abs(plain.layers[0].kernel.numpy()).sum()
    with pytest.raises(ValueError, match="must be a non-negative float"):
        r.L2(-1.0)


def test_activity_regularizer_and_constraints():
    active = _model(activity_regularizer=tf.keras.regularizers.L1(0.01))
    outputs = active.layers[0](X)
    assert float(active.layers[0].losses[0]) == pytest.approx(0.01 * np.abs(outputs.numpy()).sum(), rel=1e-5)
    held = _model(kernel_constraint=tf.keras.constraints.NonNeg())
    held.fit(X, -Y, epochs=3, verbose=0)
    assert (held.layers[0].kernel.numpy() >= 0).all()
    capped = _model(kernel_constraint=tf.keras.constraints.MaxNorm(0.5))
    capped.fit(X, 10 * Y, epochs=3, verbose=0)
    assert (np.linalg.norm(capped.layers[0].kernel.numpy(), axis=0) <= 0.5 + 1e-5).all()


def test_regularizers_survive_saving(tmp_path):
    model = _model(kernel_regularizer=tf.keras.regularizers.L2(0.25), kernel_constraint="non_neg")
    model.save(tmp_path / "r.keras")
    loaded = tf.keras.models.load_model(tmp_path / "r.keras")
    assert loaded.layers[0].get_config()["kernel_regularizer"] == {"class_name": "L2", "config": {"l2": 0.25}}
    assert float(loaded.losses[0]) == pytest.approx(float(model.losses[0]))
