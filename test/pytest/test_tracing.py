"""Tracing beyond what the guide's programs (examples/sections/tracing*.py) print: signatures, concrete
functions, input_signature, retracing."""
import warnings

import guide
import pytest

import tfn as tf
from tfn.tracing.polymorphic import RetracingWarning

SIG_INT = """Input Parameters:
  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tfn.int32, name=None)
Output Type:
  TensorSpec(shape=(), dtype=tfn.int32, name=None)
Captures:
  None"""
SIG_STRING = SIG_INT.replace("int32", "string")


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


def test_obtaining_concrete_functions():
    ns = guide.run("tracing.py").namespace  # the guide's double / double_strings program
    double_strings = ns["double_strings"]
    assert ns["double_strings_from_inputspec"] is double_strings  # no retrace for the same type
    assert double_strings.pretty_printed_signature() == SIG_STRING
    assert ns["double"].get_concrete_function(tf.constant(7)).pretty_printed_signature() == SIG_INT
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not cast TensorSpec\(shape=\(\), dtype=tfn."
                       r"float32, name=None\) to TensorSpec\(shape=\(\), dtype=tfn.string, name=None\)"):
        double_strings(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not cast TensorSpec\(shape=\(2,\)"):
        double_strings(tf.constant(["a", "b"]))
    with pytest.raises(TypeError, match="missing required argument: 'a'"):
        double_strings()


def test_python_arguments_are_literals_in_the_signature():
    square = guide.run("tracing_extras.py").namespace["square"]  # the guide's pow(a, b=2) concrete function
    assert square(tf.constant(10.0), b=2) == 100  # the traced value may be given again
    with pytest.raises(TypeError, match=r"Can not cast 3 to Literal\[2\]"):
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


def test_input_signature():
    next_collatz = guide.run("tracing.py").namespace["next_collatz"]  # the guide's program
    assert next_collatz([3, 4]).numpy().tolist() == [10, 2]  # Python values are converted
    assert len(next_collatz.experimental_trace_log()) == 1
    g = tf.function(lambda x: x, input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    assert g.get_concrete_function() is g.get_concrete_function(tf.constant([7]))


def test_reduce_retracing_keeps_the_exact_trace_most_specific():
    g = guide.run("tracing.py").namespace["g"]  # the guide's reduce_retracing program: traced for (3,), (None,)
    assert len(g.experimental_trace_log()) == 2
    assert g.get_concrete_function(tf.constant([0, 0, 0])).function_type.params[0][2].shape == (3,)


def test_tracing_protocol_takes_a_duck_typed_trace_type():
    class KindType:  # not a tf.types.experimental.TraceType subclass: the protocol's methods are enough
        def __init__(self, obj):
            self.kind, self.obj = type(obj), obj

        def is_subtype_of(self, other):
            return self == other

        def most_specific_common_supertype(self, others):
            return self if all(self == other for other in others) else None

        def placeholder_value(self, placeholder_context=None):
            return self.obj

        def __eq__(self, other):
            return type(other) is KindType and self.kind is other.kind

        def __hash__(self):
            return hash(self.kind)

    class Scale:
        k = 3

        def __tf_tracing_type__(self, context):
            return KindType(self)

    f = tf.function(lambda s, x: x * s.k)
    assert f(Scale(), tf.constant(2)).numpy() == 6
    assert f(Scale(), tf.constant(4)).numpy() == 12  # a new Scale object: the same trace type
    assert len(f.experimental_trace_log()) == 1


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


class _OwnInit(Exception):
    def __init__(self, a, b):
        super().__init__(a)


class _SubValueError(ValueError):
    pass


class _Plain(Exception):
    pass


@pytest.mark.parametrize("make, kept", [
    (lambda: {}["k"], KeyError), (lambda: [][3], None), (lambda: 1 // 0, None),
    (lambda: _raise(ValueError("v")), ValueError), (lambda: _raise(_SubValueError("v")), None),
    (lambda: _raise(_Plain("p")), _Plain), (lambda: _raise(_OwnInit("a", 2)), None),
    (lambda: _raise(NotImplementedError("n")), NotImplementedError), (lambda: _raise(OSError("o")), None),
    (lambda: _raise(tf.errors.InvalidArgumentError("bad")), tf.errors.InvalidArgumentError),
    (lambda: undefined_name_in_trace, NameError),  # noqa: F821
])
def test_an_exception_raised_while_tracing_has_tfs_class(make, kept):
    # TF 2.21 (AutoGraph): the classes it can rebuild from a message keep their class, others are StagingError
    @tf.function
    def f(x):
        make()
        return x

    with pytest.raises(kept or tf.errors.StagingError) as info:
        f(tf.constant(1))
    assert type(info.value) is (kept or tf.errors.StagingError)
    if kept is None:
        assert "in user code:" in str(info.value) and "test_tracing.py" in str(info.value)
        assert type(info.value.__cause__).__name__ + ": " in str(info.value)
    # without AutoGraph the exception passes through unchanged, as in TF
    g = tf.function(f.python_function, autograph=False)
    with pytest.raises(Exception) as plain:
        g(tf.constant(1))
    assert kept is None or type(plain.value) is kept


def _raise(e):
    raise e


def test_returning_what_no_tensor_holds_is_tf_type_error():
    """A generator function, an async def or an object returned: TF's TypeError naming the returned type, not the
    constant conversion's 'Cannot convert ... to EagerTensor of dtype string'."""
    def gen(x):
        yield x

    def obj(x):
        return x, object()
    for fn, kind in ((gen, "generator"), (obj, "object")):
        with pytest.raises(TypeError, match=rf"must return zero or more Tensors or None values; in compilation of "
                                            rf"{fn.__name__}, found return value of type <class '{kind}'>"):
            tf.function(fn)(tf.ones([2]))
    _, three, none = tf.function(lambda x: (x, 3, None))(tf.ones([2]))  # Python values still return
    assert int(three) == 3 and none is None
