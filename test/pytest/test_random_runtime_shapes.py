"""Random draws and dropout whose shape is known only when the function runs (a None batch dimension, tfn.shape(x),
a shape tensor argument): one trace serves every size, and a seed draws the same numbers as with a static shape."""
import numpy as np
import pytest

import tfn as tf

SPEC = [tf.TensorSpec([None, 5], tf.float32)]


def _draws(make, x, compiled):
    """Two draws of make(x) (the second shows the counter advanced alike), eagerly or traced with a None batch."""
    f = tf.function(make, input_signature=SPEC) if compiled else make
    return [f(x).numpy() for _ in range(2)]


@pytest.mark.parametrize("make", [
    lambda x: tf.random.uniform(tf.shape(x), seed=3),
    lambda x: tf.random.uniform([tf.shape(x)[0], 5], minval=-2.0, maxval=4.0),
    lambda x: tf.random.uniform([tf.shape(x)[0], tf.constant(5)], 0, 100, dtype=tf.int64, seed=9),
    lambda x: tf.random.normal(tf.shape(x), mean=1.0, stddev=3.0),
    lambda x: tf.random.truncated_normal([tf.shape(x)[0], 5], seed=4),
], ids=["uniform", "uniform-mixed-list", "uniform-int", "normal", "truncated-normal"])
def test_runtime_shape_draws_what_the_static_shape_draws(make):
    x = tf.zeros([7, 5])
    tf.random.set_seed(11)
    eager = _draws(make, x, compiled=False)  # eagerly tf.shape(x) is known: the static draw
    tf.random.set_seed(11)
    static_trace = tf.function(make)  # traced for x's static shape: tf.shape(x) is known
    static = [static_trace(x).numpy() for _ in range(2)]
    tf.random.set_seed(11)
    runtime = _draws(make, x, compiled=True)
    for e, s, r in zip(eager, static, runtime):
        assert r.shape == (7, 5)
        np.testing.assert_array_equal(r, s)  # compiled: the same bits through the same math
        np.testing.assert_allclose(r, e, rtol=1e-6, atol=1e-6)  # NumPy's log/cos may differ in the last place
    assert not np.array_equal(runtime[0], runtime[1])


def test_shape_tensor_argument_one_trace_every_size():
    tf.random.set_seed(5)
    f = tf.function(lambda shape: tf.random.uniform(shape, seed=1))
    sizes = [[3, 4], [0, 4], [1, 1], [200, 50]]
    draws = [f(tf.constant(s)).numpy() for s in sizes]
    assert [d.shape for d in draws] == [tuple(s) for s in sizes]
    assert f.experimental_get_tracing_count() == 1
    big = draws[-1]
    assert 0 <= big.min() and big.max() < 1 and abs(big.mean() - 0.5) < 0.01
    assert abs(big.std() - np.sqrt(1 / 12)) < 0.01
    tf.random.set_seed(5)
    np.testing.assert_array_equal(tf.random.uniform([3, 4], seed=1).numpy(), draws[0])


def test_static_sizes_stay_in_the_traced_type():
    @tf.function(input_signature=SPEC)
    def f(x):
        mixed = tf.random.normal([tf.shape(x)[0], 5])
        assert mixed.shape.as_list() == [None, 5]
        assert tf.random.uniform(tf.shape(x)).shape.as_list() == [None, None]
        return mixed

    assert f(tf.zeros([3, 5])).shape == (3, 5)


def test_philox_count_known_at_run_time():
    args = [np.int64(v) for v in (2**40 + 3, 1, 87654321, 2)]
    f = tf.function(lambda n: tf.random.philox4x32(*args, n))
    for n in (0, 1, 7, 9):
        np.testing.assert_array_equal(f(tf.constant(n)).numpy(), tf.random.philox4x32(*args, n).numpy())
    assert f.experimental_get_tracing_count() == 1


def test_shuffle_of_a_none_first_dimension():
    f = tf.function(tf.random.shuffle, input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    for n in (1, 6):
        rows = f(tf.reshape(tf.range(2 * n), [n, 2])).numpy()
        assert sorted(map(tuple, rows)) == [(2 * i, 2 * i + 1) for i in range(n)]


def test_bad_runtime_shapes_raise_when_the_function_runs():
    @tf.function(input_signature=[tf.TensorSpec([2], tf.int64)])
    def draw(shape):
        return tf.random.uniform(shape)  # the line named

    where = f"{__file__}:{draw.python_function.__code__.co_firstlineno + 2}"  # (the decorator's line is the first)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Dimension -3 must be >= 0\n(.|\n)*" + where):
        draw(tf.constant([2, -3], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape \[4294967296,4294967296\] would have more than "
                                                             r"2\*\*63 - 1 elements"):
        draw(tf.constant([2**32, 2**32], tf.int64))
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"OOM when allocating tensor with "
                                                               r"shape\[2147483647,2147483647\] and type int64"):
        draw(tf.constant([2**31 - 1, 2**31 - 1], tf.int64))
    assert draw(tf.constant([2, 3], tf.int64)).shape == (2, 3)  # the function still works


def test_bad_shape_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Dimension -1 must be >= 0 \[Op:RandomUniform\]"):
        tf.random.uniform([2, -1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape must be a vector of \{int32,int64\}, got "
                                                             r"float32 of shape \[2\] \[Op:RandomStandardNormal\]"):
        tf.random.normal(tf.constant([2.0, 3.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape must be a vector"):
        tf.random.uniform([[2, 3]])
    with pytest.raises(TypeError, match="each size of the shape must be an int or a scalar int tensor"):
        tf.random.uniform([2, 1.5])

    @tf.function(input_signature=[tf.TensorSpec([2, 2], tf.int32)])
    def matrix(shape):
        return tf.random.uniform(shape)

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"got int32 of shape \[2, 2\] \[Op:RandomUniform\]"):
        matrix.get_concrete_function()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def unknown_rank(shape):
        return tf.random.uniform(shape)

    with pytest.raises(ValueError, match="a shape computed at run time must be a 1-D tensor of known length"):
        unknown_rank.get_concrete_function()


def test_dropout_of_a_none_batch_dimension_eager_equals_compiled():
    x = tf.ones([400, 5])
    f = tf.function(lambda x: tf.nn.dropout(x, 0.3, seed=2), input_signature=SPEC)
    tf.random.set_seed(8)
    eager = tf.nn.dropout(x, 0.3, seed=2).numpy()
    tf.random.set_seed(8)
    compiled = f(x).numpy()
    np.testing.assert_array_equal(compiled, eager)
    assert set(np.unique(compiled)) == {0.0, np.float32(1 / 0.7)}
    assert abs((compiled == 0).mean() - 0.3) < 0.03
    assert f(tf.ones([3, 5])).shape == (3, 5) and f.experimental_get_tracing_count() == 1


def test_dropout_noise_shape_with_none_shares_the_draw():
    @tf.function(input_signature=[tf.TensorSpec([None, None, 4], tf.float32)])
    def f(x):
        return tf.nn.dropout(x, 0.5, noise_shape=[None, 1, None])  # None: x's size (read at run time)

    y = f(tf.ones([3, 6, 4])).numpy()
    assert y.shape == (3, 6, 4) and (y == y[:, :1, :]).all()


def test_gradient_through_dropout_of_a_none_batch_dimension():
    @tf.function(input_signature=SPEC)
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.dropout(x, 0.25)
            loss = tf.reduce_sum(y * x)
        return y, tape.gradient(loss, x)

    for n in (2, 9):
        x = tf.constant(np.arange(1, 5 * n + 1, dtype=np.float32).reshape(n, 5))
        y, dx = (t.numpy() for t in grad(x))
        kept = y != 0
        np.testing.assert_allclose(dx, np.where(kept, 2 * x.numpy() / 0.75, 0), rtol=1e-6)
    assert grad.experimental_get_tracing_count() == 1


def test_keras_dropout_trains_on_a_none_batch_dimension():
    from tfn import keras

    tf.random.set_seed(0)
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dropout(0.5), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    step = tf.function(model.train_step, input_signature=[tf.TensorSpec([None, 4], tf.float32),
                                                          tf.TensorSpec([None, 1], tf.float32)])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(37, 4)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    before = model.layers[0].kernel.numpy().copy()
    for lo in range(0, 37, 16):  # batches of 16, 16 and 5
        step(tf.constant(x[lo:lo + 16]), tf.constant(y[lo:lo + 16]))
    assert step.experimental_get_tracing_count() == 1
    assert not np.array_equal(model.layers[0].kernel.numpy(), before)
    assert np.isfinite(model.evaluate(x, y, verbose=0))
    train = model(tf.constant(x), training=True).numpy()
    assert not np.allclose(train, model(tf.constant(x), training=False).numpy())
