"""tfn.data: each transformation and chains of them against NumPy, eagerly and looped over in a tfn.function;
the loop's size independent of the data; iterators as arguments; datasets as trace types; generator errors."""
import threading

import numpy as np
import pytest

import tfn as tf

# The tests trace one function for many pipelines on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::tfn.tracing.polymorphic.RetracingWarning")

X = np.arange(10, dtype=np.float32) * 1.5
Y = np.arange(10, dtype=np.int32)


def rows(ds):
    """The elements as NumPy structures."""
    return list(ds.as_numpy_iterator())


def assert_rows(ds, expected):
    got = rows(ds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        for a, b in zip(tf.nest.flatten(g), tf.nest.flatten(e)):
            np.testing.assert_array_equal(a, b)


def fold(values):
    """An order-sensitive summary of a sequence of arrays (as `folded` computes it in a trace)."""
    acc = 0.0
    for v in values:
        acc = acc * 1.5 + float(np.sum(np.asarray(v, np.float64)))
    return acc


def _fold_in_trace(ds):
    acc = tf.constant(0.0, tf.float64)
    for x in ds:
        acc = acc * 1.5 + tf.reduce_sum(tf.cast(x, tf.float64))
    return acc


def folded(ds):
    """`_fold_in_trace` as a new tfn.function (its own trace and executable for each test)."""
    return tf.function(_fold_in_trace)(ds)


def folded_trace(ds):
    return tf.function(_fold_in_trace).get_concrete_function(ds)


def check_compiled(ds, expected):
    np.testing.assert_allclose(folded(ds).numpy(), fold(expected), rtol=1e-12)


# --- sources -----------------------------------------------------------------------------------------------------

def test_from_tensor_slices_yields_rows_as_tensors_and_stops():
    ds = tf.data.Dataset.from_tensor_slices(X)
    it = iter(ds)
    first = next(it)
    assert isinstance(first, tf.Tensor) and first.shape == () and first.dtype == tf.float32
    assert [float(x) for x in [first] + list(it)] == X.tolist()
    with pytest.raises(StopIteration):
        next(it)


def test_nested_elements_tuples_and_dicts():
    ds = tf.data.Dataset.from_tensor_slices((X, {"b": Y, "a": Y * 2}))
    assert_rows(ds, [(x, {"a": y * 2, "b": y}) for x, y in zip(X, Y)])
    x, d = next(iter(ds))
    assert isinstance(d, dict) and sorted(d) == ["a", "b"]


def test_from_tensors_range_and_generator():
    assert_rows(tf.data.Dataset.from_tensors(X), [X])
    assert_rows(tf.data.Dataset.range(3, 17, 4), list(range(3, 17, 4)))
    assert tf.data.Dataset.range(5).element_spec == tf.TensorSpec((), tf.int64)
    gen = tf.data.Dataset.from_generator(lambda: ((i, [i] * i) for i in range(4)),
                                         output_signature=(tf.TensorSpec((), tf.int32),
                                                           tf.TensorSpec((None,), tf.int32)))
    assert_rows(gen, [(i, [i] * i) for i in range(4)])


def test_reprs_name_tf_classes():
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
    assert repr(ds) == "<_TensorSliceDataset element_spec=TensorSpec(shape=(), dtype=tfn.int32, name=None)>"
    gen = tf.data.Dataset.from_generator(lambda: [(1, 1)], (tf.int32, tf.int32))
    assert repr(gen).startswith("<_FlatMapDataset element_spec=(TensorSpec(shape=<unknown>, dtype=tfn.int32")
    assert repr(ds.map(lambda x: x)).startswith("<_MapDataset ")
    assert repr(ds.batch(2)).startswith("<_BatchDataset element_spec=TensorSpec(shape=(None,)")
    assert repr(ds.batch(2, drop_remainder=True)).startswith("<_BatchDataset element_spec=TensorSpec(shape=(2,)")
    assert repr(ds.enumerate()).startswith("<_ZipDataset ")
    for t in ("filter", "shuffle", "repeat", "take", "skip", "cache", "prefetch", "unbatch"):
        d = {"filter": lambda: ds.filter(lambda x: x > 1), "shuffle": lambda: ds.shuffle(2),
             "repeat": lambda: ds.repeat(2), "take": lambda: ds.take(1), "skip": lambda: ds.skip(1),
             "cache": lambda: ds.cache(), "prefetch": lambda: ds.prefetch(1),
             "unbatch": lambda: ds.batch(2).unbatch()}[t]()
        assert type(d).__name__ == "_" + t.capitalize() + "Dataset"


# --- transformations against NumPy --------------------------------------------------------------------------------

def test_map_is_traced_once():
    traces = []

    def f(x):
        traces.append(1)
        return x * 2 + 1
    ds = tf.data.Dataset.from_tensor_slices(X).map(f)
    assert_rows(ds, X * 2 + 1)
    assert_rows(ds, X * 2 + 1)
    assert len(traces) == 1


def test_map_unpacks_tuples_and_changes_structure():
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).map(lambda x, y: {"s": x + tf.cast(y, tf.float32)})
    assert ds.element_spec == {"s": tf.TensorSpec((), tf.float32)}
    assert_rows(ds, [{"s": x + y} for x, y in zip(X, Y)])


def test_filter_batch_unbatch():
    ds = tf.data.Dataset.from_tensor_slices(Y)
    assert_rows(ds.filter(lambda y: y % 3 == 0), Y[Y % 3 == 0])
    assert_rows(ds.batch(4), [Y[0:4], Y[4:8], Y[8:10]])
    assert_rows(ds.batch(4, drop_remainder=True), [Y[0:4], Y[4:8]])
    assert_rows(ds.batch(4).unbatch(), Y)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with different shapes"):
        rows(tf.data.Dataset.from_generator(lambda: [[1], [1, 2]], output_signature=tf.TensorSpec([None], tf.int32))
             .batch(2))


def test_repeat_take_skip_enumerate_zip():
    ds = tf.data.Dataset.from_tensor_slices(Y)
    assert_rows(ds.repeat(3), np.tile(Y, 3))
    assert_rows(ds.repeat().take(25), np.tile(Y, 3)[:25])
    assert_rows(ds.take(4), Y[:4])
    assert_rows(ds.take(-1), Y)
    assert_rows(ds.skip(7), Y[7:])
    assert_rows(ds.skip(-1), [])
    assert_rows(ds.enumerate(start=5), list(zip(range(5, 15), Y)))
    assert_rows(tf.data.Dataset.zip((ds, ds.skip(3))), list(zip(Y, Y[3:])))
    assert_rows(tf.data.Dataset.zip({"a": ds, "b": ds.map(lambda y: -y)}), [{"a": y, "b": -y} for y in Y])


def test_shuffle_is_a_seeded_permutation():
    ds = tf.data.Dataset.from_tensor_slices(Y)
    a = [int(v) for v in rows(ds.shuffle(4, seed=7))]
    assert sorted(a) == Y.tolist() and a != Y.tolist()
    assert [int(v) for v in rows(ds.shuffle(4, seed=7))] == a
    assert [int(v) for v in rows(ds.shuffle(1, seed=7))] == Y.tolist()  # a buffer of 1 keeps the order
    # A buffer of size b can only put an element at most b - 1 places earlier.
    assert all(pos >= v - 3 for pos, v in enumerate(a))
    every = ds.shuffle(10, seed=3)
    assert rows(every) != rows(every)  # reshuffled for each iteration
    fixed = ds.shuffle(10, seed=3, reshuffle_each_iteration=False)
    np.testing.assert_array_equal(rows(fixed), rows(fixed))


def test_cache_runs_its_input_once():
    calls = []

    def gen():
        calls.append(1)
        yield from range(4)
    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int64)).cache()
    assert_rows(ds, range(4))
    assert_rows(ds, range(4))
    assert len(calls) == 1


def _counted(calls, n=6):
    def gen():
        calls.append(1)
        for i in range(n):
            yield np.arange(i, dtype=np.float32) * 0.5, i * 10
    spec = (tf.TensorSpec((None,), tf.float32), tf.TensorSpec((), tf.int64))
    return tf.data.Dataset.from_generator(gen, output_signature=spec)


def _expected(n=6):
    return [(np.arange(i, dtype=np.float32) * 0.5, np.int64(i * 10)) for i in range(n)]


def test_a_file_cache_is_written_by_the_first_full_iteration_and_read_afterwards(tmp_path):
    calls = []
    prefix = str(tmp_path / "sub" / "train")
    ds = _counted(calls).cache(prefix)
    assert_rows(ds, _expected())
    assert (tmp_path / "sub" / "train.index").exists() and not (tmp_path / "sub" / "train.lockfile").exists()
    assert_rows(ds, _expected())
    assert_rows(_counted(calls).cache(prefix), _expected())  # another dataset object on the same files
    assert len(calls) == 1


def test_a_file_cache_in_a_function_and_with_many_shards(tmp_path, monkeypatch):
    from tfn.data import file_cache
    monkeypatch.setattr(file_cache, "SHARD_ELEMENTS", 3)
    calls = []

    def gen():
        calls.append(1)
        yield from X
    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.float32))
    ds = ds.cache(str(tmp_path / "c")).map(lambda x: x + 1.0)
    check_compiled(ds, X + 1.0)
    check_compiled(ds, X + 1.0)
    assert len(calls) == 1 and len(list(tmp_path.glob("c.*.npz"))) == 4


def test_a_partly_read_file_cache_is_discarded(tmp_path):
    calls = []
    ds = _counted(calls).cache(str(tmp_path / "c"))
    with pytest.warns(UserWarning, match="did not fully read the dataset being cached"):
        assert_rows(ds.take(2), _expected(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert_rows(ds, _expected())
    assert_rows(ds, _expected())
    assert len(calls) == 2


def test_a_file_cache_whose_input_fails_is_not_written(tmp_path):
    ds = tf.data.Dataset.from_generator(_failing, output_signature=tf.TensorSpec((), tf.int32))
    ds = ds.cache(str(tmp_path / "c"))
    with pytest.raises(KeyError, match="bad record"):
        rows(ds)
    assert list(tmp_path.iterdir()) == []


def test_two_iterators_writing_one_file_cache_raise_already_exists(tmp_path):
    ds = _counted([]).cache(str(tmp_path / "c"))
    first = iter(ds)
    next(first)
    with pytest.raises(tf.errors.AlreadyExistsError, match="concurrent caching iterator.*c.lockfile"):
        next(iter(ds))
    rest = list(first)
    assert len(rest) == 5
    assert_rows(ds, _expected())  # the first one finished the cache


def test_a_file_cache_of_other_elements_is_refused(tmp_path):
    prefix = str(tmp_path / "c")
    rows(tf.data.Dataset.range(3).cache(prefix))
    with pytest.raises(tf.errors.InvalidArgumentError, match="holds elements of.*int64.*float32"):
        rows(tf.data.Dataset.from_tensor_slices(X).cache(prefix))
    (tmp_path / "c.index").write_text("{not json")
    with pytest.raises(tf.errors.DataLossError, match="c.index"):
        rows(tf.data.Dataset.range(3).cache(prefix))
    with pytest.raises(TypeError, match="filename must be a string"):
        tf.data.Dataset.range(3).cache(3)


def test_prefetch_produces_on_a_background_thread():
    threads = []

    def gen():
        for i in range(5):
            threads.append(threading.current_thread().name)
            yield i
    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32)).prefetch(2)
    assert_rows(ds, range(5))
    assert set(threads) == {"tfn.data.prefetch"}


def test_reduce_cardinality_and_len():
    ds = tf.data.Dataset.from_tensor_slices(X)
    assert float(ds.reduce(tf.constant(0.0), lambda s, x: s + x)) == pytest.approx(float(X.sum()))
    assert int(ds.cardinality()) == 10 and len(ds) == 10
    assert int(ds.batch(3).cardinality()) == 4 and int(ds.batch(3, True).cardinality()) == 3
    assert int(ds.repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(ds.filter(lambda x: x > 0).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())


def test_chain_against_numpy():
    ds = (tf.data.Dataset.from_tensor_slices((X, Y)).map(lambda x, y: x * tf.cast(y, tf.float32))
          .skip(1).batch(3).unbatch().filter(lambda v: v > 5.0).take(5).enumerate())
    v = (X * Y)[1:]
    v = v[v > 5.0][:5]
    assert_rows(ds, list(enumerate(v)))


# --- looping in a tfn.function ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, make, expected", [
    ("slices", lambda d: d, X),
    ("map", lambda d: d.map(lambda x: x * x), X * X),
    ("batch", lambda d: d.batch(3), [X[0:3], X[3:6], X[6:9], X[9:]]),
    ("batch_drop", lambda d: d.batch(4, drop_remainder=True), [X[0:4], X[4:8]]),
    ("map_batch", lambda d: d.map(lambda x: x + 1).batch(4), [X[0:4] + 1, X[4:8] + 1, X[8:] + 1]),
    ("map_batch_per_element", lambda d: d.map(lambda x: x - tf.reduce_sum(x) + x * x).batch(4),
     [X[0:4] ** 2, X[4:8] ** 2, X[8:] ** 2]),
    ("map_where_batch", lambda d: d.skip(1).map(lambda x: tf.where(x > 4.0, x, -x)).batch(3, drop_remainder=True),
     [np.where(X[i:i + 3] > 4.0, X[i:i + 3], -X[i:i + 3]) for i in (1, 4, 7)]),
    ("take_skip", lambda d: d.skip(2).take(5), X[2:7]),
    ("repeat", lambda d: d.take(3).repeat(2), np.tile(X[:3], 2)),
    ("zip", lambda d: tf.data.Dataset.zip((d, d.skip(4))).map(lambda a, b: a - b), X[:6] - X[4:]),
    ("enumerate", lambda d: d.enumerate().map(lambda i, x: tf.cast(i, tf.float32) * x), np.arange(10) * X),
    ("cache_prefetch", lambda d: d.cache().prefetch(2), X),
    ("filter", lambda d: d.filter(lambda x: x > 4.0), X[X > 4.0]),
    ("shuffle", lambda d: d.shuffle(3, seed=5, reshuffle_each_iteration=False), None),
    ("unbatch", lambda d: d.batch(3).unbatch(), X),
])
def test_for_loop_in_function_matches_numpy(name, make, expected):
    ds = make(tf.data.Dataset.from_tensor_slices(X))
    if expected is None:
        expected = [r for r in rows(ds)]
    check_compiled(ds, expected)


def _pulls(monkeypatch):
    """A list that grows by one for each element a Python producer gives a compiled loop."""
    from tfn.data import native
    pulls, pull = [], native._Call.pull

    def counted(self, words):
        pulls.append(1)
        return pull(self, words)
    monkeypatch.setattr(native._Call, "pull", counted)
    return pulls


def test_in_memory_pipelines_come_from_their_compiled_producer_others_from_python(monkeypatch):
    from tfn.data import native
    pulls = _pulls(monkeypatch)
    in_memory = tf.data.Dataset.from_tensor_slices(X).map(lambda x: x * 2.0).batch(3).skip(1).take(2)
    check_compiled(in_memory, [X[3:6] * 2.0, X[6:9] * 2.0])
    producer = native._compiled(in_memory)
    assert producer is not None and producer.concrete.graph.callbacks == []  # the map is compiled in
    assert pulls == []  # no element went through Python
    pulled = tf.data.Dataset.from_tensor_slices(X).filter(lambda x: x > 1.0)
    assert native._compiled(pulled) is None
    check_compiled(pulled, X[X > 1.0])
    assert len(pulls) == len(X[X > 1.0]) + 1  # each element, then the end
    # The trace itself is the same for both: its one callback raises a producer's error.
    assert len(folded_trace(in_memory).graph.callbacks) == 1


def test_a_pipeline_whose_producer_would_call_back_is_pulled_through_python(monkeypatch):
    from tfn.data import native
    pulls = _pulls(monkeypatch)
    printed = tf.data.Dataset.from_tensor_slices(X).map(lambda x: tf.py_function(lambda v: v * 3.0, [x], tf.float32))
    assert native._compiled(printed) is None
    check_compiled(printed.map(lambda v: tf.reshape(v, [])), X * 3.0)
    assert len(pulls) == len(X) + 1


def test_an_elementwise_map_runs_once_per_batch():
    from tfn.data import native, staging
    scalar = tf.TensorSpec((), tf.float32)
    assert staging.elementwise(tf.function(lambda x: tf.where(x > 1.0, x * 2.0, tf.exp(x))), scalar)
    assert not staging.elementwise(tf.function(lambda x: x - tf.reduce_sum(x)), scalar)
    assert not staging.elementwise(tf.function(lambda x: x + tf.constant([1.0, 2.0])), scalar)
    assert not staging.elementwise(tf.function(lambda x: x + 1.0), tf.TensorSpec((2,), tf.float32))

    def producer_loops(ds):
        """How many loops the compiled producer of the pipeline runs to make one batch."""
        return str(native._compiled(ds).concrete.graph.module).count("scf.while")
    src = tf.data.Dataset.from_tensor_slices(X)
    assert producer_loops(src.map(lambda x: x * 3.0).batch(4)) == 0  # the map on a slice of 4
    assert producer_loops(src.map(lambda x: x - tf.reduce_sum(x)).batch(4)) == 1  # one element at a time


def test_for_over_dataset_built_in_the_function_from_its_arguments():
    @tf.function
    def f(x):
        s = tf.constant(0.0)
        for b in tf.data.Dataset.from_tensor_slices(x).map(lambda t: t * 2.0).batch(4):
            s = s * 2.0 + tf.reduce_sum(b)
        return s
    expected = 0.0
    for b in (X[0:4], X[4:8], X[8:]):
        expected = expected * 2.0 + float(np.sum(b * 2))
    assert float(f(tf.constant(X))) == pytest.approx(expected)


def test_range_and_generator_loops():
    check_compiled(tf.data.Dataset.range(2, 40, 3), list(range(2, 40, 3)))
    gen = tf.data.Dataset.from_generator(lambda: ([i, i + 1] for i in range(6)),
                                         output_signature=tf.TensorSpec((2,), tf.int32))
    check_compiled(gen, [[i, i + 1] for i in range(6)])


def _nodes(fn, *args):
    return len(fn.get_concrete_function(*args).graph.as_graph_def().node)


def test_dataset_loops_do_not_grow_with_the_data_lists_do():
    small, big = np.ones(3, np.float32), np.ones(10_000, np.float32)
    assert _nodes(tf.function(_fold_in_trace), tf.data.Dataset.from_tensor_slices(small)) == \
        _nodes(tf.function(_fold_in_trace), tf.data.Dataset.from_tensor_slices(big))
    gen = [tf.data.Dataset.from_generator(lambda n=n: [(1, 1)] * n, (tf.int32, tf.int32)) for n in (3, 10_000)]

    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss
    assert _nodes(train, gen[0]) == _nodes(train, gen[1])
    assert int(train(gen[1])) == 0

    @tf.function
    def unrolled(xs, v):
        loss = tf.constant(0.0)
        for x in xs:
            loss += tf.abs(v - x)
        return loss
    v = tf.constant(1.0)
    assert _nodes(unrolled, [1.0] * 10, v) > _nodes(unrolled, [1.0] * 3, v)


def test_datasets_with_the_same_spec_reuse_one_trace(monkeypatch):
    pulls = _pulls(monkeypatch)
    traces = []

    @tf.function
    def f(ds):
        traces.append(1)
        acc = tf.constant(0.0, tf.float64)
        for x in ds:
            acc = acc * 1.5 + tf.reduce_sum(tf.cast(x, tf.float64))
        return acc
    spec = tf.TensorSpec((), tf.float32)
    pipelines = [  # different sources, transformation chains, generators and tensors, in either order
        (tf.data.Dataset.from_tensor_slices(X), X, True),
        (tf.data.Dataset.from_generator(lambda: [1.0, 2.0], output_signature=spec), [1.0, 2.0], False),
        (tf.data.Dataset.from_tensor_slices(X[:3]), X[:3], True),
        (tf.data.Dataset.from_tensor_slices(X).map(lambda x: x * 2.0), X * 2.0, True),
        (tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32)), np.arange(4.0), True),
        (tf.data.Dataset.from_tensor_slices(X.reshape(5, 2)).unbatch(), X, False),
        (tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(X), tf.data.Dataset.range(3, 100)))
         .map(lambda x, i: x - tf.cast(i, tf.float32)).skip(2).take(5), X[2:7] - np.arange(5, 10), True),
        (tf.data.Dataset.from_tensor_slices(X).filter(lambda x: x > 4.0), X[X > 4.0], False),
        (tf.data.Dataset.from_tensor_slices(X).repeat(3).batch(4).unbatch(), np.tile(X, 3), False),
        (tf.data.Dataset.from_tensors(X).unbatch().take(4).cache().prefetch(2), X[:4], False),
        (tf.data.Dataset.from_tensor_slices(X[::-1].copy()).take(6).repeat(2), np.tile(X[::-1][:6], 2), True),
    ]
    for _ in range(2):
        for ds, expected, compiled in pipelines:
            del pulls[:]
            np.testing.assert_allclose(f(ds).numpy(), fold(expected), rtol=1e-12)
            assert (pulls == []) == compiled
    assert len(traces) == 1
    concrete = f.get_concrete_function(pipelines[0][0])
    assert all(f.get_concrete_function(ds) is concrete for ds, _, _ in pipelines)
    # Other element specs: other traces.
    assert float(f(tf.data.Dataset.from_tensor_slices(Y))) == pytest.approx(fold(Y))
    assert float(f(tf.data.Dataset.from_tensor_slices(X).batch(3).map(tf.reduce_sum))) == \
        pytest.approx(fold([X[i:i + 3].sum() for i in range(0, 10, 3)]))
    assert len(traces) == 2
    for batch in (3, 4):
        assert float(f(tf.data.Dataset.from_tensor_slices(X).batch(batch))) == \
            pytest.approx(fold([X[i:i + batch] for i in range(0, 10, batch)]))
    assert float(f(tf.data.Dataset.from_generator(lambda: [X[:2], X[5:]], output_signature=tf.TensorSpec(
        (None,), tf.float32)))) == pytest.approx(fold([X[:2], X[5:]]))
    assert len(traces) == 3


def test_one_compiled_producer_per_pipeline_structure_and_strings_share_a_trace_too():
    from tfn.data import native
    double = tf.function(lambda x: x * 2.0)
    short = tf.data.Dataset.from_tensor_slices(X.reshape(5, 2)).map(double).batch(2)
    long = tf.data.Dataset.from_tensor_slices(np.tile(X, 10).reshape(50, 2)).map(double).batch(2)
    assert native._compiled(short) is native._compiled(long)  # the source's length is not part of it
    assert native._compiled(short) is not native._compiled(short._parent.batch(3))
    traces = []

    @tf.function
    def count_b(ds):
        traces.append(1)
        n = tf.constant(0)
        for s in ds:
            n += tf.cast(tf.equal(s, "b"), tf.int32)
        return n
    assert int(count_b(tf.data.Dataset.from_tensor_slices(["a", "b", "b"]))) == 2
    assert int(count_b(tf.data.Dataset.from_generator(lambda: [b"b", b"c"], output_signature=tf.TensorSpec(
        (), tf.string)))) == 1
    assert len(traces) == 1  # strings pass as a handle and are pulled through Python, one trace all the same


def test_a_dataset_argument_shares_a_trace_as_the_other_arguments_allow():
    traces = []

    @tf.function
    def f(ds, scale):
        traces.append(1)
        s = tf.constant(0.0)
        for x in ds:
            s += x * scale
        return s
    a = tf.data.Dataset.from_tensor_slices(X)
    b = a.map(lambda x: x + 1.0)
    assert float(f(a, 2.0)) == pytest.approx(2.0 * float(X.sum()))
    assert float(f(b, 3.0)) == pytest.approx(3.0 * float((X + 1.0).sum()))  # 3.0 needs its own trace
    assert float(f(b, 2.0)) == pytest.approx(2.0 * float((X + 1.0).sum()))
    assert float(f(a.take(3), 3.0)) == pytest.approx(3.0 * float(X[:3].sum()))
    assert float(f(a, tf.constant(2.0))) == pytest.approx(2.0 * float(X.sum()))
    assert float(f(b, tf.constant(3.0))) == pytest.approx(3.0 * float((X + 1.0).sum()))
    assert len(traces) == 3


def test_a_dataset_argument_transformed_inside_the_function():
    @tf.function
    def f(ds):
        acc = tf.constant(0.0, tf.float64)
        for x in ds.map(lambda v: v * 2.0).filter(lambda v: v > 5.0):
            acc = acc * 1.5 + tf.cast(x, tf.float64)
        return acc, ds.reduce(tf.constant(0.0), lambda s, v: s + v)
    for ds, xs in ((tf.data.Dataset.from_tensor_slices(X), X), (tf.data.Dataset.range(5).map(
            lambda i: tf.cast(i, tf.float32)), np.arange(5.0))):
        acc, total = f(ds)
        assert float(acc) == pytest.approx(fold(2.0 * xs[2.0 * xs > 5.0]))
        assert float(total) == pytest.approx(float(xs.sum()))
    assert repr(f.get_concrete_function(tf.data.Dataset.from_tensor_slices(X)).structured_input_signature[0][0]) \
        .startswith("DatasetSpec(TensorSpec(shape=(), dtype=tfn.float32")


def test_an_error_in_a_compiled_producer_names_the_map_functions_line():
    def bad(x):
        return tf.gather(tf.constant([1.0, 2.0]), tf.cast(x, tf.int32))  # the user's line
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices = 3 is not in \[0, 2\)(.|\n)*test_data.py:"
                                                             r"\d+(.|\n)*tf.gather"):
        folded(tf.data.Dataset.from_tensor_slices(X).map(bad))
    # the producer's error channel is clear again: the next call runs
    check_compiled(tf.data.Dataset.from_tensor_slices(X[:2]).map(bad), [1.0, 2.0])


def test_loops_left_by_break_then_looped_again(monkeypatch):
    from tfn.data import native
    freed = []
    monkeypatch.setattr(native._Call, "__del__", lambda self, old=native._Call.__del__: freed.append(
        int(self._words[native.DATASET_PENDING])) or old(self))

    @tf.function
    def heads(ds):
        s = tf.constant(0.0)
        for x in ds:
            s += tf.reduce_sum(x)
            if s > 10.0:
                break
        for x in ds:
            s = s * 100.0 + tf.reduce_sum(x)
            break
        return s
    rows2 = X.reshape(5, 2)
    first = 0.0
    for r in rows2:
        first += float(r.sum())
        if first > 10.0:
            break
    expected = first * 100.0 + float(rows2[0].sum())
    for ds in (tf.data.Dataset.from_tensor_slices(rows2), tf.data.Dataset.from_generator(
            lambda: iter(rows2), output_signature=tf.TensorSpec((2,), tf.float32))):
        assert float(heads(ds)) == pytest.approx(expected)
    import gc
    gc.collect()
    assert freed[-2:] == [1, 1]  # each call's last loop left an element untaken, freed after the call


def test_nested_loops_over_one_python_pulled_dataset_argument():
    @tf.function
    def pairs(ds):
        s = tf.constant(0.0)
        for a in ds:
            for b in ds:
                s = s * 1.01 + a * b
        return s
    xs = X[X > 10.0]
    expected = np.float32(0.0)
    for a in xs:
        for b in xs:
            expected = expected * np.float32(1.01) + a * b
    for ds in (tf.data.Dataset.from_tensor_slices(xs), tf.data.Dataset.from_tensor_slices(X).filter(
            lambda v: v > 10.0)):
        assert float(pairs(ds)) == pytest.approx(float(expected), rel=1e-5)


# --- iterators ----------------------------------------------------------------------------------------------------

def test_next_on_an_iterator_argument_advances_at_every_call():
    @tf.function
    def consume(iterator):
        return next(iterator)
    it = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3]))
    assert [int(consume(it)) for _ in range(3)] == [1, 2, 3]
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        consume(it)
    with pytest.raises(StopIteration):
        next(it)


def test_get_next_and_optional():
    it = iter(tf.data.Dataset.from_tensor_slices([7]))
    opt = it.get_next_as_optional()
    assert bool(opt.has_value()) and int(opt.get_value()) == 7
    assert not bool(it.get_next_as_optional().has_value())
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()

    @tf.function
    def maybe(iterator):
        o = iterator.get_next_as_optional()
        return o.has_value(), o.get_value()
    it = iter(tf.data.Dataset.from_tensor_slices([4, 5]))
    assert [(bool(h), int(v)) for h, v in (maybe(it), maybe(it))] == [(True, 4), (True, 5)]
    assert not bool(maybe(it)[0])


# --- errors -------------------------------------------------------------------------------------------------------

def _failing():
    yield 1
    yield 2
    raise KeyError("bad record")  # the user's line


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_generator_error_surfaces_after_the_elements_before_it(prefetch):
    ds = tf.data.Dataset.from_generator(_failing, output_signature=tf.TensorSpec((), tf.int32))
    if prefetch:
        ds = ds.prefetch(4)
    got = []
    with pytest.raises(KeyError, match="bad record") as info:
        for x in ds:
            got.append(int(x))
    assert got == [1, 2]
    assert any(e.name == "_failing" for e in info.traceback)


def test_a_generator_error_in_a_function_is_raised_by_the_call():
    ds = tf.data.Dataset.from_generator(_failing, output_signature=tf.TensorSpec((), tf.int32))
    with pytest.raises(KeyError, match="bad record") as info:
        folded(ds)
    assert any(e.name == "_failing" for e in info.traceback)


def test_user_errors():
    with pytest.raises(ValueError, match="same first dimension"):
        tf.data.Dataset.from_tensor_slices((X, Y[:3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch_size"):
        tf.data.Dataset.range(3).batch(0)
    with pytest.raises(TypeError, match="output_signature"):
        tf.data.Dataset.from_generator(lambda: [1])
    with pytest.raises(ValueError, match="incompatible"):
        rows(tf.data.Dataset.from_generator(lambda: [[1, 2]], output_signature=tf.TensorSpec((3,), tf.int32)))


def test_a_python_pipeline_built_in_a_function_on_its_arguments_runs_anew_at_every_call():
    @tf.function
    def f(x):
        s = tf.constant(0.0)
        for v in tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > 0.0).map(lambda t: t * 2.0):
            s = s * 1.5 + v
        return s
    for xs in (X - 4.0, X[:5] - 4.0, -X):
        np.testing.assert_allclose(float(f(tf.constant(xs))), fold(2.0 * xs[xs > 0.0]), rtol=1e-6)

    @tf.function
    def g(x, y):
        ds = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(x), tf.data.Dataset.from_tensor_slices(y)))
        ds = ds.shuffle(4, seed=3).batch(3).unbatch()
        s = tf.constant(0.0)
        n = tf.constant(0)
        for a, b in ds:
            s += a
            n += b
        return s, n
    s, n = g(tf.constant(X), tf.constant(Y))
    assert float(s) == pytest.approx(float(X.sum())) and int(n) == int(Y.sum())


def test_a_filter_using_the_enclosing_functions_tensor_runs_in_compiled_code():
    @tf.function
    def captured(x, threshold):
        acc = tf.constant(0.0, tf.float64)
        for v in tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > threshold).map(lambda t: t * threshold) \
                .filter(lambda t: t < 40.0):
            acc = acc * 1.5 + tf.cast(v, tf.float64)
        return acc
    for threshold in (4.0, 0.0, 100.0):
        v = X[X > threshold] * threshold
        assert float(captured(tf.constant(X), tf.constant(threshold))) == pytest.approx(fold(v[v < 40.0]))
    assert float(captured(tf.constant(X[:0]), tf.constant(1.0))) == 0.0
    assert captured.get_concrete_function(tf.constant(X), tf.constant(1.0)).graph.callbacks == []

    @tf.function
    def zipped(x, threshold):
        s = tf.constant(0.0)
        pairs = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(x), tf.data.Dataset.from_tensors(threshold)
                                     .repeat()))
        for v, _ in pairs.filter(lambda t, th: t > th):
            s += v
        return s
    assert float(zipped(tf.constant(X), tf.constant(4.0))) == pytest.approx(float(X[X > 4.0].sum()))


def test_a_map_using_the_enclosing_functions_tensors_is_traced_into_it():
    traces = []

    @tf.function
    def f(x, scale, shift):
        traces.append(1)
        s = tf.constant(0.0)
        ds = tf.data.Dataset.from_tensor_slices(x).map(lambda t: t * scale)  # elementwise: once per batch
        ds = tf.data.Dataset.zip((ds, tf.data.Dataset.range(100))).map(
            lambda t, i: t - tf.reduce_sum(shift) * tf.cast(i, tf.float32))  # one element at a time
        for b in ds.skip(1).batch(4):
            s = s * 2.0 + tf.reduce_sum(b)
        return s

    def expected(xs, scale, shift):
        v = (xs * scale - shift.sum() * np.arange(len(xs)))[1:]
        acc = 0.0
        for i in range(0, len(v), 4):
            acc = acc * 2.0 + float(v[i:i + 4].sum())
        return acc
    shift = np.array([0.5, 0.25], np.float32)
    for xs, scale in ((X, 3.0), (X[::-1].copy(), -1.0)):
        got = f(tf.constant(xs), tf.constant(scale), tf.constant(shift))
        assert float(got) == pytest.approx(expected(xs, scale, shift), rel=1e-6)
    assert len(traces) == 1
    assert f.get_concrete_function(tf.constant(X), tf.constant(1.0), tf.constant(shift)).graph.callbacks == []


def test_a_map_using_the_enclosing_functions_tensors_in_a_pipeline_pulled_through_python_says_what_to_do():
    @tf.function
    def f(x, scale):
        s = tf.constant(0.0)
        for v in tf.data.Dataset.from_tensor_slices(x).map(lambda t: t * scale).shuffle(3):
            s += v
        return s
    with pytest.raises(TypeError, match=r"Dataset.map: the function uses 'scale:0', a tensor of the enclosing"
                                        r"(.|\n)*_ShuffleDataset(.|\n)*Dataset.zip(.|\n)*test_data.py:\d+"):
        f(tf.constant(X), tf.constant(2.0))

    @tf.function
    def g(x, threshold):
        s = tf.constant(0.0)
        for b in tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > threshold).batch(2):
            s += tf.reduce_sum(b)
        return s
    with pytest.raises(TypeError, match=r"Dataset.filter: the function uses 'threshold:0'(.|\n)*_BatchDataset"):
        g(tf.constant(X), tf.constant(2.0))


def test_a_shuffle_built_in_a_function_repeats_its_seeded_order_at_every_call():
    @tf.function
    def order(x):
        acc = tf.constant(0.0, tf.float64)
        for v in tf.data.Dataset.from_tensor_slices(x).shuffle(10, seed=7):
            acc = acc * 1.5 + tf.cast(v, tf.float64)
        return acc
    expected = fold(rows(tf.data.Dataset.from_tensor_slices(X).shuffle(10, seed=7)))
    assert float(order(tf.constant(X))) == expected and float(order(tf.constant(X))) == expected


def test_a_dataset_from_the_enclosing_scope_and_reduce_in_a_function():
    ds = tf.data.Dataset.from_tensor_slices(Y).map(lambda y: y * 3)

    @tf.function
    def f():
        s = tf.constant(0)
        for v in ds:
            s = s * 2 + v
        return s, ds.reduce(tf.constant(0), lambda acc, w: acc + w)
    expected = 0
    for v in Y * 3:
        expected = expected * 2 + int(v)
    s, r = f()
    assert int(s) == expected and int(r) == int(np.sum(Y * 3))


# --- iterators made inside a function ----------------------------------------------------------------------------

def test_iter_inside_a_function_starts_over_at_every_call():
    ds = tf.data.Dataset.from_tensor_slices(Y).map(lambda y: y * 3)

    @tf.function
    def first_two():
        it = iter(ds)
        a = next(it)
        return a, it.get_next()
    for _ in range(2):
        a, b = first_two()
        assert (int(a), int(b)) == (0, 3)


@pytest.mark.parametrize("make", [
    lambda: tf.data.Dataset.from_tensor_slices(X),
    lambda: tf.data.Dataset.from_tensor_slices(X).filter(lambda x: x > 2.0),
    lambda: tf.data.Dataset.from_generator(lambda: iter(X), output_signature=tf.TensorSpec((), tf.float32)),
], ids=["indexable", "filter", "generator"])
def test_iter_of_a_dataset_argument_then_next_and_for_over_the_rest(make):
    @tf.function
    def head_and_rest(ds):
        it = iter(ds)
        head = next(it)
        acc = tf.constant(0.0, tf.float64)
        for v in it:
            acc = acc * 1.5 + tf.cast(v, tf.float64)
        return head, acc
    expected = rows(make())
    for _ in range(2):
        head, acc = head_and_rest(make())
        assert float(head) == expected[0]
        assert float(acc) == fold(expected[1:])


def test_iter_inside_a_function_over_a_pipeline_on_its_argument():
    @tf.function
    def f(x):
        it = iter(tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > 1).map(lambda t: t * 2))
        return next(it), it.get_next_as_optional().has_value()
    v, more = f(tf.constant([0, 3, 1]))
    assert int(v) == 6 and not bool(more)
    v, more = f(tf.constant([5, 0, 7]))
    assert int(v) == 10 and bool(more)


def test_next_past_the_end_inside_a_function_raises_out_of_range():
    @tf.function
    def third(ds):
        it = iter(ds)
        next(it)
        next(it)
        return next(it)
    assert int(third(tf.data.Dataset.from_tensor_slices([1, 2, 3]))) == 3
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        third(tf.data.Dataset.from_tensor_slices([1, 2]))


def test_an_unconverted_python_loop_over_a_dataset_in_a_function_stops_with_an_error(monkeypatch):
    from tfn.data import traced_iterator
    monkeypatch.setattr(traced_iterator, "RUNAWAY_NEXT_CALLS", 20)

    @tf.function(autograph=False)
    def endless(ds):
        s = tf.constant(0.0)
        for x in ds:  # plain Python: TF's iterator would not end either
            s += x
        return s
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match=r"21 times(.|\n)*test_data.py:\d+"):
        endless(tf.data.Dataset.from_tensor_slices(X))


def test_an_eager_iterator_closed_over_by_a_function_is_an_error_not_a_constant():
    """next() on an iterator made outside the function, while it is traced, pulled one element into the trace as a
    constant: every call returned that first element. It raises instead; passed as an argument it advances."""
    it = iter(tf.data.Dataset.range(3))

    @tf.function
    def closed_over():
        return next(it)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="Pass the iterator to the tfn.function"):
        closed_over()
    assert int(next(it)) == 0  # nothing was pulled

    @tf.function
    def passed(i):
        return next(i)
    assert [int(passed(it)) for _ in range(2)] == [1, 2]
    with pytest.raises(tf.errors.OutOfRangeError):
        passed(it)
