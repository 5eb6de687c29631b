"""The tf.function guide's tracing programs: signatures, concrete functions, input_signature, retracing."""
import warnings

import pytest

import tfn as tf
from tfn.tracing.polymorphic import RetracingWarning

SIG_INT = """Input Parameters:
  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tfn.int32, name=None)
Output Type:
  TensorSpec(shape=(), dtype=tfn.int32, name=None)
Captures:
  None"""
SIG_FLOAT = SIG_INT.replace("int32", "float32")


def _double():
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a
    return double


def test_run_functions_eagerly_and_executing_eagerly(capsys):
    @tf.function
    def f(x):
        print("eager" if tf.executing_eagerly() else "tracing")
        return x + 1

    assert tf.executing_eagerly() and not tf.config.functions_run_eagerly()
    f(tf.constant(1))
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        assert f(tf.constant(1)).numpy() == 2
        assert f(tf.constant(1)).numpy() == 2
    finally:
        tf.config.run_functions_eagerly(False)
    f(tf.constant(1))
    assert capsys.readouterr().out.split() == ["tracing", "eager", "eager"]


def test_pretty_printed_concrete_signatures(capsys):
    double = _double()
    print(double(tf.constant(1)))
    print()
    print(double(tf.constant(1.1)))
    print()
    print(double.pretty_printed_concrete_signatures())
    assert capsys.readouterr().out == (
        'Tracing with Tensor("a:0", shape=(), dtype=int32)\ntfn.Tensor(2, shape=(), dtype=int32)\n\n'
        'Tracing with Tensor("a:0", shape=(), dtype=float32)\ntfn.Tensor(2.2, shape=(), dtype=float32)\n\n'
        + SIG_INT + "\n\n" + SIG_FLOAT + "\n")


def test_obtaining_concrete_functions(capsys):
    double = _double()
    print("Obtaining concrete trace")
    double_ints = double.get_concrete_function(tf.constant(1))
    print("Executing traced function")
    print(double_ints(tf.constant(2)))
    print(double_ints(a=tf.constant(3)))
    from_spec = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.int32))
    assert from_spec is double_ints  # no retrace for the same type
    print(from_spec(tf.constant(4)))
    print(double_ints)
    print(double_ints.function_type)
    assert capsys.readouterr().out == (
        'Obtaining concrete trace\nTracing with Tensor("a:0", shape=(), dtype=int32)\nExecuting traced function\n'
        "tfn.Tensor(4, shape=(), dtype=int32)\ntfn.Tensor(6, shape=(), dtype=int32)\n"
        "tfn.Tensor(8, shape=(), dtype=int32)\n"
        f"ConcreteFunction {SIG_INT}\n"
        "(a: TensorSpec(shape=(), dtype=tfn.int32, name=None)) -> TensorSpec(shape=(), dtype=tfn.int32, name=None)\n")
    assert double_ints.pretty_printed_signature() == SIG_INT
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not cast TensorSpec\(shape=\(\), dtype=tfn."
                       r"float32, name=None\) to TensorSpec\(shape=\(\), dtype=tfn.int32, name=None\)"):
        double_ints(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not cast TensorSpec\(shape=\(2,\)"):
        double_ints(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="missing required argument: 'a'"):
        double_ints()


def test_python_arguments_are_literals_in_the_signature(capsys):
    @tf.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    print(square)
    assert capsys.readouterr().out == """ConcreteFunction Input Parameters:
  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tfn.float32, name=None)
  b (POSITIONAL_OR_KEYWORD): Literal[2]
Output Type:
  TensorSpec(shape=<unknown>, dtype=tfn.float32, name=None)
Captures:
  None
"""
    assert square(tf.constant(10.0)) == 100
    assert square(tf.constant(10.0), b=2) == 100
    with pytest.raises(TypeError, match=r"Binding inputs to tfn.function failed due to `Can not cast 3 to "
                       r"Literal\[2\]`. Received args: \(<tfn.Tensor: shape=\(\), dtype=float32, numpy=10.0>,\) "
                       r"and kwargs: \{'b': 3\} for signature: \(a: TensorSpec\(shape=<unknown>, dtype=tfn.float32, "
                       r"name=None\), b: Literal\[2\]\) -> TensorSpec\(shape=<unknown>"):
        square(tf.constant(10.0), b=3)


def test_concrete_function_from_mixed_arguments():
    @tf.function
    def f(x, n, scale=2.0, *, offset):
        return (x * scale + offset) * n

    c = f.get_concrete_function(tf.TensorSpec([None], tf.float32), 3, offset=tf.constant(1.0))
    assert c(tf.constant([1.0, 2.0]), 3, offset=tf.constant(0.5)).numpy().tolist() == [7.5, 13.5]
    assert c(x=tf.constant([1.0]), n=3, scale=2.0, offset=tf.constant(0.0)).numpy().tolist() == [6.0]
    assert "n (POSITIONAL_OR_KEYWORD): Literal[3]" in str(c)
    assert "offset (KEYWORD_ONLY): TensorSpec(shape=(), dtype=tfn.float32, name=None)" in str(c)
    with pytest.raises(TypeError, match=r"Can not cast 4 to Literal\[3\]"):
        c(tf.constant([1.0]), 4, offset=tf.constant(0.0))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        c(tf.constant([1.0]), 3, offset=tf.constant(0.0), bogus=1)
    # A call with a fitting type dispatches to the more general trace.
    assert f(tf.constant([1.0, 2.0, 3.0]), 3, offset=tf.constant(0.0)).numpy().tolist() == [6.0, 12.0, 18.0]
    assert len(f.experimental_trace_log()) == 1


def test_input_signature(capsys):
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    print(next_collatz(tf.constant([1, 2])))
    with pytest.raises(TypeError) as e:
        next_collatz(tf.constant([[1, 2], [3, 4]]))
    assert str(e.value).startswith(
        "Binding inputs to tfn.function failed due to `Can not cast TensorSpec(shape=(2, 2), dtype=tfn.int32, "
        "name=None) to TensorSpec(shape=(None,), dtype=tfn.int32, name=None)`. Received args: (<tfn.Tensor: ")
    assert str(e.value).endswith("and kwargs: {} for signature: (x: TensorSpec(shape=(None,), dtype=tfn.int32, "
                                 "name=None)).")
    with pytest.raises(TypeError, match=r"Can not cast TensorSpec\(shape=\(2,\), dtype=tfn.float32, name=None\) "
                       r"to TensorSpec\(shape=\(None,\), dtype=tfn.int32, name=None\)"):
        next_collatz(tf.constant([1.0, 2.0]))
    assert next_collatz([3, 4]).numpy().tolist() == [10, 2]  # Python values are converted

    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def g(x):
        print('Tracing with', x)
        return x

    print(g(tf.constant([1, 2, 3])))
    print(g(tf.constant([1, 2, 3, 4, 5])))
    assert capsys.readouterr().out == (
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\ntfn.Tensor([4 1], shape=(2,), dtype=int32)\n'
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\ntfn.Tensor([1 2 3], shape=(3,), dtype=int32)\n'
        "tfn.Tensor([1 2 3 4 5], shape=(5,), dtype=int32)\n")
    assert g.get_concrete_function() is g.get_concrete_function(tf.constant([7]))


def test_reduce_retracing(capsys):
    @tf.function(reduce_retracing=True)
    def g(x):
        print('Tracing with', x)
        return x

    print(g(tf.constant([1, 2, 3])))
    print(g(tf.constant([1, 2, 3, 4, 5])))
    print(g(tf.constant([1, 2, 3, 4, 5, 6, 7])))
    print(g(tf.constant([1, 2, 3, 4, 5, 6, 7, 8, 9])))
    assert capsys.readouterr().out == (
        'Tracing with Tensor("x:0", shape=(3,), dtype=int32)\ntfn.Tensor([1 2 3], shape=(3,), dtype=int32)\n'
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\ntfn.Tensor([1 2 3 4 5], shape=(5,), dtype=int32)\n'
        "tfn.Tensor([1 2 3 4 5 6 7], shape=(7,), dtype=int32)\n"
        "tfn.Tensor([1 2 3 4 5 6 7 8 9], shape=(9,), dtype=int32)\n")
    # The exact (3,) trace stays the most specific match for its shape.
    assert g.get_concrete_function(tf.constant([0, 0, 0])).function_type.params[0][2].shape == (3,)


def test_python_arguments_retrace_and_separate_functions_do_not_share(capsys):
    @tf.function
    def train(num_steps):
        print("Tracing with num_steps = ", num_steps)
        return tf.convert_to_tensor(num_steps) * 1

    train(num_steps=10)
    train(num_steps=20)
    train(num_steps=tf.constant(10))
    train(num_steps=tf.constant(20))

    def f():
        print('Tracing!')

    tf.function(f)()
    tf.function(f)()
    assert capsys.readouterr().out == (
        "Tracing with num_steps =  10\nTracing with num_steps =  20\n"
        'Tracing with num_steps =  Tensor("num_steps:0", shape=(), dtype=int32)\nTracing!\nTracing!\n')


def test_tracing_protocol():
    class FruitTraceType:
        def __init__(self, fruit):
            self.fruit_type = type(fruit)
            self.fruit_value = fruit

        def is_subtype_of(self, other):
            return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

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

    @tf.function
    def get_mixed_flavor(fruit_a, fruit_b):
        return fruit_a.flavor + fruit_b.flavor

    assert get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()).numpy().tolist() == [4, 6]
    assert get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()).numpy().tolist() == [4, 6]
    assert len(get_mixed_flavor.experimental_trace_log()) == 1


def test_retracing_warning_and_trace_log():
    @tf.function
    def f(x):
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 16):
            f(tf.zeros([n]))
    retracing = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert len(retracing) == 2
    msg = str(retracing[0].message)
    assert "5 out of the last 5 calls to f triggered tfn.function retracing" in msg
    assert ("argument 'x' changed from TensorSpec(shape=(4,), dtype=tfn.float32, name=None) to "
            "TensorSpec(shape=(5,), dtype=tfn.float32, name=None)") in msg
    log = f.experimental_trace_log()
    assert len(log) == 15
    assert log[0] == "trace 1: f(x: TensorSpec(shape=(1,), dtype=tfn.float32, name=None))"
    assert log[1] == ("trace 2: f: argument 'x' changed from TensorSpec(shape=(1,), dtype=tfn.float32, name=None) "
                      "to TensorSpec(shape=(2,), dtype=tfn.float32, name=None)")


def test_no_warning_for_occasional_traces():
    f = tf.function(lambda x: x * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for n in range(1, 6):
            for _ in range(3):
                f(tf.zeros([n]))


def test_methods_keep_their_traces():
    class M:
        @tf.function
        def apply(self, x):
            return x + 1

    m = M()
    m.apply(tf.constant(1))
    m.apply(tf.constant(2))
    assert len(m.apply.experimental_trace_log()) == 1


def test_input_signature_converts_python_values_inside_structures():
    @tf.function(input_signature=(tf.TensorSpec([None], tf.int32), [tf.TensorSpec([], tf.int32)] * 2))
    def f(x, pair):
        return x * pair[0] + pair[1]

    assert f([1, 2], [tf.constant(3), tf.constant(1)]).numpy().tolist() == [4, 7]
    assert f(tf.constant([1]), [2, 5]).numpy().tolist() == [7]
    assert f(tf.constant([1]), [2, 5]).numpy().tolist() == [7]
    assert len(f.experimental_trace_log()) == 1


def test_nested_and_keyword_arguments_hit_the_cache():
    @tf.function
    def f(d, *, k=1):
        return d["a"] * k + d["b"][0]

    d = {"b": [tf.constant(1.0)], "a": tf.constant(2.0)}
    assert f(d, k=3).numpy() == 7.0
    assert f({"a": tf.constant(1.0), "b": [tf.constant(0.5)]}, k=3).numpy() == 3.5
    assert f(d).numpy() == 3.0
    assert len(f.experimental_trace_log()) == 2


def test_equal_instances_get_their_own_bound_functions():
    class P:
        def __init__(self, k):
            self.k = k

        def __eq__(self, other):
            return True

        def __hash__(self):
            return 0

        @tf.function
        def scale(self, x):
            return x * self.k

    assert P(2).scale(tf.constant(1)).numpy() == 2
    assert P(3).scale(tf.constant(1)).numpy() == 3


def test_bound_functions_do_not_keep_instances_alive():
    import gc
    import weakref

    class M:
        @tf.function
        def apply(self, x):
            return x + 1

    m = M()
    m.apply(tf.constant(1))
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None
