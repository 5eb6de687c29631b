"""Model.save / tfn.keras.models.load_model and get_config: a saved model comes back with its layers, weights,
compile arguments and optimizer state (it predicts and trains on identically); configs are the arguments the
objects were made with; what cannot be saved or found is an error naming it."""
import numpy as np
import pytest

import tfn as tf

RNG = np.random.default_rng(0)
X = RNG.random((64, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 64).astype(np.int32)


def _model():
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)),
                                 tf.keras.layers.Dense(8, activation="relu",
                                                       kernel_initializer=tf.keras.initializers.HeNormal(seed=1)),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def test_a_saved_model_predicts_and_trains_on_identically(tmp_path):
    model = _model()
    model.fit(X, Y, epochs=2, batch_size=16, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert isinstance(loaded, tf.keras.Sequential) and [type(layer).__name__ for layer in loaded.layers] == \
        ["Dense", "Dense"]
    np.testing.assert_array_equal(model.predict(X), loaded.predict(X))
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) == 8
    again = [m.fit(X, Y, epochs=2, batch_size=64, verbose=0, shuffle=False).history["loss"] for m in (model, loaded)]
    np.testing.assert_allclose(again[0], again[1], rtol=1e-6)  # Adam's moments came back too
    bare = tf.keras.models.load_model(path, compile=False)
    assert bare.optimizer is None


def test_get_config_is_what_the_layer_was_made_with():
    dense = tf.keras.layers.Dense(5, activation=tf.keras.activations.relu, use_bias=False, name="d")
    conf = dense.get_config()
    assert conf["units"] == 5 and conf["activation"] == "relu" and conf["use_bias"] is False
    assert conf["name"] == "d" and conf["trainable"] is True
    copy = tf.keras.layers.Dense.from_config(conf)
    assert copy.get_config() == conf
    init = tf.keras.initializers.RandomNormal(mean=1.0, stddev=0.5, seed=3)
    assert init.get_config() == {"mean": 1.0, "stddev": 0.5, "seed": 3}
    assert tf.keras.optimizers.SGD(0.1, momentum=0.9).get_config()["momentum"] == 0.9


def test_custom_models_need_their_class(tmp_path):
    class Doubler(tf.keras.Model):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = tf.keras.layers.Dense(units)

        def call(self, x):
            return 2.0 * self.dense(x)
    model = Doubler(5)
    model(X)
    path = tmp_path / "doubler.keras"
    model.save(path)
    with pytest.raises(ValueError, match=r"Unknown class 'Doubler'.*custom_objects"):
        tf.keras.models.load_model(path)
    back = tf.keras.models.load_model(path, custom_objects={"Doubler": Doubler})
    np.testing.assert_array_equal(back(X).numpy(), model(X).numpy())
    registered = tf.keras.saving.register_keras_serializable(package="test")(Doubler)
    assert type(tf.keras.models.load_model(path)) is registered


def test_what_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match="Invalid filepath extension for saving"):
        _model().save(tmp_path / "m.h6")
    with pytest.raises(ValueError, match="has not been built yet"):
        tf.keras.Sequential([tf.keras.layers.Dense(2)]).save(tmp_path / "x.keras")
    odd = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2, activation=lambda v: v * 2)])
    with pytest.raises(TypeError, match=r"Cannot save Dense\(activation=...\)"):
        odd.save(tmp_path / "odd.keras")
    (tmp_path / "junk.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="is not a model saved by tfn's Model.save"):
        tf.keras.models.load_model(tmp_path / "junk.keras")


def test_a_sequence_model_of_many_layer_kinds_round_trips(tmp_path):
    """Conv1D, LayerNormalization, GRU, Dropout and Dense (their own get_config) saved and loaded: same outputs."""
    x = RNG.random((6, 12, 3)).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input(shape=(12, 3)),
                                 tf.keras.layers.Conv1D(4, 3, padding="causal", activation="relu"),
                                 tf.keras.layers.LayerNormalization(),
                                 tf.keras.layers.GRU(5), tf.keras.layers.Dropout(0.2), tf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, RNG.random((6, 2)).astype(np.float32), epochs=1, verbose=0)
    model.save(tmp_path / "seq.keras")
    loaded = tf.keras.models.load_model(tmp_path / "seq.keras")
    assert [type(layer).__name__ for layer in loaded.layers] == ["Conv1D", "LayerNormalization", "GRU", "Dropout",
                                                                  "Dense"]
    np.testing.assert_allclose(loaded.predict(x), model.predict(x), rtol=1e-6, atol=1e-6)
