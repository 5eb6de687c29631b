"""The guide's variable programs (Limitations, Known Issues), run by tfn: state read and written by compiled code."""
from common import section

import tfn as tf

section("Changing Python global and free variables")


class Model(tf.Module):
    def __init__(self):
        self.v = tf.Variable(0)
        self.counter = 0

    @tf.function
    def __call__(self):
        if self.counter == 0:
            # A python side-effect
            self.counter += 1
            self.v.assign_add(1)

        return self.v


m = Model()
for _n in range(3):
    print(m().numpy())  # prints 1, 2, 3

print()


class Model(tf.Module):  # noqa: F811  (the guide redefines it)
    def __init__(self):
        self.v = tf.Variable(0)
        self.counter = 0

    @tf.function
    def __call__(self):
        if self.counter == 0:
            # Lifts ops out of function-building graphs
            with tf.init_scope():
                self.counter += 1
                self.v.assign_add(1)

        return self.v


m = Model()
for _n in range(3):
    print(m().numpy())  # prints 1, 1, 1

section("Creating tf.Variables")


@tf.function
def f(x):
    v = tf.Variable(1.0)
    return v


try:
    f(1.0)
except ValueError as e:
    print(f"Caught expected exception \n  {type(e)}:\n{e}")


class Count(tf.Module):
    def __init__(self):
        self.count = None

    @tf.function
    def __call__(self):
        if self.count is None:
            self.count = tf.Variable(0)
        return self.count.assign_add(1)


c = Count()
print(c())
print(c())

section("Variables: reads and writes in program order, captures")

a = tf.Variable(1.0)
b = tf.Variable(2.0)


@tf.function
def g(x, y):
    a.assign(y * b)
    b.assign_add(x * a)
    return a + b


print(g(1.0, 2.0))  # 10.0
print(a, b)
print(g.get_concrete_function(1.0, 2.0))
print("The traced function: variables come in as arguments, written ones go out as results")
print(g.experimental_get_compiler_ir(1.0, 2.0)())
