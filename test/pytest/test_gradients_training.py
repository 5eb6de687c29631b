"""Training with tapes: a linear regression and a 2-layer MLP, 200 SGD steps eagerly and compiled (one native
function per step: forward, backward and update), with the same losses and a converged fit."""
import numpy as np

import tfn

RNG = np.random.default_rng(3)


def _train(step, n=200):
    return np.array([float(step()) for _ in range(n)])


def _linear_problem():
    x = RNG.normal(size=(64, 3)).astype(np.float32)
    true_w = np.array([[2.0], [-3.0], [0.5]], np.float32)
    y = x @ true_w + 1.25
    return tfn.constant(x), tfn.constant(y), true_w


def _linear(compiled):
    x, y, true_w = _LINEAR
    w, b = tfn.Variable(tfn.zeros([3, 1])), tfn.Variable(0.0)

    def step():
        with tfn.GradientTape() as tape:
            loss = tfn.reduce_mean(tfn.square(tfn.matmul(x, w) + b - y))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    losses = _train(tfn.function(step) if compiled else step)
    return losses, w.numpy(), float(b.numpy()), true_w


_LINEAR = _linear_problem()


def test_linear_regression_eager_and_compiled():
    eager, w_e, b_e, true_w = _linear(False)
    compiled, w_c, b_c, _ = _linear(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-4, atol=1e-6)
    assert eager[-1] < 1e-6 * eager[0]
    np.testing.assert_allclose(w_c, true_w, atol=1e-3)
    assert abs(b_c - 1.25) < 1e-3 and abs(b_e - 1.25) < 1e-3


def _mlp_problem():
    x = RNG.normal(size=(128, 4)).astype(np.float32)
    labels = (x[:, 0] * x[:, 1] > 0).astype(np.int32) + (x[:, 2] > 0.5).astype(np.int32)
    return tfn.constant(x), tfn.one_hot(tfn.constant(labels), 3), labels


_MLP = _mlp_problem()
_INIT = [RNG.normal(size=(4, 32)).astype(np.float32) * 0.5, np.zeros(32, np.float32),
         RNG.normal(size=(32, 3)).astype(np.float32) * 0.3, np.zeros(3, np.float32)]


def _cross_entropy(logits, onehot):
    shifted = logits - tfn.reduce_max(logits, axis=1, keepdims=True)
    log_probs = shifted - tfn.math.log(tfn.reduce_sum(tfn.exp(shifted), axis=1, keepdims=True))
    return -tfn.reduce_mean(tfn.reduce_sum(onehot * log_probs, axis=1))


def _mlp(compiled):
    x, onehot, labels = _MLP
    params = [tfn.Variable(p) for p in _INIT]

    def forward():
        w1, b1, w2, b2 = params
        hidden = tfn.maximum(tfn.matmul(x, w1) + b1, 0.0)
        return tfn.matmul(hidden, w2) + b2

    def step():
        with tfn.GradientTape() as tape:
            loss = _cross_entropy(forward(), onehot)
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.5 * g)
        return loss

    losses = _train(tfn.function(step) if compiled else step)
    accuracy = np.mean(np.argmax(forward().numpy(), 1) == labels)
    return losses, accuracy


def test_mlp_eager_and_compiled():
    eager, acc_e = _mlp(False)
    compiled, acc_c = _mlp(True)
    np.testing.assert_allclose(compiled, eager, rtol=2e-3, atol=1e-4)
    assert eager[-1] < 0.3 * eager[0]
    assert acc_e > 0.9 and acc_c > 0.9
