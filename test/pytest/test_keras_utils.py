"""tfn.keras.utils and keras.backend: Keras 3's results for the helpers around models."""
import numpy as np
import pytest

import tfn as tf


def test_to_categorical_and_normalize():
    np.testing.assert_array_equal(tf.keras.utils.to_categorical([0, 2, 1], 3), np.eye(3)[[0, 2, 1]])
    assert tf.keras.utils.to_categorical(np.array([[1], [3]])).shape == (2, 4)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 2\)"):
        tf.keras.utils.to_categorical([0, 2], 2)
    np.testing.assert_allclose(tf.keras.utils.normalize([[3.0, 4.0], [0.0, 0.0]]), [[0.6, 0.8], [0.0, 0.0]])


def test_pad_sequences_pre_and_post():
    seqs = [[1, 2, 3], [4], [5, 6]]
    np.testing.assert_array_equal(tf.keras.utils.pad_sequences(seqs), [[1, 2, 3], [0, 0, 4], [0, 5, 6]])
    np.testing.assert_array_equal(tf.keras.utils.pad_sequences(seqs, maxlen=2), [[2, 3], [0, 4], [5, 6]])
    np.testing.assert_array_equal(
        tf.keras.preprocessing.sequence.pad_sequences(seqs, maxlen=2, padding="post", truncating="post", value=-1),
        [[1, 2], [4, -1], [5, 6]])


def test_timeseries_windows_and_split():
    ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10, sequence_length=3,
                                                      sampling_rate=2, batch_size=2)
    batches = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
    assert batches == [([[0, 2, 4], [1, 3, 5]], [0, 10]), ([[2, 4, 6], [3, 5, 7]], [20, 30]),
                       ([[4, 6, 8], [5, 7, 9]], [40, 50])]
    left, right = tf.keras.utils.split_dataset((np.arange(10), np.arange(10) * 2), left_size=0.8)
    assert [int(a) for a, _ in left] == list(range(8)) and [int(b) for _, b in right] == [16, 18]


def test_seed_and_backend():
    tf.keras.utils.set_random_seed(5)
    first = tf.random.uniform([3]).numpy()
    tf.keras.utils.set_random_seed(5)
    np.testing.assert_array_equal(tf.random.uniform([3]).numpy(), first)
    assert tf.keras.backend.floatx() == "float32" and tf.keras.backend.epsilon() == 1e-7
    tf.keras.backend.clear_session()
    assert tf.keras.layers.Dense(1).name == "dense"
