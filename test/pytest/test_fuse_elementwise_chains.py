"""tfn-fuse-elementwise-chains: long chains and trees of elementwise ops compile to one linalg.generic each, with the
results eager mode computes."""
import numpy as np

import tfn

RNG = np.random.default_rng(5)


def _chain(n):
    def f(x):
        for i in range(n):
            k = i % 5
            x = x * 0.999 if k == 0 else x + 0.001 if k == 1 else tfn.tanh(x) if k == 2 else x - 0.0005 if k == 3 \
                else x / 1.0001
        return x
    return f


def _generics(f, *args):
    return f.get_concrete_function(*args).ir("linalg").count("linalg.generic")


def test_a_long_chain_is_one_generic_and_matches_eager():
    x = tfn.constant(RNG.standard_normal(100).astype(np.float32))
    fn = _chain(300)
    f = tfn.function(fn)
    np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-6, atol=1e-6)
    assert _generics(f, x) == 1


def test_a_tree_of_two_chains_joined_is_one_generic():
    def fn(x, y):
        a = tfn.exp(x * 0.5) + 1.0
        b = tfn.maximum(y - 0.25, 0.0) * 3.0
        return a * b - x  # x is read by two members: one input of the fused op

    x = tfn.constant(RNG.standard_normal((4, 33)).astype(np.float32))
    y = tfn.constant(RNG.standard_normal((4, 33)).astype(np.float32))
    f = tfn.function(fn)
    np.testing.assert_allclose(f(x, y).numpy(), fn(x, y).numpy(), rtol=1e-6)
    assert _generics(f, x, y) == 1


def test_shared_values_broadcasts_and_other_dtypes_match_eager():
    def fn(x, b, i):
        h = x * 2.0 + 1.0
        used_twice = h * h  # h has two uses: left to linalg-fuse-elementwise-ops
        row = tfn.exp(b) + 1.0  # read through a broadcast map
        ints = (i * 3 + 1) % 7  # int32 chain with splat constants
        return used_twice + row, tfn.cast(ints, tfn.float32) - 0.5, h

    x = tfn.constant(RNG.standard_normal((5, 8)).astype(np.float32))
    b = tfn.constant(RNG.standard_normal(8).astype(np.float32))
    i = tfn.constant(RNG.integers(0, 100, (5, 8)).astype(np.int32))
    got = tfn.function(fn)(x, b, i)
    want = fn(x, b, i)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_dynamic_shapes_match_eager():
    fn = _chain(40)
    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, 3], tfn.float32)])
    for rows in (1, 7):
        x = tfn.constant(RNG.standard_normal((rows, 3)).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-6, atol=1e-6)
