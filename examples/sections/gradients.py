"""The guide's gradient programs, run by tfn: tapes around a compiled call, and training steps compiled whole."""

import numpy as np
from common import section

import tfn as tf

section("Usage: you can compute gradients through a tfn.function")


@tf.function
def add(a, b):
    return a + b


v = tf.Variable(1.0)
with tf.GradientTape() as tape:
    result = add(v, 1.0)
# The call is one op on the tape; its backward pass is a compiled function too.
print(repr(tape.gradient(result, v)))  # <tfn.Tensor: shape=(), dtype=float32, numpy=1.0>

section("A training step compiles to one function: forward, backward and update")

w = tf.Variable(2.0)
x = tf.constant([-1.0])
y = tf.constant([2.0])


@tf.function
def sgd_step(w, x, y):
    with tf.GradientTape() as tape:
        L = tf.reduce_sum(tf.square(w * x - y))
    gradients = tape.gradient(L, [w])
    w.assign_sub(0.1 * gradients[0])
    return L


for _ in range(3):
    print("loss", sgd_step(w, x, y).numpy(), "w", w.numpy())
print("\nThe traced step (each backward op carries the location of the forward op it differentiates):")
print(sgd_step.experimental_get_compiler_ir(w, x, y)(stage="tfn"))

section("Higher derivatives: nested tapes")

x = tf.constant(3.0)
with tf.GradientTape() as t2:
    t2.watch(x)
    with tf.GradientTape() as t1:
        t1.watch(x)
        y = x * x * x
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)
print("dy/dx:", dy_dx.numpy(), " d2y/dx2:", d2y_dx2.numpy())  # 27.0, 18.0

section("A 2-layer MLP trained eagerly and compiled: the same losses")

rng = np.random.default_rng(0)
data = tf.constant(rng.normal(size=(128, 4)).astype(np.float32))
labels = tf.constant((data.numpy()[:, :1] * data.numpy()[:, 1:2] > 0).astype(np.float32))
init = [rng.normal(size=(4, 16)).astype(np.float32) * 0.5, np.zeros(16, np.float32),
        rng.normal(size=(16, 1)).astype(np.float32) * 0.5, np.zeros(1, np.float32)]


def make_step(params):
    def step():
        with tf.GradientTape() as tape:
            w1, b1, w2, b2 = params
            hidden = tf.maximum(tf.matmul(data, w1) + b1, 0.0)
            p = tf.sigmoid(tf.matmul(hidden, w2) + b2)
            loss = -tf.reduce_mean(labels * tf.math.log(p + 1e-6) + (1 - labels) * tf.math.log(1 - p + 1e-6))
        for var, g in zip(params, tape.gradient(loss, params)):
            var.assign_sub(0.5 * g)
        return loss
    return step


eager_step = make_step([tf.Variable(a) for a in init])
compiled_step = tf.function(make_step([tf.Variable(a) for a in init]))
for i in range(200):
    le, lc = eager_step(), compiled_step()
    if i % 50 == 0 or i == 199:
        print(f"step {i:3d}: eager loss {le.numpy():.5f}  compiled loss {lc.numpy():.5f}")
