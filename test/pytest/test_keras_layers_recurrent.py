"""tfn.keras's SimpleRNN, LSTM and GRU against NumPy recurrences (outputs, states, go_backwards, initial_state,
gradients of inputs and every weight, eagerly and compiled), dropout in training only, and a model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, check_gradients, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def simple_step(xt, states, k, rk, b):
    return [np.tanh(xt @ k + states[0] @ rk + b)]


def lstm_step(xt, states, k, rk, b):
    h, c = states
    i, f, g, o = np.split(xt @ k + h @ rk + b, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return [sigmoid(o) * np.tanh(c), c]


def gru_step(xt, states, k, rk, b):
    h = states[0]
    x_z, x_r, x_h = np.split(xt @ k + b[0], 3, axis=-1)
    r_z, r_r, r_h = np.split(h @ rk + b[1], 3, axis=-1)
    z, r = sigmoid(x_z + r_z), sigmoid(x_r + r_r)
    return [z * h + (1 - z) * np.tanh(x_h + r * r_h)]


def gru_v1_step(xt, states, k, rk, b):
    h = states[0]
    u = h.shape[-1]
    x_z, x_r, x_h = np.split(xt @ k + b, 3, axis=-1)
    z = sigmoid(x_z + h @ rk[:, :u])
    r = sigmoid(x_r + h @ rk[:, u:2 * u])
    return [z * h + (1 - z) * np.tanh(x_h + (r * h) @ rk[:, 2 * u:])]


def run(step, x, weights, units, n_states, sequences=False, backwards=False, initial=None):
    states = initial or [np.zeros((x.shape[0], units))] * n_states
    outs = []
    for t in (range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])):
        states = step(x[:, t], states, *weights)
        outs.append(states[0])
    return (np.stack(outs, 1) if sequences else outs[-1]), states


KINDS = [("SimpleRNN", {}, simple_step, 1), ("LSTM", {}, lstm_step, 2), ("GRU", {}, gru_step, 1),
         ("GRU", {"reset_after": False}, gru_v1_step, 1)]


@pytest.mark.parametrize("name,kwargs,step,n_states", KINDS)
@pytest.mark.parametrize("sequences,backwards", [(False, False), (True, True)])
def test_recurrent_layers_match_numpy(name, kwargs, step, n_states, sequences, backwards):
    x = rand(3, 6, 4)
    layer = getattr(L, name)(5, return_sequences=sequences, go_backwards=backwards, return_state=True,
                             bias_initializer="random_normal", **kwargs)
    got = layer(x)
    weights = [v.numpy().astype(np.float64) for v in layer.weights]
    want, states = run(step, x.astype(np.float64), weights, 5, n_states, sequences, backwards)
    assert len(got) == 1 + n_states
    np.testing.assert_allclose(got[0].numpy(), want, rtol=1e-4, atol=1e-5)
    for g, s in zip(got[1:], states):
        np.testing.assert_allclose(g.numpy(), s, rtol=1e-4, atol=1e-5)
    compiled = tf.function(lambda t: layer(t))(x)
    for g, c in zip(got, compiled):
        np.testing.assert_allclose(c.numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,step,n_states", KINDS)
def test_recurrent_gradients_match_numeric(name, kwargs, step, n_states):
    layer = getattr(L, name)(3, return_sequences=True, bias_initializer="random_normal", **kwargs)
    check_gradients(layer, rand(2, 4, 2),
                    lambda x, k, rk, b: run(step, x, [k, rk, b], 3, n_states, sequences=True)[0])


def test_weights_initial_state_and_config():
    lstm = L.LSTM(4)
    x = rand(2, 5, 3)
    lstm(x)
    assert [(v.name.split("/")[-1], tuple(v.shape)) for v in lstm.weights] == [
        ("kernel:0", (3, 16)), ("recurrent_kernel:0", (4, 16)), ("bias:0", (16,))]
    np.testing.assert_array_equal(lstm.bias.numpy(), np.r_[np.zeros(4), np.ones(4), np.zeros(8)])  # unit_forget_bias
    rk = L.GRU(6, recurrent_initializer="orthogonal")
    rk(x)
    r = rk.recurrent_kernel.numpy()  # (6, 18): orthonormal rows
    np.testing.assert_allclose(r @ r.T, np.eye(6), atol=1e-5)
    h0, c0 = rand(2, 4), rand(2, 4)
    weights = [v.numpy().astype(np.float64) for v in lstm.weights]
    want, _ = run(lstm_step, x.astype(np.float64), weights, 4, 2, initial=[h0, c0])
    np.testing.assert_allclose(lstm(x, initial_state=[h0, c0]).numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(compiled_equals_eager(lstm, x), run(lstm_step, x.astype(np.float64), weights, 4, 2)[0],
                               rtol=1e-4, atol=1e-5)
    check_config(L.GRU(3, reset_after=False, return_sequences=True), x)
    check_config(L.LSTM(3, unit_forget_bias=False, go_backwards=True), x)
    with pytest.raises(ValueError, match="state"):
        lstm(x, initial_state=[h0])
    with pytest.raises(ValueError, match="units"):
        L.SimpleRNN(0)
    with pytest.raises(ValueError, match="stateful"):
        L.LSTM(2, stateful=True)
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.GRU(2)(rand(2, 3))
    ints = np.arange(24, dtype=np.int32).reshape(2, 4, 3) % 3  # integer sequences are read as float32
    gru = L.GRU(2)
    np.testing.assert_allclose(gru(ints).numpy(), gru(ints.astype(np.float32)).numpy(), rtol=1e-6)


def test_dropout_applies_in_training_only():
    x = rand(4, 5, 3)
    layer = L.SimpleRNN(6, dropout=0.5, recurrent_dropout=0.5)
    layer(x)
    weights = [v.numpy().astype(np.float64) for v in layer.weights]
    clean = run(simple_step, x.astype(np.float64), weights, 6, 1)[0]
    np.testing.assert_allclose(layer(x).numpy(), clean, rtol=1e-4, atol=1e-5)
    f = tf.function(lambda t: layer(t, training=True))
    a, b = f(x).numpy(), f(x).numpy()
    assert not np.allclose(a, clean) and not np.array_equal(a, b)


def test_recurrent_model_trains():
    tf.random.set_seed(12)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((128, 8, 2)).astype(np.float32)
    y = np.cumsum(x[:, :, :1], axis=1)[:, -1] / 3  # the running sum of the first feature
    model = tf.keras.Sequential([L.LSTM(8, return_sequences=True), L.GRU(8, go_backwards=True),
                                 L.RepeatVector(2), L.SimpleRNN(4), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=10, factor=0.6, optimizer=tf.keras.optimizers.Adam(0.02))
