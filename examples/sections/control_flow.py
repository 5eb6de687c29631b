"""The guide's functional control flow: "TensorFlow ops like tf.cond and tf.while_loop continue to work", and
tf.TensorArray accumulating values in a loop written with tf.while_loop (the guide's dynamic_rnn)."""
import numpy as np
from common import section

import tfn as tf

section("AutoGraph transformations: tf.cond and tf.while_loop continue to work")


@tf.function
def collatz(n):
    # Both branches of a tf.cond are traced once; the loop body of a tf.while_loop is traced once.
    def step(n, steps):
        n = tf.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
        return n, steps + 1
    return tf.while_loop(lambda n, steps: n > 1, step, (n, 0))


print(collatz(tf.constant(27)))
print(collatz(tf.constant(6)))
print(collatz.experimental_get_compiler_ir(tf.constant(27))().count("scf.while"), "scf.while,",
      collatz.experimental_get_compiler_ir(tf.constant(27))().count("scf.if"), "scf.if in the traced IR")

section("Accumulating values in a loop: tf.TensorArray with tf.while_loop")


@tf.function
def dynamic_rnn(rnn_step, input_data, initial_state):
    # The guide's dynamic_rnn (see the AutoGraph section) with its `for` loop written as a tf.while_loop.
    steps = tf.transpose(input_data, [1, 0, 2])  # [batch, time, features] -> [time, batch, features]
    n = steps.shape[0]

    def body(i, state, states):
        state = rnn_step(steps[i], state)
        return i + 1, state, states.write(i, state)
    _, _, states = tf.while_loop(lambda i, *_: i < n, body, (0, initial_state, tf.TensorArray(tf.float32, size=n)))
    return tf.transpose(states.stack(), [1, 0, 2])


def running_sum(inp, state):
    return inp + state


# (the guide uses tf.random.uniform; the output is the running sum over time of the input)
data = np.random.default_rng(0).uniform(size=[2, 3, 4]).astype(np.float32)
print(repr(dynamic_rnn(running_sum, tf.constant(data), tf.zeros([2, 4]))))

section("tf.TensorArray that grows: dynamic_size=True")


@tf.function
def squares(n):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])
    _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * i)), (0, ta))
    return ta.stack()


print(squares(tf.constant(10)))

section("Loop variables keep their dtype and shape")


@tf.function
def bad_loop(x):
    return tf.while_loop(lambda x: tf.reduce_sum(x) < 10.0, lambda x: tf.concat([x, x], 0), [x])


try:
    bad_loop(tf.constant([1.0, 2.0]))
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])


@tf.function
def good_loop(x):
    return tf.while_loop(lambda x: tf.reduce_sum(x) < 10.0, lambda x: tf.concat([x, x], 0), [x],
                         shape_invariants=[tf.TensorShape([None])])


print(good_loop(tf.constant([1.0, 2.0])))
