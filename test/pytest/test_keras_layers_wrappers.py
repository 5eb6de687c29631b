"""tfn.keras's Bidirectional and TimeDistributed wrappers against the wrapped layers run by hand, their configs,
gradients and a model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "ave", "mul", None])
def test_bidirectional_equals_forward_and_reversed_backward(merge_mode):
    x = rand(2, 5, 3)
    bi = L.Bidirectional(L.LSTM(4, return_sequences=True), merge_mode=merge_mode)
    got = bi(x)
    fwd, bwd = bi.forward_layer, bi.backward_layer
    assert fwd.name.startswith("forward_lstm") and bwd.name.startswith("backward_lstm") and bwd.go_backwards
    assert len(bi.trainable_weights) == 6
    y = fwd(x).numpy()
    y_rev = bwd(x).numpy()[:, ::-1]  # the backward layer's outputs, back in time order
    want = {"concat": np.concatenate([y, y_rev], -1), "sum": y + y_rev, "ave": (y + y_rev) / 2, "mul": y * y_rev,
            None: [y, y_rev]}[merge_mode]
    if merge_mode is None:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(compiled_equals_eager(bi, x), want, rtol=1e-5, atol=1e-6)


def test_bidirectional_states_initial_state_config_and_errors():
    x = rand(2, 4, 3)
    bi = L.Bidirectional(L.GRU(3, return_state=True))
    out, h_fwd, h_bwd = bi(x)
    assert out.shape == (2, 6)
    np.testing.assert_allclose(out.numpy(), np.concatenate([h_fwd.numpy(), h_bwd.numpy()], -1), rtol=1e-6)
    h0 = [rand(2, 3), rand(2, 3)]
    np.testing.assert_allclose(bi(x, initial_state=h0)[1].numpy(), bi.forward_layer(x, initial_state=[h0[0]])[1],
                               rtol=1e-6)
    clone = L.Bidirectional.from_config(bi.get_config())
    assert type(clone.forward_layer) is L.GRU and clone.backward_layer.go_backwards and clone.merge_mode == "concat"
    with pytest.raises(ValueError, match="merge mode"):
        L.Bidirectional(L.GRU(2), merge_mode="max")
    with pytest.raises(ValueError, match="Layer` instance"):
        L.Bidirectional("lstm")
    with pytest.raises(ValueError, match="go_backwards"):
        L.Bidirectional(L.GRU(2), backward_layer=L.GRU(2))


def test_time_distributed_applies_one_layer_to_every_step():
    x = rand(3, 4, 5)
    td = L.TimeDistributed(L.Dense(2, activation="tanh"))
    y = compiled_equals_eager(td, x)
    k, b = td.layer.get_weights()
    np.testing.assert_allclose(y, np.tanh(x @ k + b), rtol=1e-5, atol=1e-6)
    assert len(td.weights) == 2
    images = rand(2, 3, 6, 6, 1)  # a sequence of images: Conv2D on each frame
    conv = L.TimeDistributed(L.Conv2D(4, 3))
    assert conv(images).shape == (2, 3, 4, 4, 4)
    f = tf.function(lambda t: td(t), input_signature=[tf.TensorSpec([None, None, 5], tf.float32)])
    np.testing.assert_allclose(f(x).numpy(), y, rtol=1e-5, atol=1e-6)
    clone = L.TimeDistributed.from_config(td.get_config())
    assert type(clone.layer) is L.Dense
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        L.TimeDistributed(L.Dense(2))(rand(2, 3))


def test_bidirectional_time_distributed_model_trains_and_gradients_reach_both_directions():
    tf.random.set_seed(13)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((96, 6, 2)).astype(np.float32)
    y = np.cumsum(x[:, ::-1, :1], axis=1)[:, ::-1] / 2  # each step: the sum of the steps from it to the end
    bi = L.Bidirectional(L.SimpleRNN(8, return_sequences=True))
    model = tf.keras.Sequential([bi, L.TimeDistributed(L.Dense(1))])
    model.build((None, 6, 2))
    before = [v.numpy().copy() for v in bi.backward_layer.weights]
    fit_reduces_loss(model, x, y, epochs=10, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.02))
    assert all(not np.allclose(v.numpy(), b) for v, b in zip(bi.backward_layer.weights, before))


@pytest.mark.parametrize("make,shape", [
    (lambda: L.Dense(3, activation="relu", use_bias=False), (2, 4)), (lambda: L.Conv2D(2, 3, padding="same"),
                                                                      (1, 5, 5, 2)),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), (1, 5, 5, 2)), (lambda: L.MaxPooling2D(3, 1), (1, 5, 5, 2)),
    (lambda: L.GlobalAveragePooling2D(keepdims=True), (1, 3, 3, 2)), (lambda: L.Dropout(0.3), (2, 4)),
    (lambda: L.Activation("tanh"), (2, 4)), (lambda: L.ReLU(max_value=1.0), (2, 4)),
    (lambda: L.Softmax(axis=0), (2, 4)), (lambda: L.BatchNormalization(momentum=0.9), (3, 4)),
    (lambda: L.Flatten(), (2, 3, 2))])
def test_configs_of_the_original_layers_round_trip(make, shape):
    check_config(make(), rand(*shape))


def test_embedding_config_round_trips():
    check_config(L.Embedding(5, 2), np.array([[1, 4]]))
