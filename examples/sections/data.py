"""The guide's tf.data parts, run by tfn: a loop over a dataset compiles to one loop, whatever the data's size,
and a tf.data.Iterator passed to a function advances at every call. Then what TF's tf.data also does: datasets
and iterators made inside a function, map and filter using the function's tensors, datasets as trace types, and
a cache in files."""
import os
import tempfile

from common import section

import tfn as tf

section("Looping over Python data: Python lists unroll, datasets do not")


def measure_graph_size(f, *args):
    g = f.get_concrete_function(*args).graph
    print("{}({}) contains {} nodes in its graph".format(
        f.__name__, ', '.join(map(str, args)), len(g.as_graph_def().node)))


@tf.function
def train(dataset):
    loss = tf.constant(0)
    for x, y in dataset:
        loss += tf.abs(y - x)  # Some dummy computation.
    return loss


small_data = [(1, 1)] * 3
big_data = [(1, 1)] * 10
measure_graph_size(train, small_data)
measure_graph_size(train, big_data)

measure_graph_size(train, tf.data.Dataset.from_generator(
    lambda: small_data, (tf.int32, tf.int32)))
measure_graph_size(train, tf.data.Dataset.from_generator(
    lambda: big_data, (tf.int32, tf.int32)))

# As in TF, every op on the list's numbers is a node of the graph (11 and 32 nodes, the guide's counts): the
# unrolled Python loop grows the graph with the list; the dataset loop stays one loop.

section("Using Python iterators and generators: a Python iterator advances only while tracing")


@tf.function
def buggy_consume_next(iterator):
    tf.print("Value:", next(iterator))


iterator = iter([1, 2, 3])
buggy_consume_next(iterator)
# This reuses the first value from the iterator, rather than consuming the next value.
buggy_consume_next(iterator)
buggy_consume_next(iterator)

section("Using Python iterators and generators: a tf.data.Iterator advances at every call")


@tf.function
def good_consume_next(iterator):
    # This is ok, iterator is a tf.data.Iterator
    tf.print("Value:", next(iterator))


ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
iterator = iter(ds)
good_consume_next(iterator)
good_consume_next(iterator)
good_consume_next(iterator)

section("Datasets and iterators made inside a function: made anew at every call")


@tf.function
def positives_doubled(x):
    total = tf.constant(0.0)
    for v in tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > 0.0).map(lambda t: t * 2.0):
        total += v
    it = iter(tf.data.Dataset.from_tensor_slices(x))
    return total, next(it)  # the first element at every call: the iterator is new


print(positives_doubled(tf.constant([1.0, -2.0, 3.0])))
print(positives_doubled(tf.constant([-1.0, 5.0])))

section("Dataset.map and filter using the function's own tensors: traced into the function")


@tf.function
def scaled_total(x, low, scale):
    total = tf.constant(0.0)
    for v in tf.data.Dataset.from_tensor_slices(x).filter(lambda t: t > low).map(lambda t: t * scale):
        total += v
    return total


print(scaled_total(tf.constant([1.0, 2.0, 3.0]), tf.constant(1.5), tf.constant(10.0)))
print(scaled_total(tf.constant([1.0, 2.0, 3.0]), tf.constant(0.0), tf.constant(-1.0)))

section("Datasets as trace types: pipelines with one element spec share a trace")


@tf.function
def total(dataset):
    print("Tracing for", dataset)
    s = tf.constant(0.0)
    for x in dataset:
        s += x
    return s


print(total(tf.data.Dataset.from_tensor_slices([1.0, 2.0])))
print(total(tf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(lambda x: x * 10.0)))
print(total(tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32))))
print(total(tf.data.Dataset.from_generator(lambda: [0.5, 0.25], output_signature=tf.TensorSpec((), tf.float32))))
# One trace for all four, as in TF: the dataset is an argument naming its producer, which the compiled loop calls
# for each element. An in-memory pipeline's producer is its own compiled code (the map traced once, compiled), a
# generator's pulls from Python.
print("traces:", total.experimental_get_tracing_count())

section("Dataset.cache(filename): the first full pass writes files, later passes read them")
calls = []


def slow_source():
    calls.append(1)
    yield from [1, 2, 3]


with tempfile.TemporaryDirectory() as folder:
    cached = tf.data.Dataset.from_generator(slow_source, output_signature=tf.TensorSpec((), tf.int32))
    cached = cached.cache(os.path.join(folder, "cache"))
    print([int(v) for v in cached.as_numpy_iterator()], [int(v) for v in cached.as_numpy_iterator()])
    print("generator calls:", len(calls), "| index written:", os.path.exists(os.path.join(folder, "cache.index")))

section("More transformations: padded_batch, interleave, concatenate, scan, sampling")
lengths = tf.data.Dataset.range(1, 5).map(lambda n: tf.fill([n], n))
for batch in lengths.padded_batch(2):
    print(batch.numpy().tolist())
print([int(v) for v in tf.data.Dataset.range(1, 4).interleave(
    lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2, block_length=2).as_numpy_iterator()])
running = tf.data.Dataset.range(5).concatenate(tf.data.Dataset.range(10, 12)).scan(
    tf.constant(0, tf.int64), lambda total, x: (total + x, total + x))
print("running sums:", [int(v) for v in running.as_numpy_iterator()])
print("summed in a tf.function:", int(total(running.map(lambda v: tf.cast(v, tf.float32)))))
mixed = tf.data.Dataset.sample_from_datasets(
    [tf.data.Dataset.from_tensors("a").repeat(), tf.data.Dataset.from_tensors("b").repeat()], [0.75, 0.25], seed=7)
print(b"".join(mixed.take(24).as_numpy_iterator()).decode())
