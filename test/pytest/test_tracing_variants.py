"""Tracing beyond the guide's examples: nested structures, keyword-only and default arguments, namedtuples,
ragged Python lists, unknown ranks, many shapes under reduce_retracing, graphs of traces."""
import collections
import warnings

import numpy as np
import pytest

import tfn as tf
from tfn.tracing.polymorphic import RetracingWarning

Pair = collections.namedtuple("Pair", "first second")


def test_nested_structures_in_and_out():
    @tf.function
    def f(inputs, *, scale, offset=1.0):
        a, b = inputs["pair"]
        return {"sum": (a + b) * scale + offset, "parts": [a, Pair(b, None)], "n": len(inputs["list"])}

    args = {"pair": Pair(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])), "list": [1, 2, 3]}
    out = f(args, scale=2.0)
    assert sorted(out) == ["n", "parts", "sum"]
    assert out["sum"].numpy().tolist() == [9.0, 13.0]
    assert isinstance(out["parts"][1], Pair) and out["parts"][1].second is None
    assert out["n"].numpy() == 3
    assert f(args, scale=2.0, offset=0.0)["sum"].numpy().tolist() == [8.0, 12.0]
    f(args, scale=2.0)  # same types: no retrace
    assert len(f.experimental_trace_log()) == 2
    c = f.get_concrete_function(args, scale=2.0)
    assert "scale (KEYWORD_ONLY): Literal[2.0]" in str(c)
    assert ("inputs (POSITIONAL_OR_KEYWORD): Dict[['list', List[Literal[1], Literal[2], Literal[3]]], ['pair', "
            "Pair[") in str(c)
    assert ("Output Type:\n  Dict[['n', TensorSpec(shape=(), dtype=tfn.int32, name=None)], ['parts', List[TensorSpec("
            "shape=(2,), dtype=tfn.float32, name=None), Pair[TensorSpec(shape=(2,), dtype=tfn.float32, name=None), "
            "Literal[None]]]], ['sum', TensorSpec(shape=(2,), dtype=tfn.float32, name=None)]]") in str(c)
    with pytest.raises(TypeError, match="missing a required argument: 'scale'"):
        f(args)


def test_defaults_and_positional_keyword_calls_share_a_trace():
    @tf.function(autograph=False)  # (AutoGraph does not convert a default that calls tfn yet: left to A2)
    def f(x, y=tf.constant(2), z=3):  # noqa: B008
        return x * y + z

    assert f(tf.constant(1)).numpy() == 5
    assert f(tf.constant(1), tf.constant(2)).numpy() == 5
    assert f(x=tf.constant(1), z=3).numpy() == 5
    assert len(f.experimental_trace_log()) == 1
    assert f(tf.constant(1), z=4).numpy() == 6
    assert len(f.experimental_trace_log()) == 2


def test_ragged_python_lists_trace_per_value_and_convert_under_a_signature():
    @tf.function
    def total(rows):
        return tf.add_n([tf.reduce_sum(tf.constant(r)) for r in rows]) if hasattr(tf, "add_n") else \
            sum(tf.reduce_sum(tf.constant(r)) for r in rows)

    assert total([[1, 2], [3]]).numpy() == 6
    assert total([[1], [2, 3, 4]]).numpy() == 10
    assert len(total.experimental_trace_log()) == 2  # Python values are part of the type

    @tf.function(input_signature=[[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32)]])
    def concat_rows(rows):
        return tf.concat(rows, 0)

    assert concat_rows([[1, 2], [3]]).numpy().tolist() == [1, 2, 3]
    assert concat_rows([tf.constant([4]), [5, 6, 7]]).numpy().tolist() == [4, 5, 6, 7]
    assert len(concat_rows.experimental_trace_log()) == 1
    with pytest.raises(TypeError, match="Can not cast"):
        concat_rows([[1, 2]])


def test_reduce_retracing_generalises_over_many_shapes_and_ranks():
    @tf.function(reduce_retracing=True)
    def f(x):
        return x * 2

    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for n in range(1, 30):
            assert f(tf.zeros([n])).shape == (n,)
        for n in range(1, 10):
            assert f(tf.zeros([n, 3])).shape == (n, 3)
    log = f.experimental_trace_log()
    assert len(log) == 3  # (1,); (None,); a new rank generalises to unknown rank, which serves every later call
    assert "to TensorSpec(shape=(None,)" in log[1]
    assert "to TensorSpec(shape=<unknown>" in log[2]
    assert f(tf.zeros([2, 3, 4])).shape == (2, 3, 4)
    assert len(f.experimental_trace_log()) == 3
    assert sorted(f._concretes[-1].specializations) == [(0,), (2,), (3,)]


def test_unknown_rank_input_signature_and_dispatch():
    @tf.function(input_signature=(tf.TensorSpec(None, tf.int32), tf.TensorSpec([2], tf.int32)))
    def f(x, y):
        return x[0] + 1, tf.reduce_sum(y), tf.zeros([2])

    c = f.get_concrete_function()
    assert str(c.function_type) == (
        "(x: TensorSpec(shape=<unknown>, dtype=tfn.int32, name=None), y: TensorSpec(shape=(2,), dtype=tfn.int32, "
        "name=None)) -> Tuple[TensorSpec(shape=<unknown>, dtype=tfn.int32, name=None), TensorSpec(shape=(), "
        "dtype=tfn.int32, name=None), TensorSpec(shape=(2,), dtype=tfn.float32, name=None)]")
    a, b, z = f(tf.constant([5, 6]), tf.constant([1, 2]))
    assert (a.numpy(), b.numpy(), z.numpy().tolist()) == (6, 3, [0.0, 0.0])
    a, _, _ = f(tf.constant([[5, 6], [7, 8]]), [1, 2])
    assert a.numpy().tolist() == [6, 7]
    assert sorted(c.specializations) == [(1,), (2,)]  # rank 0 cannot index: the first trace is at rank 1
    assert len(f.experimental_trace_log()) == 1
    with pytest.raises(TypeError, match="Can not cast"):
        f(tf.constant([1.0]), tf.constant([1, 2]))
    # The inference_fn of an unranked trace dispatches on the ranks of its flat inputs.
    assert c.inference_fn(tf.constant([[1], [2]]), tf.constant([1, 1]))[0].numpy().tolist() == [2]

    @tf.function
    def g(x):
        return x + 1

    ranked = g.get_concrete_function(tf.TensorSpec([None, None], tf.float32))
    unranked = g.get_concrete_function(tf.TensorSpec(None, tf.float32))
    assert g.get_concrete_function(tf.TensorSpec([2, 2], tf.float32)) is ranked  # the most specific fit
    assert g.get_concrete_function(tf.TensorSpec([2], tf.float32)) is unranked
    g(tf.zeros([2, 2]))
    g(tf.zeros([2]))
    assert sorted(unranked.specializations) == [(0,), (1,)] and ranked._executable is not None
    assert len(g.experimental_trace_log()) == 2


def test_unknown_rank_outputs_follow_dependencies():
    @tf.function(input_signature=(tf.TensorSpec(None, tf.float32),))
    def f(x):
        return {"y": tf.reduce_sum(x) * 0 + tf.ones([3]), "c": tf.ones([2]), "x": x * 2}

    out = f.get_concrete_function().function_type.output
    assert repr(out) == ("Dict[['c', TensorSpec(shape=(2,), dtype=tfn.float32, name=None)], ['x', TensorSpec("
                         "shape=<unknown>, dtype=tfn.float32, name=None)], ['y', TensorSpec(shape=<unknown>, "
                         "dtype=tfn.float32, name=None)]]")
    assert f(np.ones([2, 2], np.float32))["x"].numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_graph_nodes_and_operations():
    @tf.function
    def f(x, d):
        y = tf.where(x % 2 == 0, x // 2, 3 * x + 1)
        parts = tf.unstack(x)
        return {"y": y, "s": tf.reduce_sum(d["k"])}, parts[1]

    c = f.get_concrete_function(tf.constant([1, 2]), {"k": tf.constant([1.0])})
    nodes = c.graph.as_graph_def().node
    by_name = {n.name: n for n in nodes}
    assert [n.name for n in nodes[:2]] == ["x", "d"] and nodes[0].op == "Placeholder" and nodes[0].input == []
    assert by_name["select"].op == "SelectV2" and by_name["select"].input == ["equal", "floordiv", "add"]
    assert by_name["floormod"].input[0] == "x" and by_name["reduce_sum"].input == ["d"]
    assert [(n.name, n.input) for n in nodes if n.op == "Identity"] == [
        ("Identity", ["reduce_sum"]), ("Identity_1", ["select"]), ("Identity_2", ["unstack:1"])]
    ops = c.graph.get_operations()
    assert [o.name for o in ops] == [n.name for n in nodes]
    unstack = next(o for o in ops if o.type == "Unpack")
    assert [t.name for t in unstack.outputs] == ["unstack:0", "unstack:1"] and unstack.inputs[0].name == "x:0"
    assert 'node {\n  name: "x"\n  op: "Placeholder"\n}' in str(c.graph.as_graph_def())
    out, second = c.inference_fn(tf.constant([3, 4]), tf.constant([2.0]))
    assert out["y"].numpy().tolist() == [10, 2] and second.numpy() == 4
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input #1\(zero-based\) was expected to be a float32 "
                       "tensor but is a int32 tensor"):
        c.inference_fn(tf.constant([3, 4]), tf.constant([2]))
    with pytest.raises(TypeError, match="takes 2 tensors"):
        c.inference_fn(tf.constant([3, 4]))


def test_graph_of_a_trace_with_control_flow():
    @tf.function
    def f(x, n):
        return tf.cond(n > 0, lambda: x * 2, lambda: x - 1)

    nodes = f.get_concrete_function(tf.constant(1.0), tf.constant(1)).graph.as_graph_def().node
    cond = [n for n in nodes if n.op not in ("Placeholder", "Const", "Identity")]
    assert any("x" in n.input for n in cond)  # the branch's read of x is an input of the control-flow node
    assert nodes[-1].op == "Identity"
