"""tfn.tile, eager and compiled, against NumPy's np.tile (TF's results), TF's errors, and its gradient."""
import numpy as np
import pytest

import tfn

CASES = [((3,), [4]), ((2, 3), [2, 3]), ((2, 3), [1, 2]), ((2, 1, 3), [2, 3, 1]), ((2, 3, 1, 2), [1, 2, 2, 3]),
         ((2, 3), [0, 2]), ((2, 3), [3, 0]), ((0, 2), [3, 2]), ((), [])]


@pytest.mark.parametrize("shape,multiples", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64, np.bool_])
def test_tile_matches_numpy(shape, multiples, dtype):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    want = np.tile(x, multiples) if shape else x
    eager = tfn.tile(tfn.constant(x), multiples).numpy()
    compiled = tfn.function(lambda t: tfn.tile(t, multiples))(tfn.constant(x)).numpy()
    for got in (eager, compiled):
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("multiples", [np.array([2, 3], np.int64), tfn.constant([2, 3]),
                                       tfn.constant([2, 3], tfn.int64), (2, 3)])
def test_tile_multiples_forms(multiples):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(tfn.tile(x, multiples).numpy(), np.tile(x, [2, 3]))
    f = tfn.function(lambda t: tfn.tile(t, multiples))
    assert np.array_equal(f(tfn.constant(x)).numpy(), np.tile(x, [2, 3]))


def test_tile_a_dynamic_dim():
    f = tfn.function(lambda t: tfn.tile(t, [2, 3]), input_signature=[tfn.TensorSpec([None, 2], tfn.float32)])
    for n in (3, 1, 0):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        out = f(tfn.constant(x))
        assert out.shape == (2 * n, 6) and np.array_equal(out.numpy(), np.tile(x, [2, 3]))


def test_tile_static_shape_when_traced():
    seen = []

    @tfn.function
    def f(t):
        y = tfn.tile(t, [3, 2])
        seen.append(y.shape.as_list())
        return y
    f(tfn.constant(np.zeros((2, 5), np.float32)))
    assert seen == [[6, 10]]


def test_tile_errors():
    x = tfn.constant(np.zeros((2, 3), np.float32))
    msg = "Expected multiples argument to be a vector of length 2 but got length 1"
    with pytest.raises(tfn.errors.InvalidArgumentError, match=msg):
        tfn.tile(x, [2])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=msg):
        tfn.function(lambda t: tfn.tile(t, [2]))(x)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="length 0 but got length 1"):
        tfn.tile(tfn.constant(1.0), [2])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Expected multiples\[1\] >= 0, but got -1"):
        tfn.tile(x, [2, -1])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Expected multiples\[0\] >= 0, but got -2"):
        tfn.function(lambda t: tfn.tile(t, [-2, 1]))(x)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Tmultiples"):
        tfn.tile(x, tfn.constant([1.0, 2.0]))


def test_tile_run_time_multiples_is_a_clear_error():
    f = tfn.function(lambda t, m: tfn.tile(t, m))
    with pytest.raises(TypeError, match="Tile: `multiples` must be known when the function is traced"):
        f(tfn.constant(np.zeros((2, 3), np.float32)), tfn.constant([2, 1]))


def test_tile_gradient_sums_the_tiles():
    x = tfn.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = np.arange(36, dtype=np.float32).reshape(4, 9)
    want = w.reshape(2, 2, 3, 3).sum(axis=(0, 2))

    def grad(t):
        with tfn.GradientTape() as tape:
            tape.watch(t)
            y = tfn.reduce_sum(tfn.tile(t, [2, 3]) * w)
        return tape.gradient(y, t)
    assert np.array_equal(grad(x).numpy(), want)
    assert np.array_equal(tfn.function(grad)(x).numpy(), want)
    dyn = tfn.function(grad, input_signature=[tfn.TensorSpec([None, 3], tfn.float32)])
    assert np.array_equal(dyn(x).numpy(), want)


def test_tile_gradient_of_a_zero_multiple_is_zero():
    x = tfn.constant(np.ones((2, 3), np.float32))
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.tile(x, [0, 2]))
    assert np.array_equal(tape.gradient(y, x).numpy(), np.zeros((2, 3), np.float32))
