"""tfn.scan, switch_case, case, vectorized_map and numpy_function, eagerly and compiled, against Python references
and TF's documented examples."""
import numpy as np
import pytest

import tfn as tf

ELEMS = tf.constant([1, 2, 3, 4, 5, 6])


def test_scan_as_tfs_examples():
    np.testing.assert_array_equal(tf.scan(lambda a, x: a + x, ELEMS).numpy(), [1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(tf.scan(lambda a, x: a + x, ELEMS, reverse=True).numpy(), [21, 20, 18, 15, 11, 6])
    fib = tf.scan(lambda a, _: (a[1], a[0] + a[1]), ELEMS, initializer=(tf.constant(0), tf.constant(1)))
    np.testing.assert_array_equal(fib[0].numpy(), [1, 1, 2, 3, 5, 8])

    @tf.function
    def compiled(v):
        return tf.scan(lambda a, x: a * x, v, initializer=tf.constant(10), reverse=True)
    np.testing.assert_array_equal(compiled(ELEMS).numpy(), [7200, 7200, 3600, 1200, 300, 60])
    empty = tf.scan(lambda a, x: a + x, tf.constant([], tf.int32), initializer=tf.constant([0, 0]))
    assert empty.shape == (0, 2)
    varlen = tf.function(lambda v: tf.scan(lambda a, x: a + x, v),
                         input_signature=[tf.TensorSpec([None], tf.int32)])
    np.testing.assert_array_equal(varlen(tf.constant([5, 1, 1])).numpy(), [5, 6, 7])


def test_switch_case_and_case():
    branches = [lambda: tf.constant(10), lambda: tf.constant(20)]
    h = tf.function(lambda i: tf.switch_case(i, branches, default=lambda: tf.constant(-1)))
    assert [int(h(tf.constant(k))) for k in (0, 1, 5)] == [10, 20, -1]
    assert int(tf.switch_case(tf.constant(7), branches)) == 20  # no default: the last branch
    assert int(tf.switch_case(tf.constant(3), {3: lambda: tf.constant(30), 8: lambda: tf.constant(80)})) == 30

    c = tf.function(lambda v: tf.case([(v < 0, lambda: tf.constant(-1)), (v > 0, lambda: tf.constant(1))]))
    assert [int(c(tf.constant(k))) for k in (-3, 4)] == [-1, 1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of the conditions evaluated as True"):
        c(tf.constant(0))
    d = tf.function(lambda v: tf.case([(v < 0, lambda: tf.constant(-1))], default=lambda: tf.constant(0)))
    assert int(d(tf.constant(5))) == 0
    e = tf.function(lambda v: tf.case([(v > 0, lambda: tf.constant(1)), (v > 1, lambda: tf.constant(2))],
                                      default=lambda: tf.constant(0), exclusive=True))
    assert int(e(tf.constant(1))) == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one predicate evaluated to True"):
        e(tf.constant(5))


def test_vectorized_map_and_numpy_function():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(tf.vectorized_map(lambda r: tf.reduce_sum(r) * 2.0, m).numpy(), m.sum(1) * 2)
    as_int = tf.function(lambda v: tf.vectorized_map(lambda r: tf.cast(tf.reduce_max(r), tf.int32), v))
    np.testing.assert_array_equal(as_int(m).numpy(), [3, 7, 11])
    reverse_sorted = tf.numpy_function(lambda a: np.sort(a)[::-1].copy(), [tf.constant([3, 1, 2])], tf.int32)
    np.testing.assert_array_equal(reverse_sorted.numpy(), [3, 2, 1])
    seen = []

    def doubled(a):
        seen.append(type(a))
        return (a * 2).astype(np.int32)
    out = tf.function(lambda a: tf.numpy_function(doubled, [a], tf.int32))(tf.constant([3, 1, 2]))
    np.testing.assert_array_equal(out.numpy(), [6, 2, 4])
    assert seen and all(t is np.ndarray for t in seen)
