"""The guide's "AutoGraph transformations" section: converted loops and conditionals, with their output."""
import numpy as np
from common import section

import tfn as tf

section("AutoGraph transformations: a simple loop")


@tf.function
def f(x):
    while tf.reduce_sum(x) > 1:
        tf.print(x)
        x = tf.tanh(x)
    return x


# (tf.print writes to stderr, as TF's; the guide uses tf.random.uniform([5]).)
print(repr(f(tf.constant(np.random.default_rng(0).uniform(size=[5]).astype(np.float32)))))

print("\nIf you're curious you can inspect the code AutoGraph generates:")
print(tf.autograph.to_code(f.python_function))

section("AutoGraph transformations: conditionals")


@tf.function
def fizzbuzz(n):
    for i in tf.range(1, n + 1):
        print('Tracing for loop')
        if i % 15 == 0:
            print('Tracing fizzbuzz branch')
            tf.print('fizzbuzz')
        elif i % 3 == 0:
            print('Tracing fizz branch')
            tf.print('fizz')
        elif i % 5 == 0:
            print('Tracing buzz branch')
            tf.print('buzz')
        else:
            print('Tracing default branch')
            tf.print(i)


fizzbuzz(tf.constant(5))
fizzbuzz(tf.constant(20))

section("AutoGraph transformations: accumulating values in a loop")

batch_size = 2
seq_len = 3
feature_size = 4


def rnn_step(inp, state):
    return inp + state


@tf.function
def dynamic_rnn(rnn_step, input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = tf.transpose(input_data, [1, 0, 2])
    max_seq_len = input_data.shape[0]

    states = tf.TensorArray(tf.float32, size=max_seq_len)
    state = initial_state
    for i in tf.range(max_seq_len):
        state = rnn_step(input_data[i], state)
        states = states.write(i, state)
    return tf.transpose(states.stack(), [1, 0, 2])


data = np.random.default_rng(1).uniform(size=[batch_size, seq_len, feature_size]).astype(np.float32)
print(repr(dynamic_rnn(rnn_step, tf.constant(data), tf.zeros([batch_size, feature_size]))))

section("AutoGraph transformations: errors point at your line")


@tf.function
def only_one_branch(x):
    if x > 0:
        y = x
    return y


try:
    only_one_branch(tf.constant(1))
except ValueError as e:
    print("ValueError:", e)

section("AutoGraph transformations: every tensor in a function is a graph value, constants too")


@tf.function
def count_up():
    n = tf.constant(0)
    print("traced: n is", n)  # a graph value, even though it is a constant
    while tf.constant(True):  # a tensor condition: a tensor loop, left by its `break`
        n += 1
        if n >= 3:
            break
    return n


print("count_up() =", count_up().numpy())


@tf.function
def in_range(lo, x, hi):
    return lo <= x < hi  # a chained comparison: `lo <= x and x < hi`, x evaluated once


print("in_range(0, 5, 10) =", in_range(tf.constant(0), tf.constant(5), tf.constant(10)).numpy())
print("in_range(0, 10, 10) =", in_range(tf.constant(0), tf.constant(10), tf.constant(10)).numpy())


@tf.function
def changes_dtype():
    n = tf.constant(0)
    while tf.constant(True):
        n = tf.constant(0.0)
    return n


try:
    changes_dtype()
except TypeError as e:
    print("TypeError:", str(e).splitlines()[0])
