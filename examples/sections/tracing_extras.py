"""The guide's Obtaining graphs, Debugging, leaks, recursion, and Python globals/objects parts, run by tfn."""
from common import section

import tfn as tf


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


section("Obtaining concrete functions: unknown ranks and Python arguments")


@tf.function
def pow(a, b):
    return a ** b


# tfn compiles an unranked parameter once per rank it is called with; the signature stays unranked.
square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
print(square)
assert square(tf.constant(10.0)) == 100
print(square(tf.constant([[1.0, 2.0], [3.0, 4.0]])))
try:
    square(tf.constant(10.0), b=3)
except TypeError as e:
    print("Caught expected exception \n  <class 'TypeError'>:\n" + str(e))

section("Obtaining graphs")
double_strings = double.get_concrete_function(tf.constant("a"))
graph = double_strings.graph
for node in graph.as_graph_def().node:
    print(f'{node.input} -> {node.name}')

atomic_fn = double_strings.inference_fn
print(repr(atomic_fn(tf.constant("a"))))

section("Debugging: tf.config.run_functions_eagerly")
tf.config.run_functions_eagerly(True)
print(double(tf.constant(3)))  # runs the Python function itself: 'Tracing with' shows an eager tensor
tf.config.run_functions_eagerly(False)
print(double(tf.constant(3)))

section("All outputs of a tf.function must be return values")
x = None


@tf.function
def leaky_function(a):
    global x
    x = a + 1  # Bad - leaks local tensor
    return a + 2


correct_a = leaky_function(tf.constant(1))
print(correct_a.numpy())  # Good - value obtained from function's returns
try:
    x.numpy()  # Bad - tensor leaked from inside the function, cannot be used here
except AttributeError as expected:
    print(expected)


@tf.function
def captures_leaked_tensor(b):
    b += x  # Bad - `x` is leaked from `leaky_function`
    return b


try:
    captures_leaked_tensor(tf.constant(2))
except TypeError as e:
    print("Caught expected exception \n  <class 'TypeError'>:\n" + str(e))

section("Recursive tf.functions are not supported")


def recursion_examples():
    # (Defined in a function: AutoGraph cannot yet convert a module-level function that calls itself.)
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        else:
            return 1

    try:
        recursive_fn(tf.constant(5))  # Bad - maximum recursion error.
    except Exception as e:  # the guide's assert_raises(Exception)
        print("Caught expected exception \n  <class 'Exception'>:\n" + f"tfn.errors.{type(e).__name__}: {e}")

    @tf.function
    def recursive_fn(n):
        if n > 0:
            print('tracing')
            return recursive_fn(n - 1)
        else:
            return 1

    print(repr(recursive_fn(5)))  # Warning - multiple tracings


recursion_examples()

section("Depending on Python global and free variables")


@tf.function
def buggy_add():
    return 1 + foo


@tf.function
def recommended_add(foo):
    return 1 + foo


foo = 1
print("Buggy:", buggy_add())
print("Correct:", recommended_add(foo))
print("Updating the value of `foo` to 100!")
foo = 100
print("Buggy:", buggy_add())  # Did not change!
print("Correct:", recommended_add(foo))


@tf.function
def variable_add():
    return 1 + foo


foo = tf.Variable(1)
print("Variable:", variable_add())
print("Updating the value of `foo` to 100!")
foo.assign(100)
print("Variable:", variable_add())

section("Depending on Python objects")


class SimpleModel(tf.Module):
    def __init__(self):
        # These values are *not* tf.Variables.
        self.bias = 0.
        self.weight = 2.


@tf.function
def evaluate(model, x):
    return model.weight * x + model.bias


simple_model = SimpleModel()
x = tf.constant(10.)
print(evaluate(simple_model, x))
print("Adding bias!")
simple_model.bias += 5.0
print(evaluate(simple_model, x))  # Didn't change :(


def evaluate(model, x):
    return model.weight * x + model.bias


new_model = SimpleModel()
evaluate_no_bias = tf.function(evaluate).get_concrete_function(new_model, x)
# Don't pass in `new_model`. `tf.function` already captured its state during tracing.
print(evaluate_no_bias(x))
print("Adding bias!")
new_model.bias += 5.0
# Create new `tf.function` and `ConcreteFunction` since you modified `new_model`.
evaluate_with_bias = tf.function(evaluate).get_concrete_function(new_model, x)
print(evaluate_with_bias(x))  # Don't pass in `new_model`.


class BetterModel:

    def __init__(self):
        self.bias = tf.Variable(0.)
        self.weight = tf.Variable(2.)


@tf.function
def evaluate(model, x):
    return model.weight * x + model.bias


better_model = BetterModel()
print(evaluate(better_model, x))
print("Adding bias!")
better_model.bias.assign_add(5.0)  # Note: instead of better_model.bias += 5
print(evaluate(better_model, x))  # This works!
