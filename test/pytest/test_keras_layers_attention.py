"""tfn.keras's MultiHeadAttention and Attention against NumPy (projections, masks, causal masking, scores,
gradients of every weight), dropout in training only, and a small transformer block that trains with fit."""
import numpy as np
import pytest
from keras_layer_checks import check_config, check_gradients, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(query, value, key, qk, qb, kk, kb, vk, vb, ok, ob, mask=None):
    q = np.einsum("btd,dnh->btnh", query, qk) + qb
    k = np.einsum("bsd,dnh->bsnh", key, kk) + kb
    v = np.einsum("bsd,dnh->bsnh", value, vk) + vb
    scores = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(qk.shape[-1])
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    w = softmax(scores)
    return np.einsum("bnts,bsnh,nhe->bte", w, v, ok) + ob, w


def test_multi_head_attention_matches_numpy():
    query, value, key = rand(2, 4, 6), rand(2, 5, 3), rand(2, 5, 7)
    mha = L.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=4, bias_initializer="random_normal")
    out, scores = mha(query, value, key, return_attention_scores=True)
    assert [(v.name.split("/", 1)[1], tuple(v.shape)) for v in mha.weights] == [
        ("query/kernel:0", (6, 3, 2)), ("query/bias:0", (3, 2)), ("key/kernel:0", (7, 3, 2)), ("key/bias:0", (3, 2)),
        ("value/kernel:0", (3, 3, 4)), ("value/bias:0", (3, 4)), ("attention_output/kernel:0", (3, 4, 6)),
        ("attention_output/bias:0", (6,))]
    weights = [v.numpy().astype(np.float64) for v in mha.weights]
    want, want_scores = mha_ref(query, value, key, *weights)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-4, atol=1e-6)
    compiled = tf.function(lambda a, b, c: mha(a, b, c))(query, value, key)
    np.testing.assert_allclose(compiled.numpy(), out.numpy(), rtol=1e-5, atol=1e-6)
    narrow = L.MultiHeadAttention(2, 3, output_shape=5)
    assert narrow(query, value).shape == (2, 4, 5)
    check_config(L.MultiHeadAttention(2, 4, dropout=0.1, use_bias=False), query, lambda layer, t: layer(t, t))


def test_multi_head_attention_masks():
    x = rand(2, 5, 4)
    mha = L.MultiHeadAttention(2, 3)
    _, scores = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    s = scores.numpy()
    assert np.all(s[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)  # no attention to the future
    np.testing.assert_allclose(s.sum(-1), 1, rtol=1e-5)
    weights = [v.numpy().astype(np.float64) for v in mha.weights]
    attention_mask = np.random.default_rng(0).random((2, 5, 5)) > 0.4
    attention_mask[..., 0] = True
    value_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    combined = attention_mask & np.tril(np.ones((5, 5), bool)) & value_mask[:, None, :].astype(bool)
    got = mha(x, x, attention_mask=attention_mask, value_mask=value_mask, use_causal_mask=True).numpy()
    np.testing.assert_allclose(got, mha_ref(x, x, x, *weights, mask=combined)[0], rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="rank-3"):
        mha(rand(2, 3), rand(2, 3))
    with pytest.raises(ValueError, match="attention_axes"):
        L.MultiHeadAttention(2, 3, attention_axes=(1, 2))


class SelfAttention(tf.keras.layers.Layer):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def call(self, x):
        return self.mha(x, x, use_causal_mask=True)


def test_multi_head_attention_gradients():
    mha = L.MultiHeadAttention(2, 2, bias_initializer="random_normal")
    causal = np.tril(np.ones((3, 3), bool))[None]
    check_gradients(SelfAttention(mha), rand(2, 3, 3),
                    lambda x, *w: mha_ref(x, x, x, *w, mask=np.broadcast_to(causal, (x.shape[0], 3, 3)))[0])


def test_attention_dropout_training_only():
    x = rand(2, 6, 4)
    mha = L.MultiHeadAttention(2, 3, dropout=0.5)
    a = mha(x, x).numpy()
    np.testing.assert_array_equal(mha(x, x, training=False).numpy(), a)
    f = tf.function(lambda t: mha(t, t, training=True))
    assert not np.allclose(f(x).numpy(), a) and not np.array_equal(f(x).numpy(), f(x).numpy())


def test_attention_layer_dot_and_concat():
    q, v, k = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 4)
    att = L.Attention()
    out, w = att([q, v, k], return_attention_scores=True)
    want_w = softmax(q @ k.transpose(0, 2, 1))
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), want_w @ v, rtol=1e-5, atol=1e-6)
    v_mask = np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]], bool)
    q_mask = np.array([[1, 1, 0], [1, 0, 1]], bool)
    masked = att([q, v], mask=[q_mask, v_mask]).numpy()
    s = q @ v.transpose(0, 2, 1) - 1e9 * (1 - v_mask[:, None, :])
    np.testing.assert_allclose(masked, (softmax(s) @ v) * q_mask[..., None], rtol=1e-5, atol=1e-6)
    scaled = L.Attention(use_scale=True, score_mode="concat")
    scaled([q, v])
    assert sorted(w.name.split("/")[-1] for w in scaled.weights) == ["concat_score_weight:0", "scale:0"]
    scaled.set_weights([np.float32(0.5), np.float32(2.0)])
    s = 2.0 * np.tanh(0.5 * (q[:, :, None] + v[:, None])).sum(-1)
    np.testing.assert_allclose(scaled([q, v]).numpy(), softmax(s) @ v, rtol=1e-5, atol=1e-6)
    causal = L.Attention()([q, v], use_causal_mask=True, return_attention_scores=True)[1].numpy()
    assert np.all(np.triu(causal[0], 1) == 0)
    check_config(L.Attention(use_scale=True, score_mode="concat", dropout=0.2), [q, v])
    with pytest.raises(ValueError, match="score_mode"):
        L.Attention(score_mode="general")


class TinyTransformer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = L.Dense(8)
        self.attention = L.MultiHeadAttention(num_heads=2, key_dim=4)
        self.norm1 = L.LayerNormalization()
        self.ff = L.Dense(8, activation="relu")
        self.norm2 = L.LayerNormalization()
        self.pool = L.GlobalAveragePooling1D()
        self.out = L.Dense(1)

    def call(self, x, training=False):
        h = self.embed(x)
        h = self.norm1(L.add([h, self.attention(h, h, training=training)]))
        h = self.norm2(L.add([h, self.ff(h)]))
        return self.out(self.pool(h))


def test_transformer_block_trains():
    tf.random.set_seed(14)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((128, 6, 3)).astype(np.float32)
    y = (x[:, :, 0] * x[:, ::-1, 1]).sum(1, keepdims=True) / 2  # pairs steps t and T-1-t: needs attention
    model = TinyTransformer()
    fit_reduces_loss(model, x, y, epochs=15, factor=0.7, optimizer=tf.keras.optimizers.Adam(0.01))


def test_attention_with_steps_known_only_at_run_time():
    x = rand(2, 5, 3)
    mha, att = L.MultiHeadAttention(2, 2), L.Attention()
    spec = [tf.TensorSpec([None, None, 3], tf.float32)]
    for fn in (lambda t: mha(t, t, use_causal_mask=True), lambda t: att([t, t], use_causal_mask=True)):
        want = fn(x).numpy()
        np.testing.assert_allclose(tf.function(fn, input_signature=spec)(x).numpy(), want, rtol=1e-5, atol=1e-6)
