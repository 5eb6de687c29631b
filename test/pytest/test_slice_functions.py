"""tfn.slice and tfn.strided_slice: TF's vector spellings of an index, equal to NumPy's basic indexing, eagerly and
compiled (a begin known only when the function runs), and their errors."""
import numpy as np
import pytest

import tfn as tf

X = np.arange(24).reshape(2, 3, 4)


def test_slice_takes_sizes_with_minus_one_for_the_rest():
    np.testing.assert_array_equal(tf.slice(X, [1, 0, 1], [1, -1, 2]).numpy(), X[1:2, 0:, 1:3])
    f = tf.function(lambda v, b: tf.slice(v, [b, 0, 0], [1, 2, -1]))
    np.testing.assert_array_equal(f(X, tf.constant(1)).numpy(), X[1:2, 0:2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected begin and size arguments to be 1-D tensors "
                                                             "of size 3"):
        tf.slice(X, [0, 0], [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected begin\[2\] in \[0, 4\] and size\[2\] in "
                                                             r"\[0, 1\]"):
        tf.slice(X, [0, 0, 3], [1, 1, 2])


def test_strided_slice_masks():
    np.testing.assert_array_equal(tf.strided_slice(X, [0, 1, 0], [2, 3, 4], [1, 1, 2]).numpy(), X[0:2, 1:3, 0:4:2])
    np.testing.assert_array_equal(tf.strided_slice(X, [1, 0, 0], [2, 0, 0], shrink_axis_mask=1, end_mask=6), X[1])
    np.testing.assert_array_equal(tf.strided_slice(X, [0, 0], [0, 2], ellipsis_mask=1).numpy(), X[..., 0:2])
    np.testing.assert_array_equal(tf.strided_slice(X, [0, 0], [2, 0], begin_mask=2, end_mask=2,
                                                   new_axis_mask=2).numpy(), X[0:2, None])
    np.testing.assert_array_equal(tf.strided_slice(X, [-1], [-4], [-1]).numpy(), X[-1:-4:-1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="equal size"):
        tf.strided_slice(X, [0, 0], [1], [1])
