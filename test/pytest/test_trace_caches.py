"""What tracing remembers between ops (core/graph.py, core/dispatch.py, core/tensor.py) never changes what it
builds: Python numbers converted once per (type, value, dtype), one location per code position, the result
types of attribute-less binary ops, interned tensor types and small constant attributes."""
import re

import numpy as np
import pytest

import tfn
from tfn.dialects.errors import InvalidArgumentError


def test_number_literals_keep_their_sign():
    x = tfn.constant([1.0, 2.0])
    for _ in range(2):  # the second round converts from what the first remembered
        assert np.signbit((x * 0.0).numpy()).tolist() == [False, False]
        assert np.signbit((x * -0.0).numpy()).tolist() == [True, True]

    f = tfn.function(lambda x: (x * 0.0, x * -0.0, x * 0.0))
    a, b, c = f(x)
    assert np.signbit(a.numpy()).tolist() == [False, False]
    assert np.signbit(b.numpy()).tolist() == [True, True]
    assert np.signbit(c.numpy()).tolist() == [False, False]


def test_number_literals_keep_their_type_and_dtype():
    # True == 1 == 1.0 as dict keys: each converts to its own tensor
    i = tfn.constant([3, 4])
    assert (i + 1).numpy().tolist() == [4, 5]
    assert (tfn.constant([True, False]) == True).numpy().tolist() == [True, False]  # noqa: E712
    assert (tfn.constant([1.5, 2.5]) + 1).numpy().tolist() == [2.5, 3.5]
    assert (tfn.constant([1.5], tfn.float64) + 1).dtype == tfn.float64
    assert (i + 1).dtype == tfn.int32
    nan = float("nan")
    assert np.isnan((tfn.constant([1.0]) * nan).numpy()).all()
    assert np.isnan((tfn.constant([1.0]) * nan).numpy()).all()


def test_a_number_that_does_not_fit_fails_every_time():
    x = tfn.constant([1], tfn.int8)
    for _ in range(2):
        with pytest.raises((OverflowError, TypeError, ValueError)):
            x + 1000


def test_each_line_of_a_loop_keeps_its_own_location():
    def f(x):
        for _ in range(3):
            x = x * 2.0
            x = x + 1.0
        return x

    concrete = tfn.function(f).get_concrete_function(tfn.constant([1.0]))
    text = concrete.graph.module.operation.get_asm(enable_debug_info=True)
    first = f.__code__.co_firstlineno
    lines = {int(n) for n in re.findall(r'test_trace_caches\.py":(\d+):', text)}
    assert {first + 2, first + 3} <= lines  # (first: the `def` line)
    assert tfn.function(f)(tfn.constant([1.0])).numpy().tolist() == [15.0]


def test_a_type_error_is_raised_at_each_use_with_its_line():
    @tfn.function
    def f(a, b, c):
        ok = a + b
        ok = ok + b
        return ok + c

    a = tfn.constant([1.0])
    with pytest.raises(InvalidArgumentError, match="test_trace_caches.py"):
        f(a, a, tfn.constant([1]))
    with pytest.raises(InvalidArgumentError, match="test_trace_caches.py"):
        f(a, a, tfn.constant([2]))
    assert f(a, a, a).numpy().tolist() == [4.0]


def test_broadcast_results_are_not_confused_with_equal_shapes():
    @tfn.function
    def f(a, b, c):
        return a + b, a + c, b + c

    ab, ac, bc = f(tfn.ones([2, 3]), tfn.ones([2, 3]), tfn.ones([3]))
    assert ab.shape == (2, 3) and ac.shape == (2, 3) and bc.shape == (2, 3)
    ab, ac, bc = f(tfn.ones([1, 3]), tfn.ones([1, 3]), tfn.ones([4, 1]))
    assert ab.shape == (1, 3) and ac.shape == (4, 3) and bc.shape == (4, 3)
