"""tfn.keras's merge layers and their functional forms against NumPy, eagerly and compiled, in a subclassed model
that trains, with Keras's errors."""
import numpy as np
import pytest
from keras_layer_checks import check_config, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


@pytest.mark.parametrize("name,ref", [
    ("Add", lambda a, b, c: a + b + c), ("Multiply", lambda a, b, c: a * b * c),
    ("Average", lambda a, b, c: (a + b + c) / 3), ("Maximum", lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    ("Minimum", lambda a, b, c: np.minimum(np.minimum(a, b), c))])
def test_elementwise_merges_match_numpy(name, ref):
    a, b, c = rand(4, 3), rand(4, 3), rand(4, 3)
    layer = getattr(L, name)()
    want = ref(a, b, c)
    np.testing.assert_allclose(layer([a, b, c]).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(tf.function(lambda *t: layer(list(t)))(a, b, c).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(getattr(L, name.lower())([a, b, c]).numpy(), want, rtol=1e-6)
    assert layer.name.startswith(name.lower())


def test_subtract_broadcasting_and_rank_lifting():
    a, b = rand(4, 3), rand(4, 3)
    np.testing.assert_allclose(L.Subtract()([a, b]).numpy(), a - b)
    np.testing.assert_allclose(L.subtract([a, b]).numpy(), a - b)
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.Subtract()([a, b, a])
    x, v = rand(4, 2, 3), rand(4, 3)  # lower rank: an axis of size 1 inserted after the batch axis, as Keras
    np.testing.assert_allclose(L.Add()([x, v]).numpy(), x + v[:, None, :], rtol=1e-6)
    np.testing.assert_allclose(L.Multiply()([x, rand(4, 1, 3)[:, :, :1]]).shape, (4, 2, 3))
    with pytest.raises(ValueError, match="incompatible shapes"):
        L.Add()([rand(4, 3), rand(4, 5)])
    with pytest.raises(ValueError, match="different batch sizes"):
        L.Add()([rand(4, 3), rand(2, 3)])
    with pytest.raises(ValueError, match="list of inputs"):
        L.Add()(a)


def test_concatenate():
    a, b = rand(2, 3, 4), rand(2, 5, 4)
    np.testing.assert_array_equal(L.Concatenate(axis=1)([a, b]).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(L.concatenate([a, a], axis=-1).numpy(), np.concatenate([a, a], -1))
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        L.Concatenate()([a, b])
    check_config(L.Concatenate(axis=1), [a, b])


def test_dot_matches_numpy():
    a, b = rand(5, 4), rand(5, 4)
    np.testing.assert_allclose(L.Dot(axes=1)([a, b]).numpy(), (a * b).sum(1, keepdims=True), rtol=1e-5)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(L.dot([a, b], axes=-1, normalize=True).numpy(), cos[:, None], rtol=1e-5)
    x, y = rand(2, 3, 5), rand(2, 4, 3)
    np.testing.assert_allclose(L.Dot(axes=(1, 2))([x, y]).numpy(), np.einsum("bij,bki->bjk", x, y), rtol=1e-5,
                               atol=1e-6)
    p, q = rand(2, 3, 5), rand(2, 5, 4)
    np.testing.assert_allclose(L.Dot(axes=(2, 1))([p, q]).numpy(), p @ q, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Incompatible input shapes"):
        L.Dot(axes=1)([a, rand(5, 3)])
    with pytest.raises(ValueError, match="two elements"):
        L.Dot(axes=(1, 2, 3))
    with pytest.raises(ValueError, match="batch"):
        L.Dot(axes=0)([a, b])
    check_config(L.Dot(axes=(1, 1), normalize=True), [a, b])


def test_gradients_flow_through_merges():
    a, b = tf.constant(rand(3, 4)), tf.constant(rand(3, 4))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        outs = [L.Maximum()([a, b]), L.Average()([a, b]), L.Dot(axes=1)([a, b]), L.Concatenate()([a, b])]
        loss = tf.add_n([tf.reduce_sum(o) for o in outs])
    ga, gb = tape.gradient(loss, [a, b])
    an, bn = a.numpy(), b.numpy()
    want_a = (an >= bn) + 0.5 + bn + 1  # ties are measure-zero for random inputs
    np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-5)
    np.testing.assert_allclose(gb.numpy(), (bn > an) + 0.5 + an + 1, rtol=1e-5)


class TwoTower(tf.keras.Model):
    """A subclassed model that merges two branches of one input with the merge layers."""

    def __init__(self):
        super().__init__()
        self.left = L.Dense(8, activation="tanh")
        self.right = L.Dense(8, activation="tanh")
        self.cat = L.Concatenate()
        self.out = L.Dense(1)

    def call(self, x):
        a, b = self.left(x), self.right(x)
        merged = self.cat([L.add([a, b]), L.multiply([a, b]), L.Dot(axes=1, normalize=True)([a, b])])
        return self.out(merged)


def test_subclassed_model_with_merges_trains():
    tf.random.set_seed(2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 4)).astype(np.float32)
    y = (x[:, :1] * x[:, 1:2] + x[:, 2:3]).astype(np.float32)
    fit_reduces_loss(TwoTower(), x, y, epochs=15, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.01))
