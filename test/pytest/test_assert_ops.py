"""tfn.debugging's assertions: eagerly they raise at once, in a tfn.function when it runs (the check op, kept though
its result is unused), and conditions known while tracing (shapes, ranks, dtypes) raise then."""
import numpy as np
import pytest

import tfn as tf


@pytest.mark.parametrize("fn, good, bad, text", [
    (tf.debugging.assert_equal, ([1, 2], [1, 2]), ([1, 2], [1, 3]), r"Condition x == y did not hold element-wise: "
                                                                     r"first failing element at flat index 1"),
    (tf.debugging.assert_less, ([1, 2], [2, 3]), ([1, 4], [2, 3]), "Condition x < y"),
    (tf.debugging.assert_greater_equal, ([2, 3], [2, 3]), ([2, 2], [2, 3]), "Condition x >= y"),
    (tf.debugging.assert_positive, ([1, 2],), ([1, 0],), "Condition x > 0"),
    (tf.debugging.assert_non_negative, ([0, 2],), ([-1, 0],), "Condition x >= 0"),
    (tf.debugging.assert_near, ([1.0, 2.0], [1.0, 2.0 + 1e-7]), ([1.0, 2.0], [1.0, 2.1]), "Condition x ~= y"),
])
def test_element_wise_assertions_eagerly_and_compiled(fn, good, bad, text):
    assert fn(*good) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=text):
        fn(*bad)

    @tf.function
    def checked(*args):
        fn(*args)  # the result unused, as users write it
        return tf.constant(1)
    assert int(checked(*[tf.constant(a) for a in good])) == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match=text):
        checked(*[tf.constant(a) for a in bad])


def test_message_assert_and_static_checks():
    with pytest.raises(tf.errors.InvalidArgumentError, match="(?s)x and y differ.*Condition x == y did not hold"):
        tf.function(lambda x: tf.debugging.assert_equal(x, 3, message="x and y differ") or x)(tf.constant(4))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: \[x is\] \[\[1 2\]\]"):
        tf.debugging.Assert(tf.constant(False), ["x is", tf.constant([1, 2])])
    with pytest.raises(ValueError, match="Tensor must have rank 3. Received rank 2"):
        tf.debugging.assert_rank(np.zeros((2, 3)), 3)
    tf.debugging.assert_rank_at_least(np.zeros((2, 3)), 2)
    with pytest.raises(TypeError, match="must be of type int32; got float32"):
        tf.debugging.assert_type(tf.constant(1.0), tf.int32)


def test_assert_shapes_names_sizes_across_tensors():
    tf.debugging.assert_shapes([(np.zeros((2, 3)), ("N", 3)), (np.zeros(2), ("N",)), (np.zeros((5, 2, 3)),
                                                                                       ("...", "N", 3))])
    with pytest.raises(ValueError, match=r"dimension 0: expected size 2 \('N'\), got 4"):
        tf.debugging.assert_shapes([(np.zeros((2, 3)), ("N", 3)), (np.zeros(4), ("N",))])
    g = tf.function(lambda x, y: tf.debugging.assert_shapes([(x, ("N", 3)), (y, ("N",))]) or x,
                    input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.float32)])
    assert g(np.zeros((2, 3), np.float32), np.zeros(2, np.float32)).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension 0 does not have the size 'N' names"):
        g(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
