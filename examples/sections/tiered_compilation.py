"""Beyond the guide: tiered compilation. A big function's first call does not wait for LLVM's optimiser: it runs
quickly generated code while the optimised code is built in a background process and swapped in."""
import numpy as np
from common import section

import tfn as tf

section("Beyond the guide: tiered compilation (a training step's first call runs quick code at once)")
rng = np.random.default_rng(0)
sizes = [784, 256, 256, 10]
weights = [tf.Variable(rng.standard_normal((a, b)).astype(np.float32) * 0.05) for a, b in zip(sizes, sizes[1:])]
biases = [tf.Variable(np.zeros(b, np.float32)) for b in sizes[1:]]
images = tf.constant(rng.standard_normal((128, 784)).astype(np.float32))
labels = tf.constant(rng.integers(0, 10, 128))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        for i, (w, b) in enumerate(zip(weights, biases)):
            x = tf.matmul(x, w) + b
            if i < len(weights) - 1:
                x = tf.nn.relu(x)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x))
    variables = weights + biases
    for v, g in zip(variables, tape.gradient(loss, variables)):
        v.assign_sub(0.1 * g)
    return loss


print("Tiered compilation on:", tf.config.get_tiered_compilation())
losses = [train_step(images, labels)]  # quick code: LLVM's O0 output of the same vectorised kernels
print("Optimised code in place:", tf.config.wait_for_optimized_code())
losses += [train_step(images, labels) for _ in range(4)]  # the optimised code, swapped in
print("Losses of five steps:", [round(float(v), 3) for v in losses])
print("Later processes load the optimised code from the artifact cache at once; TFN_TIERED_COMPILATION=0 makes a")
print("first call wait for it.")
