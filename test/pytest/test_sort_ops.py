"""tfn.sort, tfn.argsort, tfn.math.top_k: TF's docstring examples, NumPy's stable order (NaN as the largest
value), eager = compiled with dynamic dims, ints, other axes, gradients by finite differences, errors."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values

import tfn

R = np.random.default_rng(13)
X = R.permutation(24).reshape(4, 6) / 4.0 - 2
WITH_NAN = R.normal(size=(3, 9))
WITH_NAN[0, 2] = WITH_NAN[0, 5]
WITH_NAN[1, 3] = WITH_NAN[2, 0] = WITH_NAN[2, 7] = np.nan


def _desc(a, axis=-1):
    """NumPy's stable order, largest first, NaN as the largest value."""
    return np.argsort(np.where(np.isnan(a), -np.inf, -a), axis, kind="stable")


CASES = {
    "sort": (tfn.sort, lambda a: np.sort(a, -1), [X]),
    "sort_axis0_descending": (lambda x: tfn.sort(x, axis=0, direction="DESCENDING"),
                              lambda a: np.take_along_axis(a, _desc(a, 0), 0), [X]),
    "top_k": (lambda x: tfn.math.top_k(x, 3).values, lambda a: np.take_along_axis(a, _desc(a), -1)[:, :3], [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, ref, arrays = CASES[name]
    check_values(fn, ref, arrays)
    check_gradients(fn, ref, arrays)


@pytest.mark.parametrize("fn,ref", [
    (tfn.sort, lambda a: np.sort(a, -1)),
    (tfn.argsort, lambda a: np.argsort(a, -1, kind="stable")),
    (lambda t: tfn.sort(t, direction="DESCENDING"), lambda a: np.take_along_axis(a, _desc(a), -1)),
    (lambda t: tfn.argsort(t, direction="DESCENDING"), _desc),
    (lambda t: tfn.math.top_k(t, 4).values, lambda a: np.take_along_axis(a, _desc(a), -1)[:, :4]),
    (lambda t: tfn.nn.top_k(t, 4).indices, lambda a: _desc(a)[:, :4])])
def test_ties_and_nan_eager_and_compiled_dynamic(fn, ref):
    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, None], tfn.float64)])
    for got in (fn(tfn.constant(WITH_NAN)), f(tfn.constant(WITH_NAN))):
        np.testing.assert_array_equal(got.numpy(), ref(WITH_NAN))


def test_tf_docstring_examples_and_ints():
    a = [1, 10, 26.7, 2.8, 2.5, 3.5, -9.5]
    np.testing.assert_allclose(tfn.sort(a).numpy(), np.sort(np.float32(a)))
    np.testing.assert_allclose(tfn.sort(a, direction="DESCENDING").numpy(), np.sort(np.float32(a))[::-1])
    mat = [[3, 2, 1], [2, 1, 3], [1, 3, 2]]
    assert tfn.sort(mat, axis=0).numpy().tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    assert tfn.sort(mat, axis=-1).numpy().tolist() == [[1, 2, 3]] * 3
    assert tfn.argsort([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5]).numpy().tolist() == [7, 0, 4, 3, 5, 1, 2, 6]
    assert tfn.argsort([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5], direction="DESCENDING").numpy().tolist() == \
        [6, 2, 1, 5, 3, 4, 0, 7]
    result = tfn.math.top_k([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5], k=2)
    np.testing.assert_allclose(result.values.numpy(), [100, 26.7], rtol=1e-6)
    assert result.indices.numpy().tolist() == [6, 2] and result.indices.dtype is tfn.int32
    ints = tfn.constant([[5, -2147483648, 7, 5]])
    assert tfn.math.top_k(ints, 4).indices.numpy().tolist() == [[2, 0, 3, 1]]
    assert tfn.math.top_k(ints, 2, index_type=tfn.int64).indices.dtype is tfn.int64
    assert tfn.math.top_k(ints, 0).values.shape == [1, 0]


def test_errors_name_the_problem():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="at least k columns. Had 3, needed 4"):
        tfn.math.top_k([1, 2, 3], 4)
    with pytest.raises(ValueError, match="ASCENDING or DESCENDING"):
        tfn.sort([1, 2], direction="UP")
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Sort does not support dtype bool"):
        tfn.sort([True, False])
    with pytest.raises(TypeError, match="`k` must be known when the function is traced"):
        tfn.function(lambda x, k: tfn.math.top_k(x, k))(tfn.constant([1, 2]), tfn.constant(1))
