"""Linear algebra and special functions of tf.linalg / tf.math / tf.nn: factorizations written as tfn loops (the
same eagerly and compiled, with TF's gradients), guarded divisions, and functions like lgamma or atan2."""
import numpy as np
from common import section

import tfn as tf

section("Linear algebra: solve, Cholesky, determinants and their gradients; special functions")

a = tf.constant([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]])
b = tf.constant([[1.0], [2.0], [3.0]])


@tf.function
def least_squares_step(a, b):
    chol = tf.linalg.cholesky(a)  # a = chol @ chol^T
    x = tf.linalg.cholesky_solve(chol, b)
    return x, tf.linalg.det(a), tf.linalg.slogdet(a)[1]


x, det, logdet = least_squares_step(a, b)
print("x:", np.round(x.numpy().ravel(), 5), "residual ok:", np.allclose((a @ x).numpy(), b.numpy(), atol=1e-5))
print("det:", round(float(det), 4), "log|det|:", round(float(logdet), 4))

with tf.GradientTape() as tape:
    tape.watch(a)
    d = tf.linalg.det(a)
grad = tape.gradient(d, a)  # d det / d a = det * inv(a)^T
print("d det/da == det * inv(a)^T:", np.allclose(grad.numpy(), (d * tf.transpose(tf.linalg.inv(a))).numpy()))
print("norms:", float(tf.norm([3.0, 4.0])), float(tf.norm(a, ord=1, axis=[0, 1])))
print("tensordot:", tf.tensordot(tf.constant([1.0, 2.0]), tf.constant([[1.0, 0.0], [0.0, 3.0]]), 1).numpy())
print("atan2:", np.round(tf.atan2([1.0, -1.0], [-1.0, -1.0]).numpy(), 5))
print("lgamma(5) = log(24):", np.isclose(float(tf.math.lgamma(5.0)), np.log(24.0)))
print("divide_no_nan:", tf.math.divide_no_nan([1.0, 2.0], [0.0, 4.0]).numpy())
print("bincount:", tf.math.bincount([1, 1, 3]).numpy())
