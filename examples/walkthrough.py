"""A walkthrough of TensorFlow's tf.function guide, compiled by tfn. Run: python examples/walkthrough.py

Each part of the guide (https://www.tensorflow.org/guide/function) that works in tfn today is a file in
examples/sections/, with `tf` read as `tfn`, run here in the guide's order; the Speed part, whose output is
timings, is written here. Everything under @tfn.function is traced into the tfn MLIR dialect, lowered through
linalg to LLVM, compiled to native code and called from Python. The test suite checks each section's output.
"""
import importlib.util
import os
import runpy
import sys
import timeit

import numpy as np

import tfn as tf

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sections")
sys.path.insert(0, _DIR)  # each section imports `section` from sections/common.py
from common import section  # noqa: E402


def run_section(name):
    if name == "distribute.py" and importlib.util.find_spec("mpi4py") is None:
        section("Distributed training: not run — tfn.distribute needs MPI: pip install \".[distribute]\"")
        return
    runpy.run_path(os.path.join(_DIR, name), run_name="__main__")


def speed():
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

    print("\nA few expensive ops (the guide's convolution, a tfn.keras Conv2D layer):")
    conv_layer = tf.keras.layers.Conv2D(100, 3)

    @tf.function
    def conv_fn(image):
        return conv_layer(image)

    image = tf.zeros([1, 200, 200, 100])
    conv_layer(image)  # Warm up
    conv_fn(image)
    print("Eager conv:", timeit.timeit(lambda: conv_layer(image), number=10))
    print("Function conv:", timeit.timeit(lambda: conv_fn(image), number=10))
    print("Note how there's not much difference in performance for convolutions")


run_section("basics.py")
speed()
for name in ["tracing.py", "tracing_extras.py", "autograph.py", "control_flow.py", "data.py",
             "print_and_py_function.py", "variables.py", "gradients.py", "everyday_ops.py", "linear_algebra.py",
             "keras.py", "keras_callbacks.py", "tiered_compilation.py", "saved_model.py", "distribute.py",
             "devices.py"]:
    run_section(name)
