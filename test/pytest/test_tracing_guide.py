"""The guide's programs for Basics, Tracing, Rules of tracing, Controlling retracing, Obtaining concrete
functions and graphs, Debugging, recursion, leaks and Python globals/objects, run with `import tfn as tf`:
each prints what the guide prints (symbolic tensor names and `tf.`/`tfn.` aside)."""
import contextlib
import gc
import time
import traceback

import pytest

import tfn as tf


@contextlib.contextmanager
def assert_raises(error_class):
    try:
        yield
    except error_class:
        print('Caught expected exception \n  {}:'.format(error_class))
        traceback.print_exc(limit=2)
    except Exception as e:
        raise e
    else:
        raise Exception('Expected {} to be raised but no error was raised!'.format(error_class))


def _double():
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a
    return double


def test_basics_usage(capsys):
    @tf.function
    def add(a, b):
        return a + b

    @tf.function
    def dense_layer(x, w, b):
        return add(tf.matmul(x, w), b)

    print(repr(add(tf.ones([2, 2]), tf.ones([2, 2]))))
    print(repr(dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))))
    assert capsys.readouterr().out == """<tfn.Tensor: shape=(2, 2), dtype=float32, numpy=
array([[2., 2.],
       [2., 2.]], dtype=float32)>
<tfn.Tensor: shape=(3, 2), dtype=float32, numpy=
array([[3., 3.],
       [3., 3.],
       [3., 3.]], dtype=float32)>
"""


def test_what_is_tracing_and_concrete_functions_with_strings(capsys):
    double = _double()
    print(double(tf.constant(1)))
    print()
    print(double(tf.constant(1.1)))
    print()
    print(double(tf.constant("a")))
    print()
    print(double(tf.constant("b")))
    print(double.pretty_printed_concrete_signatures())
    sig = ("Input Parameters:\n  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tfn.{0}, name=None)\n"
           "Output Type:\n  TensorSpec(shape=(), dtype=tfn.{0}, name=None)\nCaptures:\n  None")
    assert capsys.readouterr().out == (
        'Tracing with Tensor("a:0", shape=(), dtype=int32)\ntfn.Tensor(2, shape=(), dtype=int32)\n\n'
        'Tracing with Tensor("a:0", shape=(), dtype=float32)\ntfn.Tensor(2.2, shape=(), dtype=float32)\n\n'
        'Tracing with Tensor("a:0", shape=(), dtype=string)\ntfn.Tensor(b\'aa\', shape=(), dtype=string)\n\n'
        "tfn.Tensor(b'bb', shape=(), dtype=string)\n"
        + "\n\n".join(sig.format(d) for d in ("int32", "float32", "string")) + "\n")

    print("Obtaining concrete trace")
    double_strings = double.get_concrete_function(tf.constant("a"))
    print("Executing traced function")
    print(double_strings(tf.constant("a")))
    print(double_strings(a=tf.constant("b")))
    double_strings_from_inputspec = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string))
    print(double_strings_from_inputspec(tf.constant("c")))
    print(double_strings)
    print(double_strings.function_type)
    with assert_raises(tf.errors.InvalidArgumentError):
        double_strings(tf.constant(1))
    graph = double_strings.graph
    for node in graph.as_graph_def().node:
        print(f'{node.input} -> {node.name}')
    atomic_fn = double_strings.inference_fn
    print(repr(atomic_fn(tf.constant("a"))))
    out = capsys.readouterr()
    assert out.out == (
        "Obtaining concrete trace\nExecuting traced function\ntfn.Tensor(b'aa', shape=(), dtype=string)\n"
        "tfn.Tensor(b'bb', shape=(), dtype=string)\ntfn.Tensor(b'cc', shape=(), dtype=string)\n"
        "ConcreteFunction " + sig.format("string") + "\n"
        "(a: TensorSpec(shape=(), dtype=tfn.string, name=None)) -> TensorSpec(shape=(), dtype=tfn.string, name=None)\n"
        "Caught expected exception \n  <class 'tfn.dialects.errors.InvalidArgumentError'>:\n"
        "[] -> a\n['a', 'a'] -> add\n['add'] -> Identity\n"
        "<tfn.Tensor: shape=(), dtype=string, numpy=b'aa'>\n")
    assert ("InvalidArgumentError: Binding inputs to tfn.function failed due to `Can not cast TensorSpec(shape=(), "
            "dtype=tfn.int32, name=None) to TensorSpec(shape=(), dtype=tfn.string, name=None)`") in out.err


def test_input_signature_errors_as_printed(capsys):
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    print(next_collatz(tf.constant([1, 2])))
    with assert_raises(TypeError):
        next_collatz(tf.constant([[1, 2], [3, 4]]))
    with assert_raises(TypeError):
        next_collatz(tf.constant([1.0, 2.0]))
    out = capsys.readouterr()
    caught = "Caught expected exception \n  <class 'TypeError'>:\n"
    assert out.out == ('Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
                       "tfn.Tensor([4 1], shape=(2,), dtype=int32)\n" + caught * 2)
    assert ("TypeError: Binding inputs to tfn.function failed due to `Can not cast TensorSpec(shape=(2, 2), "
            "dtype=tfn.int32, name=None) to TensorSpec(shape=(None,), dtype=tfn.int32, name=None)`. Received args: "
            "(<tfn.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>,) and "
            "kwargs: {} for signature: (x: TensorSpec(shape=(None,), dtype=tfn.int32, name=None)).") in out.err
    assert ("TypeError: Binding inputs to tfn.function failed due to `Can not cast TensorSpec(shape=(2,), "
            "dtype=tfn.float32, name=None) to TensorSpec(shape=(None,), dtype=tfn.int32, name=None)`") in out.err


def test_python_arguments_retrace_and_tf_print_runs_each_call(capsys):
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

    def f():
        print('Tracing!')
        tf.print('Executing')

    tf.function(f)()
    tf.function(f)()
    out = capsys.readouterr()
    assert out.out == (
        "Retracing occurs for different Python arguments.\nTracing with num_steps =  10\n"
        "Tracing with num_steps =  20\n\nTraces are reused for Tensor arguments.\n"
        'Tracing with num_steps =  Tensor("num_steps:0", shape=(), dtype=int32)\nTracing!\nTracing!\n')
    assert out.err == ("Executing with num_steps =  10\nExecuting with num_steps =  20\n"  # tf.print: stderr
                       "Executing with num_steps =  10\nExecuting with num_steps =  20\nExecuting\nExecuting\n")


def test_tracing_protocol_fruit():
    @tf.function
    def get_mixed_flavor(fruit_a, fruit_b):
        return fruit_a.flavor + fruit_b.flavor

    class Fruit:
        flavor = tf.constant([0, 0])

    class Apple(Fruit):
        flavor = tf.constant([1, 2])

    class Mango(Fruit):
        flavor = tf.constant([3, 4])

    get_mixed_flavor(Apple(), Mango())  # Traces a new concrete function
    get_mixed_flavor(Apple(), Mango())  # Traces a new concrete function again
    assert len(get_mixed_flavor.experimental_trace_log()) == 2

    class FruitTraceType(tf.types.experimental.TraceType):
        def __init__(self, fruit):
            self.fruit_type = type(fruit)
            self.fruit_value = fruit

        def is_subtype_of(self, other):
            return (type(other) is FruitTraceType and self.fruit_type is other.fruit_type)

        def most_specific_common_supertype(self, others):
            return self if all(self == other for other in others) else None

        def placeholder_value(self, placeholder_context=None):
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

    get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())  # Traces a new concrete function
    result = get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())  # Re-uses the traced concrete function
    assert repr(result) == "<tfn.Tensor: shape=(2,), dtype=int32, numpy=array([4, 6], dtype=int32)>"
    assert len(get_mixed_flavor.experimental_trace_log()) == 3
    # A TraceType lacking one of the abstract methods cannot be made, as in TF.

    class Partial(tf.types.experimental.TraceType):
        def is_subtype_of(self, other):
            return True

    with pytest.raises(TypeError, match="abstract"):
        Partial()


def test_generic_objects_are_held_weakly():
    class Config:
        scale = 3

    @tf.function
    def f(cfg, x):
        return x * cfg.scale

    cfg = Config()
    assert f(cfg, tf.constant(2)).numpy() == 6
    assert f(cfg, tf.constant(5)).numpy() == 15  # the same object: no retrace
    assert len(f.experimental_trace_log()) == 1
    ref = __import__("weakref").ref(cfg)
    del cfg
    gc.collect()
    assert ref() is None  # neither the trace nor the call cache keeps it alive
    assert "Weakref[<deleted object>]" in f.pretty_printed_concrete_signatures()
    assert f(Config(), tf.constant(1)).numpy() == 3
    assert len(f.experimental_trace_log()) == 2

    class Point:  # equal objects share a trace (by ==) while the first one lives
        def __init__(self, k):
            self.k = k

        def __eq__(self, other):
            return isinstance(other, Point) and self.k == other.k

        def __hash__(self):
            return hash(self.k)

    p = Point(1)
    g = tf.function(lambda pt, x: x + pt.k)
    assert g(p, tf.constant(1)).numpy() == 2
    assert g(Point(1), tf.constant(1)).numpy() == 2
    assert g(Point(2), tf.constant(1)).numpy() == 3
    assert len(g.experimental_trace_log()) == 2


def test_pow_with_unknown_rank_spec(capsys):
    @tf.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    print(square)
    assert square(tf.constant(10.0)) == 100
    with assert_raises(TypeError):
        square(tf.constant(10.0), b=3)
    out = capsys.readouterr()
    assert out.out == """ConcreteFunction Input Parameters:
  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tfn.float32, name=None)
  b (POSITIONAL_OR_KEYWORD): Literal[2]
Output Type:
  TensorSpec(shape=<unknown>, dtype=tfn.float32, name=None)
Captures:
  None
""" + "Caught expected exception \n  <class 'TypeError'>:\n"
    assert ("TypeError: Binding inputs to tfn.function failed due to `Can not cast 3 to Literal[2]`. Received args: "
            "(<tfn.Tensor: shape=(), dtype=float32, numpy=10.0>,) and kwargs: {'b': 3} for signature: (a: TensorSpec("
            "shape=<unknown>, dtype=tfn.float32, name=None), b: Literal[2]) -> TensorSpec(shape=<unknown>, "
            "dtype=tfn.float32, name=None).\nFallback to flat signature also failed due to: pow(a) got unexpected "
            "keyword arguments: b.") in out.err
    # Any rank runs (one compiled specialisation per rank); the signature stays unranked.
    assert square(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist() == [[1.0, 4.0], [9.0, 16.0]]
    assert square(tf.constant([3.0])).numpy().tolist() == [9.0]
    assert sorted(square.specializations) == [(0,), (1,), (2,)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not cast TensorSpec"):
        square(tf.constant([1, 2]))


def test_leaked_tensors(capsys):
    x = None

    @tf.function
    def leaky_function(a):
        nonlocal x
        x = a + 1  # Bad - leaks local tensor
        return a + 2

    correct_a = leaky_function(tf.constant(1))
    print(correct_a.numpy())  # Good - value obtained from function's returns
    try:
        x.numpy()  # Bad - tensor leaked from inside the function, cannot be used here
    except AttributeError as expected:
        print(expected)
    line = leaky_function.python_function.__code__.co_firstlineno + 3

    @tf.function
    def captures_leaked_tensor(b):
        b += x  # Bad - `x` is leaked from `leaky_function`
        return b

    with assert_raises(TypeError):
        captures_leaked_tensor(tf.constant(2))
    out = capsys.readouterr()
    assert out.out == ("3\n'SymbolicTensor' object has no attribute 'numpy'\n"
                       "Caught expected exception \n  <class 'TypeError'>:\n")
    assert ("TypeError: <tfn.Tensor 'add:0' shape=() dtype=int32> is out of scope and cannot be used here. Use return "
            "values, explicit Python locals or TensorFlow collections to access it.\nPlease see https://www.tensorflow"
            ".org/guide/function#all_outputs_of_a_tffunction_must_be_return_values for more information.\n\n"
            "<tfn.Tensor 'add:0' shape=() dtype=int32> was defined here:\n"
            f'    File "{__file__}", line {line}, in leaky_function\n\n'
            "The tensor <tfn.Tensor 'add:0' shape=() dtype=int32> cannot be accessed from here, because it was "
            "defined in FuncGraph(name=leaky_function, id=") in out.err
    with pytest.raises(TypeError, match="is out of scope"):
        x + 1  # eagerly  # noqa: B018
    with pytest.raises(TypeError, match="is out of scope"):
        captures_leaked_tensor(x)  # as an argument

    @tf.function
    def returns_leaked():
        return x

    with pytest.raises(TypeError, match="is out of scope"):
        returns_leaked()


def test_recursion(capsys):
    @tf.function
    def recursive_fn(n):
        if n > 0:
            print('tracing')
            return recursive_fn(n - 1)
        else:
            return 1

    print(repr(recursive_fn(5)))  # Warning - multiple tracings
    assert capsys.readouterr().out == "tracing\n" * 5 + "<tfn.Tensor: shape=(), dtype=int32, numpy=1>\n"

    @tf.function
    def recursive_fn2(n):
        if n > 0:
            return recursive_fn2(n - 1)
        else:
            return 1

    start = time.perf_counter()
    with pytest.raises(RecursionError, match=r"the tfn.function 'recursive_fn2' calls itself recursively with the "
                       r"same argument types \(n: TensorSpec\(shape=\(\), dtype=tfn.int32, name=None\)\) while it is "
                       r"being traced \(at .*test_tracing_guide.py:\d+\): a recursion on a tensor value"):
        recursive_fn2(tf.constant(5))  # Bad - maximum recursion error.
    assert time.perf_counter() - start < 5

    @tf.function
    def by_depth(x, depth):  # recursion on a Python value with tensor arguments is fine
        return x if depth == 0 else by_depth(x * 2, depth - 1)

    assert by_depth(tf.constant(1), 3).numpy() == 8


def test_python_globals_and_variables(capsys):
    foo = 1

    @tf.function
    def buggy_add():
        return 1 + foo

    @tf.function
    def recommended_add(foo):
        return 1 + foo

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
    assert capsys.readouterr().out == """Buggy: tfn.Tensor(2, shape=(), dtype=int32)
Correct: tfn.Tensor(2, shape=(), dtype=int32)
Updating the value of `foo` to 100!
Buggy: tfn.Tensor(2, shape=(), dtype=int32)
Correct: tfn.Tensor(101, shape=(), dtype=int32)
Variable: tfn.Tensor(2, shape=(), dtype=int32)
Updating the value of `foo` to 100!
Variable: tfn.Tensor(101, shape=(), dtype=int32)
"""


def test_python_objects(capsys):
    class SimpleModel(tf.Module):
        def __init__(self):
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
    print(evaluate_no_bias(x))  # Don't pass in `new_model`.
    print("Adding bias!")
    new_model.bias += 5.0
    evaluate_with_bias = tf.function(evaluate).get_concrete_function(new_model, x)
    print(evaluate_with_bias(x))

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
    better_model.bias.assign_add(5.0)
    print(evaluate(better_model, x))  # This works!
    twenty, twenty_five = "tfn.Tensor(20.0, shape=(), dtype=float32)\n", "tfn.Tensor(25.0, shape=(), dtype=float32)\n"
    changed = twenty + "Adding bias!\n" + twenty_five
    assert capsys.readouterr().out == twenty + "Adding bias!\n" + twenty + changed * 2
    # The flat signature takes the tensors only; a Python value given must still be the traced one.
    assert evaluate_with_bias(new_model, x).numpy() == 25.0
    with pytest.raises(TypeError, match=r"Fallback to flat signature also failed due to: evaluate\(x\) takes 1 "
                       "positional arguments, got 2"):
        evaluate_with_bias(SimpleModel(), x)
