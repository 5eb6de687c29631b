"""Checks the test_keras_layers_*.py files share: a layer's compiled call equals its eager call, its gradients
(inputs and weights) equal central differences of a float64 NumPy reference, and its config round-trips."""
import numpy as np

import tfn as tf

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def compiled_equals_eager(layer, x, **kwargs):
    """layer(x) eagerly and inside tfn.function give the same values (the layer built by the eager call first)."""
    eager = _numpy(layer(x, **kwargs))
    compiled = _numpy(tf.function(lambda t: layer(t, **kwargs))(x))
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-5)
    return eager


def _numpy(y):
    return y.numpy() if hasattr(y, "numpy") else np.asarray(y)


def numeric_gradient(f, values, index, eps=1e-5):
    """d sum(f(*values) * w) / d values[index] by central differences in float64 (w a fixed random weighting)."""
    values = [np.asarray(v, np.float64) for v in values]
    out = f(*values)
    weights = np.random.default_rng(5).standard_normal(np.shape(out))
    grad = np.zeros_like(values[index])
    flat = values[index].reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + eps
        up = np.sum(f(*values) * weights)
        flat[i] = keep - eps
        down = np.sum(f(*values) * weights)
        flat[i] = keep
        grad.reshape(-1)[i] = (up - down) / (2 * eps)
    return grad, weights


def check_gradients(layer, x, reference, rtol=2e-3, atol=2e-3):
    """tfn's gradients of sum(layer(x) * w) with respect to x and each trainable weight equal the numeric
    gradients of `reference(x, *weights)` (the layer's NumPy forward), eagerly and inside tfn.function."""
    layer(x)
    weights = [v.numpy() for v in layer.trainable_weights]
    values = [x] + weights
    expected = [numeric_gradient(reference, values, i) for i in range(len(values))]
    w = tf.constant(expected[0][1].astype(np.float32))

    def grads(xt):
        with tf.GradientTape() as tape:
            tape.watch(xt)
            loss = tf.reduce_sum(layer(xt) * w)
        return tape.gradient(loss, [xt] + list(layer.trainable_weights))

    xt = tf.constant(x)
    for got in (grads(xt), tf.function(grads)(xt)):
        assert len(got) == len(expected)
        for g, (want, _) in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), want, rtol=rtol, atol=atol)


def check_config(layer, x, call=None):
    """from_config(get_config()) makes a layer of the same class and arguments that, given the same weights,
    computes the same outputs (`call(layer, x)`, by default layer(x))."""
    call = call or (lambda lay, inputs: lay(inputs))
    config = layer.get_config()
    clone = type(layer).from_config({**config, "name": config["name"] + "_clone"})
    assert {k: v for k, v in clone.get_config().items() if k != "name"} == \
        {k: v for k, v in config.items() if k != "name"}
    y = call(layer, x)
    call(clone, x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(_numpy(call(clone, x)), _numpy(y), rtol=1e-6, atol=1e-6)


def fit_reduces_loss(model, x, y, loss="mse", epochs=10, batch_size=16, optimizer="adam", factor=0.7):
    """compile + fit (one compiled step per batch): the last epoch's loss is below `factor` times the first's."""
    model.compile(optimizer=optimizer, loss=loss)
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < factor * losses[0], losses
    return losses
