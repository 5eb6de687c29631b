"""The guide's What is "tracing"?, Rules of tracing, Controlling retracing and Obtaining concrete functions
parts, run by tfn, and one trace serving every batch size (a dynamic dimension)."""
import numpy as np
from common import section

import tfn as tf

section("Tracing: one trace per input type, then cached")


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant(1)))
print()
print(double(tf.constant(1.1)))
print()
print(double(tf.constant("a")))
print()
# This doesn't print 'Tracing with ...'
print(double(tf.constant("b")))

print(double.pretty_printed_concrete_signatures())

section("Rules of tracing: the tracing protocol")


@tf.function
def get_mixed_flavor(fruit_a, fruit_b):
    return fruit_a.flavor + fruit_b.flavor


class Fruit:
    flavor = tf.constant([0, 0])


class Apple(Fruit):
    flavor = tf.constant([1, 2])


class Mango(Fruit):
    flavor = tf.constant([3, 4])


# A generic TraceType for `Apple` and `Mango` is generated, but it fails to match the second call since the
# first pair of Apple() and Mango() have gone out of scope by then and been deleted.
get_mixed_flavor(Apple(), Mango())  # Traces a new concrete function
get_mixed_flavor(Apple(), Mango())  # Traces a new concrete function again
print("Traces so far:", len(get_mixed_flavor.experimental_trace_log()))


class FruitTraceType(tf.types.experimental.TraceType):
    def __init__(self, fruit):
        self.fruit_type = type(fruit)
        self.fruit_value = fruit

    def is_subtype_of(self, other):
        # True if self subtypes `other` and `other`'s type matches FruitTraceType.
        return (type(other) is FruitTraceType and
                self.fruit_type is other.fruit_type)

    def most_specific_common_supertype(self, others):
        # `self` is the specific common supertype if all input types match it.
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        # Use the fruit itself instead of the type for correct tracing.
        return self.fruit_value

    def __eq__(self, other):
        return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

    def __hash__(self):
        return hash(self.fruit_type)


class FruitWithTraceType:

    def __tf_tracing_type__(self, context):
        return FruitTraceType(self)


class AppleWithTraceType(FruitWithTraceType):
    flavor = tf.constant([1, 2])


class MangoWithTraceType(FruitWithTraceType):
    flavor = tf.constant([3, 4])


# Now if you try calling it again:
get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())  # Traces a new concrete function
print(repr(get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())))  # Re-uses the traced concrete function
print("Traces so far:", len(get_mixed_flavor.experimental_trace_log()))

section("Controlling retracing: a fixed input_signature")


@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])))
# You specified a 1-D tensor in the input signature, so this should fail.
# You specified an int32 dtype in the input signature, so this should fail.
for bad in (tf.constant([[1, 2], [3, 4]]), tf.constant([1.0, 2.0])):
    try:
        next_collatz(bad)
    except TypeError as e:
        print("Caught expected exception \n  <class 'TypeError'>:\n" + str(e))

section("Controlling retracing: unknown dimensions and reduce_retracing")


@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def g(x):
    print('Tracing with', x)
    return x


# No retrace!
print(g(tf.constant([1, 2, 3])))
print(g(tf.constant([1, 2, 3, 4, 5])))


@tf.function(reduce_retracing=True)
def g(x):
    print('Tracing with', x)
    return x


print(g(tf.constant([1, 2, 3])))  # Traces once.
print(g(tf.constant([1, 2, 3, 4, 5])))  # Traces again, but more generalized this time.
print(g(tf.constant([1, 2, 3, 4, 5, 6, 7])))  # No more tracing!
print(g(tf.constant([1, 2, 3, 4, 5, 6, 7, 8, 9])))

section("Controlling retracing: pass tensors instead of Python literals")


def train_one_step():
    pass


@tf.function
def train(num_steps):
    print("Tracing with num_steps = ", num_steps)
    tf.print("Executing with num_steps = ", num_steps)
    for _ in tf.range(num_steps):
        train_one_step()


print("Retracing occurs for different Python arguments.")
train(num_steps=10)
train(num_steps=20)

print()
print("Traces are reused for Tensor arguments.")
train(num_steps=tf.constant(10))
train(num_steps=tf.constant(20))

print("\nSeparate tfn.function objects never share traces:")


def f():
    print('Tracing!')
    tf.print('Executing')


tf.function(f)()
tf.function(f)()

section("Obtaining concrete functions")
print("Obtaining concrete trace")
double_strings = double.get_concrete_function(tf.constant("a"))
print("Executing traced function")
print(double_strings(tf.constant("a")))
print(double_strings(a=tf.constant("b")))
# You can also call get_concrete_function on an InputSpec
double_strings_from_inputspec = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string))
print(double_strings_from_inputspec(tf.constant("c")))
print(double_strings)
print(double_strings.function_type)
try:
    double_strings(tf.constant(1))
except tf.errors.InvalidArgumentError as e:
    print(f"Caught expected exception \n  {type(e)}:\n{e}")

section("Dynamic shapes: one trace serves every batch size")


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
def normalize(x):
    return (x - tf.reduce_mean(x, axis=0)) / (tf.reduce_max(tf.abs(x), axis=0) + 1e-6)


for n in (2, 5):
    print(normalize(tf.constant(np.arange(2 * n, dtype=np.float32).reshape(n, 2))))
