"""A walkthrough of TensorFlow's tf.function guide, compiled by tfn. Run: python examples/walkthrough.py

Each section below is a part of the guide (`../shared/spec/tf-function-guide.txt`) that works in tfn today,
with `tf` read as `tfn`. Everything under @tfn.function is traced into the tfn MLIR dialect, lowered through
linalg to LLVM, compiled to native code and called from Python.
"""
import os
import runpy
import sys
import timeit

import numpy as np

import tfn as tf


def section(title):
    print()
    print("=" * 72)
    print(title)
    print("=" * 72)


section("Basics / Usage: a tfn.function is like a core op")


@tf.function  # The decorator converts `add` into a `PolymorphicFunction`.
def add(a, b):
    return a + b


print(repr(add(tf.ones([2, 2]), tf.ones([2, 2]))))  # [[2., 2.], [2., 2.]]

print("\ntfn.functions can call other tfn.functions:")


@tf.function
def dense_layer(x, w, b):
    return add(tf.matmul(x, w), b)


print(repr(dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))))

section("Basics / Speed: many small ops run faster as one compiled function")


def small_ops(x):
    for _ in range(10):
        x = tf.tanh(x * 0.5 + 0.25) - x / 3.0
    return tf.reduce_sum(x)


small_ops_fn = tf.function(small_ops)
x = tf.constant(np.linspace(-1, 1, 1000, dtype=np.float32))
small_ops(x)
small_ops_fn(x)  # Warm up: traces and compiles once.
print("Eager small ops:   ", timeit.timeit(lambda: small_ops(x), number=100))
print("Function small ops:", timeit.timeit(lambda: small_ops_fn(x), number=100))
print("Same answer:", np.allclose(small_ops(x).numpy(), small_ops_fn(x).numpy(), rtol=1e-5))

print("\nA few expensive ops (the guide's convolution; tfn has no Keras, so the layer is tfn.nn.conv2d):")
filters = tf.constant(np.random.default_rng(0).standard_normal((3, 3, 100, 100), dtype=np.float32) * 0.05)


def conv_layer(image):
    return tf.nn.conv2d(image, filters, strides=1, padding="VALID")


conv_fn = tf.function(conv_layer)
image = tf.zeros([1, 200, 200, 100])
conv_layer(image)  # Warm up
conv_fn(image)
print("Eager conv:", timeit.timeit(lambda: conv_layer(image), number=10))
print("Function conv:", timeit.timeit(lambda: conv_fn(image), number=10))
print("Note how there's not much difference in performance for convolutions")

section("Tracing: one trace per input dtype and shape, then cached")


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant(1)))
print()
print(double(tf.constant(1.1)))
print()
print("Calling again with an int32 scalar does not trace:")
print(double(tf.constant(2)))

print()
print("All the traces so far:")
print(double.pretty_printed_concrete_signatures())

section("Controlling retracing: a fixed input_signature")


@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])))
for bad in (tf.constant([[1, 2], [3, 4]]), tf.constant([1.0, 2.0])):
    try:
        next_collatz(bad)
    except TypeError as e:
        print("Caught expected exception\n  <class 'TypeError'>:", str(e).split(". Received")[0])

section("Controlling retracing: reduce_retracing generalises shapes")


@tf.function(reduce_retracing=True)
def g(x):
    print("Tracing with", x)
    return x


print(g(tf.constant([1, 2, 3])))  # Traces once.
print(g(tf.constant([1, 2, 3, 4, 5])))  # Traces again, but more generalized this time.
print(g(tf.constant([1, 2, 3, 4, 5, 6, 7])))  # No more tracing!
print(g(tf.constant([1, 2, 3, 4, 5, 6, 7, 8, 9])))

section("Obtaining concrete functions")
print("Obtaining concrete trace")
double_ints = double.get_concrete_function(tf.TensorSpec(shape=[2], dtype=tf.int32))
print("Executing traced function")
print(double_ints(tf.constant([1, 2])))
print(double_ints)

section("Inspecting the compiler: the IR of each stage")
print(dense_layer.experimental_get_compiler_ir(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))(stage="tfn"))
print(dense_layer.experimental_get_compiler_ir(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))(stage="linalg"))

section("Dynamic shapes: one trace serves every batch size")


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
def normalize(x):
    return (x - tf.reduce_mean(x, axis=0)) / (tf.reduce_max(tf.abs(x), axis=0) + 1e-6)


for n in (2, 5):
    print(normalize(tf.constant(np.arange(2 * n, dtype=np.float32).reshape(n, 2))))

# Later parts of the guide live in examples/sections/, one file per part, run here in the guide's order.
# Each file imports `section` from sections/common.py.
SECTIONS = ["tracing_extras.py", "autograph.py", "control_flow.py", "print_and_py_function.py", "variables.py",
            "gradients.py"]
_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sections")
sys.path.insert(0, _DIR)
for _name in SECTIONS:
    runpy.run_path(os.path.join(_DIR, _name), run_name="__main__")
