"""The guide's Basics / Usage part, run by tfn, and the IR tfn makes of it at each compiler stage."""
from common import section

import tfn as tf

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

section("Inspecting the compiler: the IR of each stage")
print(dense_layer.experimental_get_compiler_ir(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))(stage="tfn"))
print(dense_layer.experimental_get_compiler_ir(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))(stage="linalg"))
