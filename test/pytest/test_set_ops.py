"""tfn.repeat, unique, unique_with_counts and searchsorted against NumPy, eagerly and compiled (sizes known only
when the function runs)."""
import numpy as np
import pytest

import tfn as tf

RNG = np.random.default_rng(9)


def _first_appearance(x):
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    place = np.argsort(order, kind="stable")
    return values[order], place[inverse], counts[order]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_unique_keeps_the_order_of_first_appearance(dtype):
    x = RNG.integers(0, 20, size=300).astype(dtype)
    want_y, want_idx, want_counts = _first_appearance(x)
    eager = tf.unique_with_counts(x)
    compiled = tf.function(lambda v: tf.unique_with_counts(v, out_idx=tf.int64),
                           input_signature=[tf.TensorSpec([None], tf.as_dtype(dtype))])(x)
    for got in (eager, compiled):
        np.testing.assert_array_equal(got.y.numpy(), want_y)
        np.testing.assert_array_equal(got.idx.numpy(), want_idx)
        np.testing.assert_array_equal(got.count.numpy(), want_counts)
    assert eager.idx.dtype == tf.int32 and compiled.idx.dtype == tf.int64
    y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))  # TF's example
    assert y.numpy().tolist() == [1, 2, 4, 7, 8] and idx.numpy().tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    with pytest.raises(ValueError, match="unique expects a 1-D tensor"):
        tf.unique(np.zeros((2, 2), np.int32))


def test_repeat_with_static_and_run_time_counts():
    np.testing.assert_array_equal(tf.repeat([1, 2, 3], 2).numpy(), np.repeat([1, 2, 3], 2))
    m = np.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(tf.repeat(m, [1, 3], axis=0).numpy(), np.repeat(m, [1, 3], axis=0))
    np.testing.assert_array_equal(tf.repeat(m, 2, axis=1).numpy(), np.repeat(m, 2, axis=1))
    np.testing.assert_array_equal(tf.repeat(m, 3).numpy(), np.repeat(m, 3))
    at_run_time = tf.function(lambda v, r: tf.repeat(v, r, axis=0))
    np.testing.assert_array_equal(at_run_time(tf.constant([5, 6, 7]), tf.constant([2, 0, 3])).numpy(),
                                  [5, 5, 7, 7, 7])
    with pytest.raises(ValueError, match="one count per element"):
        tf.repeat([1, 2, 3], [1, 2])


def test_searchsorted_sides_and_batches():
    seq = np.array([1, 3, 5, 7], np.float32)
    vals = np.array([0, 3, 6, 9], np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(tf.searchsorted(seq, vals, side=side).numpy(),
                                      np.searchsorted(seq, vals, side=side))
    batch_seq = np.sort(RNG.random((3, 10)).astype(np.float32), axis=1)
    batch_vals = RNG.random((3, 5)).astype(np.float32)
    got = tf.function(lambda s, v: tf.searchsorted(s, v, out_type=tf.int64))(batch_seq, batch_vals).numpy()
    np.testing.assert_array_equal(got, [np.searchsorted(s, v) for s, v in zip(batch_seq, batch_vals)])
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        tf.searchsorted(seq, vals, side="middle")
