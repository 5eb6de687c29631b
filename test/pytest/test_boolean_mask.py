"""tfn.boolean_mask: TF's docstring examples, NumPy's x[mask] for masks of several ranks and axes, eager =
compiled with run-time sizes (the result's size known only when it runs), strings, gradients, errors."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values

import tfn

X = np.arange(24.0).reshape(2, 3, 4) / 5
M2 = X.sum(-1) > 4
M1 = np.array([True, False, True, True])


def test_tf_docstring_examples():
    assert tfn.boolean_mask([0, 1, 2, 3], np.array([True, False, True, False])).numpy().tolist() == [0, 2]
    assert tfn.boolean_mask([[1, 2], [3, 4], [5, 6]], np.array([True, False, True])).numpy().tolist() == \
        [[1, 2], [5, 6]]


@pytest.mark.parametrize("fn,ref", [(lambda x: tfn.boolean_mask(x, M2), lambda x: x[M2]),
                                    (lambda x: tfn.boolean_mask(x, M1, axis=2), lambda x: x[:, :, M1]),
                                    (lambda x: tfn.boolean_mask(x, M2[0], axis=1), lambda x: x[:, M2[0]])])
def test_values_and_gradients(fn, ref):
    check_values(fn, ref, [X])
    check_gradients(fn, ref, [X])


def test_run_time_sizes_and_strings():
    f = tfn.function(lambda a: tfn.boolean_mask(a, a > 2.0), input_signature=[tfn.TensorSpec([None], tfn.float32)])
    assert f(tfn.constant([1.0, 7.0, 3.0, 9.0])).numpy().tolist() == [7, 3, 9]
    assert f(tfn.constant([1.0, 2.0])).shape == [0]
    g = tfn.function(tfn.boolean_mask, input_signature=[tfn.TensorSpec([None, None, 4], tfn.float64),
                                                         tfn.TensorSpec([None, None], tfn.bool)])
    np.testing.assert_array_equal(g(tfn.constant(X), tfn.constant(M2)).numpy(), X[M2])
    words = tfn.constant(["a", "b", "c"])
    assert tfn.function(tfn.boolean_mask)(words, tfn.constant([True, False, True])).numpy().tolist() == [b"a", b"c"]


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        tfn.boolean_mask([1, 2], [1, 0])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tfn.boolean_mask([1, 2], True)
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not match"):
        tfn.boolean_mask([1, 2], [True, False, True])
