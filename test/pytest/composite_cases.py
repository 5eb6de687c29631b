"""Shared checks of public functions composed of tfn ops: values eagerly and compiled (float64 and float32) against
a NumPy reference, gradients against central differences (float64), eager gradients equal compiled ones."""
import numpy as np
import pytest
from opcheck import central_differences

import tfn


def check_values(fn, ref, arrays, f32=True):
    want = ref(*arrays)
    eager = fn(*[tfn.constant(a) for a in arrays])
    compiled = tfn.function(fn, autograph=False)(*[tfn.constant(a) for a in arrays])
    for got in (eager, compiled):
        got = [g.numpy() for g in got] if isinstance(got, (list, tuple)) else got.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if f32 and all(np.asarray(a).dtype == np.float64 for a in arrays):
        single = fn(*[tfn.constant(a.astype(np.float32)) for a in arrays])
        single = single if not isinstance(single, (list, tuple)) else single[0]
        assert single.dtype is tfn.float32
        np.testing.assert_allclose(single.numpy(), np.asarray(want if not isinstance(want, list) else want[0]),
                                   rtol=2e-5, atol=2e-5)


def tape_grads(fn, arrays, weights, compiled):
    """The gradients of sum(fn(*arrays) * weights) with respect to each array, eagerly or in a tfn.function."""
    weights = tfn.constant(weights)

    def grads(*xs):
        with tfn.GradientTape() as tape:
            tape.watch(list(xs))
            loss = tfn.reduce_sum(fn(*xs) * weights)
        return tape.gradient(loss, list(xs))
    run = tfn.function(grads, autograph=False) if compiled else grads
    return [g.numpy() for g in run(*[tfn.constant(a) for a in arrays])]


def check_gradients(fn, ref, arrays):
    w = np.random.default_rng(0).uniform(-1, 1, np.shape(ref(*arrays)))
    got = tape_grads(fn, arrays, w, compiled=False)
    want = central_differences(lambda xs: np.sum(ref(*xs) * w), arrays, 1e-6)
    for g, wanted in zip(got, want):
        np.testing.assert_allclose(g, wanted, rtol=1e-6, atol=1e-6)
    for c, e in zip(tape_grads(fn, arrays, w, compiled=True), got):
        np.testing.assert_allclose(c, e, rtol=1e-12, atol=1e-12)


def case_tests(cases):
    """The two tests of a table {name: (function, NumPy reference, arrays, differentiable)}: values eagerly and
    compiled, and gradients by finite differences for the differentiable ones (a test module binds them to names)."""
    @pytest.mark.parametrize("name", sorted(cases))
    def test_values_eager_and_compiled(name):
        fn, ref, arrays, _ = cases[name]
        check_values(fn, ref, arrays)

    @pytest.mark.parametrize("name", sorted(n for n in cases if cases[n][3]))
    def test_gradients_match_finite_differences(name):
        fn, ref, arrays, _ = cases[name]
        check_gradients(fn, ref, arrays)

    return test_values_eager_and_compiled, test_gradients_match_finite_differences
