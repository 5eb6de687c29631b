"""tfn.keras layers: each output equal to a NumPy reference for given weights; weights, names, summary."""
import re

import numpy as np
import pytest

import tfn as tf
from tfn.dialects.ops_conv import _conv_kernel

L = tf.keras.layers
RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_dense_matches_numpy_and_builds_on_first_call():
    layer = L.Dense(3, activation="relu")
    assert not layer.built and layer.weights == []
    x = rand(4, 5)
    layer(x)
    k, b = rand(5, 3), rand(3)
    layer.set_weights([k, b])
    np.testing.assert_allclose(layer(x).numpy(), np.maximum(x @ k + b, 0), rtol=1e-5, atol=1e-6)
    assert [v.name for v in layer.trainable_variables] == [f"{layer.name}/kernel:0", f"{layer.name}/bias:0"]
    x3 = rand(2, 3, 5)  # rank 3: applied over the last axis
    np.testing.assert_allclose(layer(x3).numpy(), np.maximum(x3 @ k + b, 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("padding,strides,dilation", [("valid", 1, 1), ("same", 2, 1), ("same", 1, 2)])
def test_conv2d_matches_reference(padding, strides, dilation):
    layer = L.Conv2D(4, 3, strides=strides, padding=padding, dilation_rate=dilation, activation="tanh")
    x = rand(2, 7, 6, 3)
    layer(x)
    k, b = rand(3, 3, 3, 4), rand(4)
    layer.set_weights([k, b])
    attrs = {"strides": (strides,) * 2, "dilations": (dilation,) * 2, "same": padding == "same"}
    want = np.tanh(_conv_kernel([x, k], attrs) + b)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding,strides,dilation,multiplier", [("valid", 1, 1, 1), ("same", 2, 1, 2),
                                                                   ("same", 1, 2, 1)])
def test_depthwise_conv2d_matches_reference(padding, strides, dilation, multiplier):
    layer = L.DepthwiseConv2D(3, strides=strides, padding=padding, depth_multiplier=multiplier,
                              dilation_rate=dilation, activation="relu")
    x = rand(2, 7, 6, 3)
    assert layer(x).shape[-1] == 3 * multiplier
    assert [tuple(v.shape) for v in layer.weights] == [(3, 3, 3, multiplier), (3 * multiplier,)]
    k, b = rand(3, 3, 3, multiplier), rand(3 * multiplier)
    layer.set_weights([k, b])
    # each output channel c * M + m: a one-channel Conv2D of input channel c with filter k[:, :, c, m]
    want = np.concatenate([
        _conv_kernel([x[..., c:c + 1], k[:, :, c:c + 1, m:m + 1]],
                     {"strides": (strides,) * 2, "dilations": (dilation,) * 2, "same": padding == "same"})
        for c in range(3) for m in range(multiplier)], axis=-1)
    np.testing.assert_allclose(layer(x).numpy(), np.maximum(want + b, 0), rtol=1e-4, atol=1e-5)
    assert L.DepthwiseConv2D(3, use_bias=False).name.startswith("depthwise_conv2d")
    no_bias = L.DepthwiseConv2D(2, use_bias=False)
    no_bias(x)
    assert len(no_bias.weights) == 1
    with pytest.raises(ValueError, match="depth_multiplier"):
        L.DepthwiseConv2D(3, depth_multiplier=0)


def _pool_reference(x, k, s, same, kind):
    n, h, w, c = x.shape
    if same:
        oh, ow = -(-h // s), -(-w // s)
        ph, pw = max((oh - 1) * s + k - h, 0), max((ow - 1) * s + k - w, 0)
        top, left = ph // 2, pw // 2
    else:
        oh, ow, top, left = (h - k) // s + 1, (w - k) // s + 1, 0, 0
    out = np.zeros((n, oh, ow, c), np.float32)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - top, j * s - left
            win = x[:, max(r0, 0):min(r0 + k, h), max(c0, 0):min(c0 + k, w), :]
            out[:, i, j] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k,s,padding", [(2, 2, "valid"), (3, 2, "same"), (3, 1, "valid")])
def test_pooling_matches_reference(kind, k, s, padding):
    cls = L.MaxPooling2D if kind == "max" else L.AveragePooling2D
    x = rand(2, 7, 5, 3)
    got = cls(k, strides=s, padding=padding)(x).numpy()
    np.testing.assert_allclose(got, _pool_reference(x, k, s, padding == "same", kind), rtol=1e-5, atol=1e-6)


def test_max_pool_gradient_goes_to_the_maximum():
    x = tf.constant(np.array([1, 5, 2, 3], np.float32).reshape(1, 2, 2, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(L.MaxPooling2D()(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().ravel(), [0, 1, 0, 0])


def test_flatten_global_pool_activation_relu_embedding():
    x = rand(2, 3, 4, 5)
    assert L.Flatten()(x).shape == (2, 60)
    np.testing.assert_allclose(L.GlobalAveragePooling2D()(x).numpy(), x.mean(axis=(1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(L.Activation("sigmoid")(x).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-5)
    np.testing.assert_allclose(L.ReLU(max_value=0.5)(x).numpy(), np.minimum(np.maximum(x, 0), 0.5))
    np.testing.assert_allclose(L.Softmax()(x).numpy().sum(-1), 1, rtol=1e-5)
    emb = L.Embedding(10, 3)
    ids = np.array([[1, 4], [9, 0]])
    table = emb(ids) is not None and emb.embeddings.numpy()
    np.testing.assert_array_equal(emb(ids).numpy(), table[ids])


def test_batch_normalization_training_and_inference():
    layer = L.BatchNormalization(momentum=0.9, epsilon=1e-3)
    x = rand(8, 3) * 2 + 1
    y = layer(x, training=True).numpy()
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.1 * x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), 0.9 + 0.1 * x.var(0), rtol=1e-5)
    assert [v.name.split("/")[1] for v in layer.trainable_variables] == ["gamma:0", "beta:0"]
    assert [v.name.split("/")[1] for v in layer.non_trainable_variables] == ["moving_mean:0", "moving_variance:0"]
    inference = layer(x).numpy()  # training defaults to inference: the moving statistics
    mm, mv = layer.moving_mean.numpy(), layer.moving_variance.numpy()
    np.testing.assert_allclose(inference, (x - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-5)


def test_dropout_training_only_and_different_every_compiled_call():
    x = np.ones((4, 50), np.float32)
    drop = L.Dropout(0.5)
    np.testing.assert_array_equal(drop(x).numpy(), x)
    f = tf.function(lambda t: drop(t, training=True))
    a, b = f(x).numpy(), f(x).numpy()
    assert set(np.unique(a)) <= {0.0, 2.0} and 0.3 < (a == 0).mean() < 0.7
    assert not np.array_equal(a, b)
    tf.random.set_seed(3)
    first = f(x).numpy()
    tf.random.set_seed(3)
    np.testing.assert_array_equal(f(x).numpy(), first)
    tf.random.set_seed(3)
    np.testing.assert_array_equal(drop(tf.constant(x), training=True).numpy(), first)  # eager draws agree


def test_names_sequential_and_subclassed_models():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = L.Dense(4)
            self.norm = L.BatchNormalization()
            self.out = L.Dense(2)

        def call(self, x, training=False):
            return self.out(self.norm(self.hidden(x), training=training))

    net = Net()
    assert net.name.startswith("net")
    net.build((None, 3))
    assert len(net.trainable_variables) == 6 and len(net.non_trainable_variables) == 2
    assert net.trainable_variables[0] is net.hidden.kernel  # tracking order, not attribute-name order
    assert net.count_params() == 3 * 4 + 4 + 4 * 4 + 4 * 2 + 2
    assert net(np.ones((5, 3), np.float32)).shape == (5, 2)
    assert L.Conv2D(1, 1).name.startswith("conv2d") and L.MaxPooling2D().name.startswith("max_pooling2d")


def test_singleton_rule_and_model_build():
    @tf.function
    def apply(model, x):
        return model(x)

    x = tf.constant(np.ones((2, 3), np.float32))
    apply(tf.keras.Sequential([L.Dense(2)]), x)
    with pytest.raises(ValueError, match="singleton"):
        apply(tf.keras.Sequential([L.Dense(2)]), x)
    built = tf.keras.Sequential([L.Dense(2)])
    built.build((None, 3))  # weights made outside the function: calling it is fine
    assert apply(built, x).shape == (2, 2)


def test_summary_table():
    model = tf.keras.Sequential([tf.keras.Input(shape=(8, 8, 1)), L.Conv2D(4, 3, name="c"), L.Flatten(name="f"),
                                 L.Dense(10, name="d"), L.BatchNormalization(name="bn")], name="toy")
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[0] == """Model: "toy"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ c (Conv2D)                      │ (None, 6, 6, 4)        │            40 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ f (Flatten)                     │ (None, 144)            │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ d (Dense)                       │ (None, 10)             │         1,450 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ bn (BatchNormalization)         │ (None, 10)             │            40 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 1,530 (5.98 KB)
 Trainable params: 1,510 (5.90 KB)
 Non-trainable params: 20 (80.00 B)"""


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="units"):
        L.Dense(0)
    with pytest.raises(ValueError, match="padding"):
        L.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match="rate"):
        L.Dropout(1.5)
    with pytest.raises(TypeError, match="Unrecognized keyword"):
        L.Dense(2, colour="red")


def test_nn_softmax_log_softmax_stable_with_gradient():
    logits = tf.constant([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(tf.nn.log_softmax(logits).numpy()[0], [0.0, -1000.0, -2000.0])
    z = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(tf.nn.softmax(logits).numpy()[1], np.exp(z) / np.exp(z).sum(), rtol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = -tf.reduce_sum(tf.nn.log_softmax(logits) * tf.constant([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    want = tf.nn.softmax(logits).numpy() - np.array([[0, 1, 0], [0, 0, 1]])
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), want, atol=1e-6)
    np.testing.assert_array_equal(tf.nn.relu(tf.constant([-1.0, 2.0])).numpy(), [0.0, 2.0])


def test_nn_softmax_cross_entropy_with_logits_sparse_and_dense():
    """TF's per-example losses: -log_softmax(logits) at the label (sparse: class indices, any leading shape) or
    weighted by a label distribution (dense); eager equals compiled; the gradient is softmax - labels; a label out
    of range raises InvalidArgumentError, a rank mismatch ValueError."""
    logits = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    labels = RNG.integers(0, 5, (2, 3))
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    want = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits
    f = tf.function(lambda y, x: (sparse(labels=y, logits=x),
                                  tf.nn.softmax_cross_entropy_with_logits(tf.one_hot(y, 5), x)))
    for got in (sparse(labels=labels, logits=logits), *f(tf.constant(labels), tf.constant(logits))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    x = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(sparse(labels=labels, logits=x))
    onehot = np.eye(5, dtype=np.float32)[labels]
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.exp(log_probs) - onehot, atol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Received a label value of 5 which is outside the valid range of \[0, 5\)"):
        f(tf.constant(np.full((2, 3), 5)), x)
    with pytest.raises(ValueError, match="Rank mismatch"):
        sparse(labels=labels[0], logits=logits)
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.softmax_cross_entropy_with_logits(onehot[:, :2], logits)


def test_nn_pooling_compiled_equals_eager():
    x = rand(2, 6, 5, 3)
    f = tf.function(lambda t: (tf.nn.max_pool2d(t, 3, 2, "SAME"), tf.nn.avg_pool2d(t, 2, 1, "VALID")))
    for got, want in zip(f(x), (tf.nn.max_pool2d(x, 3, 2, "SAME"), tf.nn.avg_pool2d(x, 2, 1, "VALID"))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="padding"):
        tf.nn.max_pool2d(x, 2, 2, "FULL")


@pytest.mark.parametrize("layer, x, want", [
    (lambda: tf.keras.layers.Dense(3), [4], "expected min_ndim=2, found ndim=1. Full shape received: (4,)"),
    (lambda: tf.keras.layers.Conv2D(2, 3), [4, 4], "expected ndim=4, found ndim=2"),
    (lambda: tf.keras.layers.MaxPooling2D(), [3, 3, 1], "expected ndim=4, found ndim=3"),
    (lambda: tf.keras.layers.AveragePooling2D(), [3, 3, 1], "expected ndim=4, found ndim=3"),
    (lambda: tf.keras.layers.GlobalAveragePooling2D(), [2, 3], "expected ndim=4, found ndim=2")])
def test_inputs_of_the_wrong_rank_raise_keras_value_error(layer, x, want):
    """Keras's InputSpec ranks: a Dense layer called on a vector computed a result (TF refuses it); a Conv2D or a
    pooling layer on a matrix raised the op's error, not the layer's."""
    with pytest.raises(ValueError, match=re.escape(want)):
        layer()(tf.ones(x))
