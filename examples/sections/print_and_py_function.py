"""The guide's tf.print, tf.py_function and string parts, run by tfn: compiled code calling back into Python."""
from common import section

import tfn as tf

section("Executing Python side effects: print runs when tracing, tf.print at every call")


@tf.function
def f(x):
    print("Traced with", x)
    tf.print("Executed with", x)


f(1)
f(1)
f(2)

section("AutoGraph: tf.print inside a loop and its branches")


@tf.function
def fizzbuzz(n):
    for i in tf.range(1, n + 1):
        if i % 15 == 0:
            tf.print('fizzbuzz')
        elif i % 3 == 0:
            tf.print('fizz')
        elif i % 5 == 0:
            tf.print('buzz')
        else:
            tf.print(i)


fizzbuzz(tf.constant(15))

section("tf.py_function: an exit hatch that runs Python at every call")


@tf.py_function(Tout=tf.float32)
def py_plus(x, y):
    print('Executing eagerly.')
    return x + y


@tf.function
def tf_wrapper(x, y):
    print('Tracing.')
    return py_plus(x, y)


print(tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy())
print(tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy())

section("String tensors in compiled functions")


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant("a")))
print(double(tf.constant("b")))
tf.print("tf.print of strings:", double(tf.constant("c")), tf.constant(["a", "b"]) == "b")
