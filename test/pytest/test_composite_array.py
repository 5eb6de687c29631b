"""split, reverse, roll, cumsum/cumprod and tfn.linalg's diag/diag_part/set_diag/trace/band_part: TF's docstring
examples, values eager and compiled, gradients by finite differences, dynamic dims, errors."""
import numpy as np
import pytest
from composite_cases import case_tests

import tfn

RNG = np.random.default_rng(5)
X = RNG.uniform(-2, 2, (3, 5))
B = RNG.uniform(-2, 2, (2, 3, 4))


def _roll(x):
    return np.roll(np.roll(x, 2, 1), -1, 0)


CASES = {
    "split_sizes": (lambda x: tfn.split(x, [1, -1, 2], 1)[1], lambda x: x[:, 1:3], [X], True),
    "split_even": (lambda x: tfn.concat(tfn.split(x, 3, 0)[::-1], 0) * 2, lambda x: x[::-1] * 2, [X], True),
    "reverse": (lambda x: tfn.reverse(x, [0, -1]), lambda x: x[::-1, ::-1], [X], True),
    "roll": (lambda x: tfn.roll(x, [2, -1], [1, 0]), _roll, [X], True),
    "cumsum": (lambda x: tfn.cumsum(x, 1), lambda x: np.cumsum(x, 1), [X], True),
    "cumsum_exclusive_reverse": (lambda x: tfn.cumsum(x, -1, exclusive=True, reverse=True),
                                 lambda x: np.cumsum(x[..., ::-1], -1)[..., ::-1] - x, [B], True),
    "cumprod": (lambda x: tfn.math.cumprod(x, 0), lambda x: np.cumprod(x, 0), [X], True),
    "cumprod_exclusive": (lambda x: tfn.math.cumprod(x, 1, exclusive=True),
                          lambda x: np.cumprod(np.concatenate([np.ones((3, 1)), x[:, :-1]], 1), 1), [X], True),
    "diag_part": (lambda x: tfn.linalg.diag_part(x), lambda x: np.diagonal(x, 0, -2, -1), [B], True),
    "diag_part_k": (lambda x: tfn.linalg.diag_part(x, k=-1), lambda x: np.diagonal(x, -1, -2, -1), [B], True),
    "diag": (lambda v: tfn.linalg.diag(v), lambda v: np.eye(4) * v[..., None, :], [B[0]], True),
    "diag_k": (lambda v: tfn.linalg.diag(v, k=2), lambda v: np.diag(v, 2), [X[0]], True),
    "set_diag": (lambda x, v: tfn.linalg.set_diag(x, v),
                 lambda x, v: np.where(np.eye(3, 4, dtype=bool), np.pad(v, [(0, 0), (0, 1)])[..., None, :], x),
                 [B, B[:, :, 0]], True),
    "trace": (tfn.linalg.trace, lambda x: np.trace(x, 0, -2, -1), [B], True),
    "band_part": (lambda x: tfn.linalg.band_part(x, 1, 0), lambda x: np.tril(np.triu(x, -1)), [B], True),
}


test_values_eager_and_compiled, test_gradients_match_finite_differences = case_tests(CASES)


def test_tf_docstring_examples():
    x = tfn.zeros([5, 30])
    assert [t.shape for t in tfn.split(x, [4, 15, 11], 1)] == [[5, 4], [5, 15], [5, 11]]
    assert [t.shape for t in tfn.split(x, 3, 1)] == [[5, 10]] * 3
    t = tfn.constant([[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], [[12, 13, 14, 15], [16, 17, 18, 19],
                                                                    [20, 21, 22, 23]]])
    assert tfn.reverse(t, [1]).numpy().tolist() == t.numpy()[:, ::-1].tolist()
    assert tfn.reverse(t, [-1]).numpy().tolist() == t.numpy()[..., ::-1].tolist()
    assert tfn.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy().tolist() == [3, 4, 0, 1, 2]
    t = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert tfn.roll(t, shift=[1, -2], axis=[0, 1]).numpy().tolist() == [[7, 8, 9, 5, 6], [2, 3, 4, 0, 1]]
    assert tfn.roll(t, shift=[2, -3], axis=[1, 1]).numpy().tolist() == [[1, 2, 3, 4, 0], [6, 7, 8, 9, 5]]
    x = tfn.constant([2, 4, 6, 8])
    assert tfn.cumsum(x).numpy().tolist() == [2, 6, 12, 20]
    assert tfn.cumsum(x, exclusive=True).numpy().tolist() == [0, 2, 6, 12]
    assert tfn.cumsum(x, reverse=True).numpy().tolist() == [20, 18, 14, 8]
    assert tfn.cumsum(x, exclusive=True, reverse=True).numpy().tolist() == [18, 14, 8, 0]
    y = tfn.constant([[2, 4, 6, 8], [1, 3, 5, 7]])
    assert tfn.cumsum(y, axis=0).numpy().tolist() == [[2, 4, 6, 8], [3, 7, 11, 15]]
    assert tfn.cumsum(y, axis=1).numpy().tolist() == [[2, 6, 12, 20], [1, 4, 9, 16]]
    assert tfn.math.cumprod([2., 3., 4.]).numpy().tolist() == [2, 6, 24]
    assert tfn.math.cumprod([2., 3., 4.], exclusive=True, reverse=True).numpy().tolist() == [12, 4, 1]
    d = tfn.constant([[1, 2, 3, 4], [5, 6, 7, 8]])
    assert tfn.linalg.diag(d).numpy().tolist() == [np.diag([1, 2, 3, 4]).tolist(), np.diag([5, 6, 7, 8]).tolist()]
    m = tfn.constant([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 8, 7, 6]], [[5, 4, 3, 2], [1, 2, 3, 4], [5, 6, 7, 8]]])
    assert tfn.linalg.diag_part(m).numpy().tolist() == [[1, 6, 7], [5, 2, 7]]
    assert tfn.linalg.diag_part(m, k=1).numpy().tolist() == [[2, 7, 6], [4, 3, 8]]
    assert tfn.linalg.diag_part(m, k=-1).numpy().tolist() == [[5, 8], [1, 6]]
    assert tfn.linalg.trace([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).numpy() == 15
    b = tfn.constant([[0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1], [-3, -2, -1, 0]])
    assert tfn.linalg.band_part(b, 1, -1).numpy().tolist() == [[0, 1, 2, 3], [-1, 0, 1, 2], [0, -1, 0, 1],
                                                               [0, 0, -1, 0]]
    assert tfn.linalg.band_part(b, 2, 1).numpy().tolist() == [[0, 1, 0, 0], [-1, 0, 1, 0], [-2, -1, 0, 1],
                                                              [0, -2, -1, 0]]


def test_dynamic_dims_and_run_time_shift():
    @tfn.function(input_signature=[tfn.TensorSpec([None, None], tfn.float64), tfn.TensorSpec([], tfn.int32)])
    def f(x, s):
        return (tfn.roll(x, s, 1), tfn.reverse(x, [0, 1]), tfn.split(x, [2, -1, 1], 1)[1],
                tfn.linalg.diag_part(x, k=1), tfn.linalg.band_part(x, 0, s))
    rolled, reversed_, middle, diag, band = f(tfn.constant(X), tfn.constant(-3))
    np.testing.assert_array_equal(rolled.numpy(), np.roll(X, -3, 1))
    np.testing.assert_array_equal(reversed_.numpy(), X[::-1, ::-1])
    np.testing.assert_array_equal(middle.numpy(), X[:, 2:4])
    np.testing.assert_array_equal(diag.numpy(), np.diagonal(X, 1))
    np.testing.assert_array_equal(band.numpy(), np.triu(X))


@pytest.mark.parametrize("sizes, fits", [([1, 1], False), ([5, -1], False), ([1, 3], True), ([4, -1], True)])
def test_split_sizes_checked_against_a_run_time_dim(sizes, fits):
    """Sizes that do not add up to a dim known only when the function runs raise TF's SplitV error naming the
    user's line, instead of slices clamped to the dim."""
    x = np.arange(12.0).reshape(3, 4)
    f = tfn.function(lambda v: tfn.split(v, sizes, 1), input_signature=[tfn.TensorSpec([None, None], tfn.float64)])
    if fits:
        pieces = f(tfn.constant(x))
        cuts = np.cumsum([s if s != -1 else 4 - sum(sizes) - 1 for s in sizes])[:-1]
        for piece, want in zip(pieces, np.split(x, cuts, 1)):
            np.testing.assert_array_equal(piece.numpy(), want)
        return
    with pytest.raises(tfn.errors.InvalidArgumentError,
                       match=r"(?s)Determined shape must either match.*dim 1 of size 4\) \[Op:SplitV\].*"
                             r"test_composite_array.py"):
        f(tfn.constant(x))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 37])
def test_scan_of_a_run_time_length(n):
    f = tfn.function(lambda a: (tfn.cumsum(a, 1), tfn.math.cumprod(a, -1, reverse=True),
                                tfn.cumsum(a, 1, exclusive=True)),
                     input_signature=[tfn.TensorSpec([None, None], tfn.float64)])
    x = RNG.uniform(-1.5, 1.5, (3, n))
    total, product, before = f(tfn.constant(x))
    np.testing.assert_allclose(total.numpy(), np.cumsum(x, 1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(product.numpy(), np.cumprod(x[:, ::-1], 1)[:, ::-1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(before.numpy(), np.cumsum(x, 1) - x, rtol=1e-12, atol=1e-12)


def test_errors_name_the_problem():
    x = tfn.zeros([5, 6])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="evenly divide the split dimension"):
        tfn.split(x, 4, 1)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Determined shape must either match"):
        tfn.split(x, [1, 2], 1)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="axis 0 specified more than once"):
        tfn.reverse(x, [0, -2])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="out of valid range"):
        tfn.reverse(x, [2])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="shift and axis must have the same size"):
        tfn.roll(x, [1, 2], [0])
    with pytest.raises(ValueError, match="at least 2-D"):
        tfn.linalg.trace(tfn.ones([3]))
    with pytest.raises(ValueError, match="bands of diagonals"):
        tfn.linalg.diag_part(tfn.ones([3, 3]), k=(0, 1))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"k must be in \(-3, 3\)"):
        tfn.linalg.diag_part(tfn.ones([3, 3]), k=3)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Cumsum does not support dtype bool"):
        tfn.cumsum(tfn.constant([True]))


def test_gradient_of_a_run_time_length_scan_is_a_clear_error():
    @tfn.function(input_signature=[tfn.TensorSpec([None], tfn.float64)])
    def f(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(tfn.cumsum(x))
        return tape.gradient(y, x)
    with pytest.raises(LookupError, match="tensor-dependent loop"):
        f(tfn.constant([1.0, 2.0], tfn.float64))
