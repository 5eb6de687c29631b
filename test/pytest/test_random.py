"""tfn.random: seeded, counter-based draws; eager and compiled agree, each call draws anew."""
import numpy as np
import pytest

import tfn as tf


def test_uniform_statistics_and_range():
    tf.random.set_seed(5)
    u = tf.random.uniform([20000]).numpy()
    assert u.dtype == np.float32 and 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - np.sqrt(1 / 12)) < 0.01
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.03  # neighbours (consecutive counters) uncorrelated
    scaled = tf.random.uniform([1000], minval=-3.0, maxval=5.0).numpy()
    assert -3 <= scaled.min() and scaled.max() < 5
    ints = tf.random.uniform([1000], 2, 7, dtype=tf.int32).numpy()
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {2, 3, 4, 5, 6}
    with pytest.raises(ValueError, match="maxval"):
        tf.random.uniform([3], dtype=tf.int32)


def test_normal_and_truncated_normal():
    tf.random.set_seed(6)
    z = tf.random.normal([20000], mean=1.0, stddev=2.0).numpy()
    assert abs(z.mean() - 1.0) < 0.05 and abs(z.std() - 2.0) < 0.05
    t = tf.random.truncated_normal([20000]).numpy()
    assert -2 <= t.min() and t.max() <= 2 and 0.85 < t.std() < 0.91  # a 2-sigma truncated normal: std 0.880


def test_seed_reproduces_and_compiled_agrees_with_eager():
    f = tf.function(lambda: tf.random.normal([4, 3]))
    tf.random.set_seed(42)
    eager = [tf.random.normal([4, 3]).numpy() for _ in range(2)]
    tf.random.set_seed(42)
    compiled = [f().numpy() for _ in range(2)]
    # the same bits; compiled log/cos may differ from NumPy's in the last place
    np.testing.assert_allclose(eager[0], compiled[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(eager[1], compiled[1], rtol=1e-6, atol=1e-6)
    g = tf.function(lambda: tf.random.uniform([5]))
    tf.random.set_seed(42)
    bits = tf.random.uniform([5]).numpy()
    tf.random.set_seed(42)
    np.testing.assert_array_equal(g().numpy(), bits)
    assert not np.array_equal(compiled[0], compiled[1])  # a new draw on every call
    tf.random.set_seed(43)
    assert not np.array_equal(f().numpy(), compiled[0])


def test_shuffle_is_a_permutation():
    tf.random.set_seed(7)
    values = tf.random.shuffle(tf.range(50)).numpy()
    assert sorted(values) == list(range(50)) and not np.array_equal(values, np.arange(50))
    rows = tf.random.shuffle(tf.reshape(tf.range(12), [6, 2])).numpy()
    assert sorted(map(tuple, rows)) == [(2 * i, 2 * i + 1) for i in range(6)]


def test_shuffle_of_a_dataset_sized_tensor_eagerly_and_compiled_alike():
    """300,000 rows (an n x n comparison of the keys would need 90 GB): the positions ordered by the keys' stable
    argsort, the same permutation eagerly and compiled for the same seed."""
    x = np.arange(600_000, dtype=np.int32).reshape(-1, 2)
    tf.random.set_seed(3)
    eager = tf.random.shuffle(x).numpy()
    tf.random.set_seed(3)
    compiled = tf.function(lambda v: tf.random.shuffle(v))(x).numpy()
    np.testing.assert_array_equal(eager, compiled)
    np.testing.assert_array_equal(np.sort(eager[:, 0]), x[:, 0])
    np.testing.assert_array_equal(eager[:, 1] - eager[:, 0], np.ones(300_000, np.int32))
    assert (eager[:, 0] != x[:, 0]).mean() > 0.99


def _int64(low_word, high_word):
    """The int64 whose bit pattern holds the two 32-bit words."""
    return np.array([low_word | high_word << 32], np.uint64).view(np.int64)[0]


@pytest.mark.parametrize("counter,key,want", [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
])
def test_philox_known_answers_eager_and_compiled(counter, key, want):
    """Random123's known-answer vectors for Philox 4x32-10 (block 0 of a draw of 4 words)."""
    args = [_int64(*counter[:2]), _int64(*counter[2:]), np.int64(key[0]), np.int64(key[1])]
    eager = tf.random.philox4x32(*args, 4)
    compiled = tf.function(lambda *a: tf.random.philox4x32(*a, 4))(*[tf.constant(a) for a in args])
    assert eager.numpy().tolist() == want
    assert compiled.numpy().tolist() == want


@pytest.mark.parametrize("count", [0, 3, 8, 4099])
def test_philox_blocks_count_on_from_the_counter_compiled_as_eagerly(count):
    """Block b encrypts counter_low + b (wrapping past 2**64 - 1), eager and compiled alike, for counts that are and
    are not whole blocks."""
    low = np.int64(-2)  # 2**64 - 2: the third block's counter wraps to 0
    args = [low, np.int64(5), np.int64(87654321), np.int64(3)]
    eager = tf.random.philox4x32(*args, count).numpy()
    compiled = tf.function(lambda *a: tf.random.philox4x32(*a, count))(*[tf.constant(a) for a in args]).numpy()
    assert eager.shape == compiled.shape == (count,) and eager.dtype == np.int64
    np.testing.assert_array_equal(eager, compiled)
    assert ((eager >= 0) & (eager < 2**32)).all()
    if count >= 12:
        third = tf.random.philox4x32(np.int64(0), np.int64(5), np.int64(87654321), np.int64(3), 4).numpy()
        np.testing.assert_array_equal(eager[8:12], third)


def test_stateless_draws_depend_on_the_seed_alone():
    """tf.random.stateless_*: the same seed gives the same numbers whatever the global seed and the draws before,
    eagerly and compiled (a tensor seed in a tf.function); another seed gives others."""
    tf.random.set_seed(1)
    first = tf.random.stateless_uniform([3, 4], seed=[1, 2]).numpy()
    tf.random.uniform([10])  # advances the global counter: not read by stateless draws
    tf.random.set_seed(99)
    np.testing.assert_array_equal(tf.random.stateless_uniform([3, 4], seed=[1, 2]).numpy(), first)
    f = tf.function(lambda s: tf.random.stateless_uniform([3, 4], seed=s))
    np.testing.assert_array_equal(f(tf.constant([1, 2])).numpy(), first)
    assert not np.array_equal(f(tf.constant([1, 3])).numpy(), first)
    assert ((first >= 0) & (first < 1)).all()
    z = tf.function(lambda s: tf.random.stateless_normal([100_000], seed=s))(tf.constant([5, 6])).numpy()
    np.testing.assert_allclose(z, tf.random.stateless_normal([100_000], seed=[5, 6]).numpy(), atol=1e-6)
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1.0) < 0.02
    t = tf.random.stateless_truncated_normal([10_000], seed=[7, 7], stddev=2.0).numpy()
    assert np.abs(t).max() <= 4.0 and t.std() > 1.5
    ints = tf.random.stateless_uniform([1000], seed=[3, 4], minval=-2, maxval=5, dtype=tf.int32).numpy()
    assert ints.dtype == np.int32 and set(ints.tolist()) == set(range(-2, 5))


def test_stateless_seed_must_be_a_pair_of_ints():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="seed must be an int32 or int64 tensor, got float32"):
        tf.random.stateless_normal([2], seed=[1.0, 2.0])


def test_categorical_draws_each_class_by_its_probability():
    """Gumbel-max: class frequencies follow softmax(logits); a -inf logit is never drawn; int64 [batch, samples]."""
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.5, 1.0]], np.float32))
    logits[1, 2] = -np.inf
    tf.random.set_seed(4)
    draws = tf.random.categorical(logits, 20_000).numpy()
    assert draws.shape == (2, 20_000) and draws.dtype == np.int64
    np.testing.assert_allclose(np.bincount(draws[0], minlength=3) / 20_000, [0.1, 0.6, 0.3], atol=0.015)
    assert 2 not in draws[1] and abs((draws[1] == 0).mean() - 0.5) < 0.015
    f = tf.function(lambda lg: tf.random.stateless_categorical(lg, 6, seed=[3, 4], dtype=tf.int32))
    same = f(logits).numpy()
    assert same.dtype == np.int32 and same.shape == (2, 6)
    np.testing.assert_array_equal(same, tf.random.stateless_categorical(logits, 6, seed=[3, 4], dtype=tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits should be a matrix"):
        tf.random.categorical([0.5, 0.5], 3)


def test_bad_bounds_and_dtypes_raise_as_tf():
    """An integer range with minval >= maxval drew minval every time; a bool uniform or an integer normal gave
    values TF refuses to make."""
    for run in (lambda: tf.random.uniform([3], 5, 1, dtype=tf.int32),
                tf.function(lambda: tf.random.uniform([3], 5, 5, dtype=tf.int64))):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Need minval < maxval: 5 >= [15] "
                                                                  r"\[Op:RandomUniformInt\]"):
            run()
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value tfn.bool"):
        tf.random.uniform([3], dtype=tf.bool)
    for make in (tf.random.normal, tf.random.truncated_normal):
        with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
            make([3], dtype=tf.int32)
    assert tf.random.uniform([100], -2, 3, dtype=tf.int64).numpy().min() >= -2
