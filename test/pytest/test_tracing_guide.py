"""What the guide's tracing programs (examples/sections/tracing*.py, whose printed output test_guide_sections
checks) do beyond what they print: trace counts, specialisations, flat signatures, weak references, leaks and
recursion."""
import gc
import time

import guide
import pytest

import tfn as tf


def test_tracing_protocol_traces_once_per_fruit_class():
    ns = guide.run("tracing.py").namespace  # the guide's Fruit program
    get_mixed_flavor = ns["get_mixed_flavor"]
    assert len(get_mixed_flavor.experimental_trace_log()) == 3
    assert repr(get_mixed_flavor(ns["AppleWithTraceType"](), ns["MangoWithTraceType"]())) == \
        "<tfn.Tensor: shape=(2,), dtype=int32, numpy=array([4, 6], dtype=int32)>"
    assert len(get_mixed_flavor.experimental_trace_log()) == 3

    class Partial(tf.types.experimental.TraceType):  # lacks abstract methods: cannot be made, as in TF
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


def test_pow_with_unknown_rank_spec_compiles_once_per_rank():
    square = guide.run("tracing_extras.py").namespace["square"]  # the guide's pow program
    # Any rank runs (one compiled specialisation per rank); the signature stays unranked.
    assert square(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist() == [[1.0, 4.0], [9.0, 16.0]]
    assert square(tf.constant([3.0])).numpy().tolist() == [9.0]
    assert square(tf.constant(10.0)) == 100
    assert sorted(square.specializations) == [(0,), (1,), (2,)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not cast TensorSpec"):
        square(tf.constant([1, 2]))


def test_a_leaked_tensor_is_out_of_scope_everywhere():
    leaked = []

    @tf.function
    def leak(a):
        leaked.append(a * 2)
        return a

    leak(tf.constant(1))
    x = leaked[0]
    with pytest.raises(TypeError, match="is out of scope"):
        x + 1  # eagerly  # noqa: B018

    @tf.function
    def uses(b):
        return b + x

    with pytest.raises(TypeError, match="is out of scope"):
        uses(tf.constant(2))  # captured
    with pytest.raises(TypeError, match="is out of scope"):
        uses(x)  # as an argument

    @tf.function
    def returns_leaked():
        return x

    with pytest.raises(TypeError, match="is out of scope"):
        returns_leaked()


def test_recursion_on_a_tensor_fails_fast_and_on_a_python_value_works():
    @tf.function
    def recursive_fn2(n):
        if n > 0:
            return recursive_fn2(n - 1)
        else:
            return 1

    start = time.perf_counter()
    with pytest.raises(tf.errors.StagingError, match=r"the tfn.function 'recursive_fn2' calls itself recursively with "
                       r"the same argument types \(n: TensorSpec\(shape=\(\), dtype=tfn.int32, name=None\)\) while it "
                       r"is being traced \(at .*test_tracing_guide.py:\d+\): a recursion on a tensor value"):
        recursive_fn2(tf.constant(5))  # Bad - maximum recursion error.
    assert time.perf_counter() - start < 5

    @tf.function
    def by_depth(x, depth):  # recursion on a Python value with tensor arguments is fine
        return x if depth == 0 else by_depth(x * 2, depth - 1)

    assert by_depth(tf.constant(1), 3).numpy() == 8


def test_python_objects_flat_signature_and_variables():
    ns = guide.run("tracing_extras.py").namespace  # the guide's SimpleModel / BetterModel programs
    x, new_model = ns["x"], ns["new_model"]
    assert len(ns["evaluate"].experimental_trace_log()) == 1  # BetterModel: variables need no retrace
    # The flat signature takes the tensors only; a Python value given must still be the traced one.
    assert ns["evaluate_with_bias"](new_model, x).numpy() == 25.0
    with pytest.raises(TypeError, match=r"Fallback to flat signature also failed due to: evaluate\(x\) takes 1 "
                       "positional arguments, got 2"):
        ns["evaluate_with_bias"](ns["SimpleModel"](), x)
