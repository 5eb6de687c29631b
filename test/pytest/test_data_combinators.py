"""tf.data's further transformations (frontend/data/combinators.py): the outputs of TF's documented examples,
eagerly and in a loop of a tfn.function, their element specs and their errors."""
import numpy as np
import pytest

import tfn as tf

D = tf.data.Dataset


def _plain(v):
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    return v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v


def _values(ds):
    return [_plain(v) for v in ds.as_numpy_iterator()]


@tf.function
def _compiled_sum(ds):
    total = tf.constant(0, tf.int64)
    for x in ds:
        total += tf.reduce_sum(tf.cast(x, tf.int64))
    return total


def test_concatenate_keeps_the_dims_both_agree_on():
    a = D.range(1, 4)
    b = D.range(4, 8)
    assert _values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6, 7]
    assert a.concatenate(b).cardinality().numpy() == 7
    rows = D.from_tensor_slices(np.zeros((2, 3), np.float32)).concatenate(
        D.from_tensor_slices(np.ones((1, 4), np.float32)))
    assert rows.element_spec == tf.TensorSpec([None], tf.float32)
    assert [r.tolist() for r in rows.as_numpy_iterator()] == [[0.0] * 3, [0.0] * 3, [1.0] * 4]
    with pytest.raises(TypeError, match="incompatible dataset elements"):
        a.concatenate(D.from_tensor_slices(np.zeros(3, np.float32)))
    assert _compiled_sum(a.concatenate(b)).numpy() == 28


def test_flat_map_and_interleave_follow_tfs_examples():
    ds = D.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).flat_map(D.from_tensor_slices)
    assert _values(ds) == list(range(1, 10))
    assert ds.element_spec == tf.TensorSpec([], tf.int32)
    # TF's interleave example: cycle_length 2, block_length 4
    out = D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert _values(out) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5,
                            5, 5]
    assert _compiled_sum(out).numpy() == sum(6 * k for k in range(1, 6))
    with pytest.raises(TypeError, match="must return a tfn.data.Dataset"):
        D.range(3).flat_map(lambda x: x + 1)


def test_padded_batch_pads_to_the_longest_or_to_given_shapes():
    ds = D.range(1, 5).map(lambda x: tf.fill([x], x))
    batches = [b.tolist() for b in ds.padded_batch(2).as_numpy_iterator()]
    assert batches == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = [b.tolist() for b in ds.padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1))
             .as_numpy_iterator()]
    assert fixed == [[[1, -1, -1, -1, -1], [2, 2, -1, -1, -1], [3, 3, 3, -1, -1]], [[4, 4, 4, 4, -1]]]
    assert ds.padded_batch(2, drop_remainder=True).element_spec == tf.TensorSpec([2, None], tf.int64)
    pairs = D.zip((ds, D.range(4))).padded_batch(2, padding_values=(np.int64(9), np.int64(0)))
    first = next(iter(pairs))
    assert first[0].numpy().tolist() == [[1, 9], [2, 2]] and first[1].numpy().tolist() == [0, 1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size than the input element"):
        list(ds.padded_batch(2, padded_shapes=[2]))
    assert _compiled_sum(ds.padded_batch(3)).numpy() == 1 + 4 + 9 + 16


def test_scan_carries_a_state():
    out = D.range(5).scan(np.int64(0), lambda state, x: (state + x, state * 10))
    assert _values(out) == [0, 0, 10, 30, 60]
    assert _compiled_sum(out).numpy() == 100
    with pytest.raises(TypeError, match="must have the dtypes and shapes of the initial state"):
        D.range(3).scan(np.int32(0), lambda s, x: (x, x))


def test_take_while_unique_and_shard():
    assert _values(D.range(10).take_while(lambda x: x < 4)) == [0, 1, 2, 3]
    assert _values(D.from_tensor_slices([1, 2, 1, 3, 2]).unique()) == [1, 2, 3]
    with pytest.raises(TypeError, match="scalars of type int32, int64 or string"):
        D.from_tensor_slices(np.zeros(3, np.float32)).unique()
    shard = D.range(10).shard(num_shards=3, index=1)
    assert _values(shard) == [1, 4, 7] and shard.cardinality().numpy() == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"index must be in \[0, num_shards\)"):
        D.range(10).shard(2, 2)
    assert _compiled_sum(D.range(10).take_while(lambda x: x < 4).shard(2, 0)).numpy() == 2


def test_apply_get_single_element_counter_and_random():
    assert _values(D.range(6).apply(lambda ds: ds.filter(lambda x: x % 2 == 0))) == [0, 2, 4]
    assert D.range(1).map(lambda x: x + 5).get_single_element().numpy() == 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset had more than one element."):
        D.range(2).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty."):
        D.range(0).get_single_element()
    assert _values(D.counter(10, 2).take(3)) == [10, 12, 14]
    first = _values(D.random(seed=4).take(5))
    assert first == _values(D.random(seed=4).take(5)) and all(0 <= v for v in first)


def test_sample_and_choose_from_datasets():
    ones, twos = D.from_tensors(np.int64(1)).repeat(), D.from_tensors(np.int64(2)).repeat()
    drawn = _values(D.sample_from_datasets([ones, twos], weights=[0.8, 0.2], seed=3).take(2000))
    assert 0.75 < drawn.count(1) / 2000 < 0.85
    # without stop_on_empty_dataset, the others go on once one is exhausted
    mixed = _values(D.sample_from_datasets([D.range(3), D.range(10, 12)], seed=1))
    assert sorted(mixed) == [0, 1, 2, 10, 11]
    choice = D.from_tensor_slices(np.array([0, 1, 1, 0, 0, 0], np.int64))
    assert _values(D.choose_from_datasets([D.range(0, 3), D.range(10, 13)], choice)) == [0, 10, 11, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Selector index out of range"):
        _values(D.choose_from_datasets([D.range(3)], D.from_tensors(np.int64(4))))
    with pytest.raises(TypeError, match="scalar int64"):
        D.choose_from_datasets([D.range(3)], D.range(2).map(lambda x: tf.cast(x, tf.int32)))


def test_the_experimental_names():
    exp = tf.data.experimental
    assert exp.AUTOTUNE == tf.data.AUTOTUNE and exp.cardinality(D.range(4)).numpy() == 4
    checked = D.range(3).filter(lambda x: x >= 0).apply(exp.assert_cardinality(3))
    assert checked.cardinality().numpy() == 3 and _values(checked) == [0, 1, 2]
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 5 elements but contained only 3"):
        list(D.range(3).apply(exp.assert_cardinality(5)))
    assert _values(D.range(2).apply(exp.enumerate_dataset(5))) == [(5, 0), (6, 1)]
    assert _values(exp.Counter(3).take(2)) == [3, 4]
    assert _values(exp.choose_from_datasets([D.range(2)], D.from_tensors(np.int64(0)).repeat(2))) == [0, 1]


def test_window_makes_datasets_that_flat_map_turns_into_batches():
    """TF's examples: windows of 3 every 2 (the last ones shorter), with a stride, and zipped components."""
    windows = D.range(7).window(3, shift=2)
    assert repr(windows.element_spec) == "DatasetSpec(TensorSpec(shape=(), dtype=tfn.int64, name=None), " \
                                         "TensorShape([]))"
    assert [_values(w) for w in windows] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert windows.cardinality().numpy() == 4
    strided = D.range(7).window(3, 1, 2, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert _values(strided) == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    pairs = D.from_tensor_slices((np.arange(6), np.arange(6) * 10)).window(4, 2, drop_remainder=True)
    zipped = pairs.flat_map(lambda a, b: D.zip((a.batch(4), b.batch(4))))
    assert _values(zipped) == [([0, 1, 2, 3], [0, 10, 20, 30]), ([2, 3, 4, 5], [20, 30, 40, 50])]
    assert _compiled_sum(strided).numpy() == 6 + 9 + 12
    with pytest.raises(TypeError, match="Dataset.batch needs elements of tensors"):
        windows.batch(2)
    with pytest.raises(TypeError, match="A tfn.function argument needs elements of tensors"):
        _compiled_sum(windows)
    with pytest.raises(tf.errors.InvalidArgumentError, match="shift must be positive"):
        D.range(3).window(2, 0)
