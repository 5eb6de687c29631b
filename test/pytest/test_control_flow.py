"""tfn.cond, tfn.while_loop and tfn.TensorArray: eager and compiled values, error messages, no leaks."""
import collections
import os
import re

import guide
import numpy as np
import pytest

import tfn
from tfn.control_flow.cond import build_if
from tfn.control_flow.while_loop import build_while

HERE = os.path.basename(__file__)
Pair = collections.namedtuple("Pair", "a b")


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _line_of(marker):
    """The line number of this file's line containing `marker`."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "_line_of" not in line)


def _trace_error(fn, *args):
    """The exception tracing `fn` raises."""
    with pytest.raises(Exception) as info:
        tfn.function(fn).get_concrete_function(*args)
    return info.value


# ---- tfn.cond ------------------------------------------------------------------------------------------

def _conds(x, p):
    a = tfn.cond(p, lambda: x * 2.0, lambda: -x)
    b = tfn.cond(p, lambda: {"s": tfn.reduce_sum(x), "t": (x, 1)}, lambda: {"s": 0.0, "t": (x + 1.0, 2)})
    c = tfn.cond(x[0] > 1.0, lambda: x > 0.0, lambda: x < 0.0)  # bool results
    d = tfn.cond(p, lambda: tfn.cond(x[1] > 0.0, lambda: x, lambda: x * 3.0), lambda: x[:1])  # nested, shapes join
    return a, b, c, d


@pytest.mark.parametrize("p", [True, False])
def test_cond_eager_equals_compiled(p):
    x, pred = tfn.constant([1.5, -2.0]), tfn.constant(p)
    f = tfn.function(_conds)
    for e, c in zip(tfn.nest.flatten(_conds(x, pred)), tfn.nest.flatten(f(x, pred))):
        assert tfn.constant(e).dtype == tfn.constant(c).dtype
        np.testing.assert_allclose(np.asarray(c), np.asarray(e))
    ir = f.experimental_get_compiler_ir(x, pred)()
    assert ir.count("scf.if") == 5 and "tensor<?xf32>" in ir  # d's branches have shapes (2,) and (1,)
    assert f(x, pred)[3].shape == ((2,) if p else (1,))


def test_cond_traces_both_branches_once():
    traced = []

    @tfn.function
    def f(p):
        return tfn.cond(p, lambda: traced.append("t") or 1, lambda: traced.append("f") or 2)

    assert f(tfn.constant(True)).numpy() == 1 and f(tfn.constant(False)).numpy() == 2
    assert traced == ["t", "f"]


def test_cond_eager_python_bool_is_an_error():
    with pytest.raises(TypeError, match="pred must not be a Python bool"):
        tfn.cond(True, lambda: 1, lambda: 2)
    assert tfn.cond(tfn.constant(False), lambda: 1, lambda: 2) == 2


def test_cond_errors_name_the_output_and_line():
    x = tfn.constant(1.0)
    e = _trace_error(lambda x: tfn.cond(x > 0, lambda: x, lambda: tfn.cast(x, tfn.int32)), x)  # line: dtype
    assert isinstance(e, TypeError)
    assert "'output' has dtype float32 in the true_fn, but dtype int32 in the false_fn" in str(e)
    assert f"{HERE}:{_line_of('# line: dtype')}" in str(e)
    e = _trace_error(lambda x: tfn.cond(x > 0, lambda: (x, x), lambda: x), x)
    assert isinstance(e, ValueError) and "'output' must have the same nested structure" in str(e)
    e = _trace_error(lambda x: tfn.cond(x > 0, lambda: x, lambda: tfn.reshape(x, [1])), x)
    assert isinstance(e, ValueError) and "shape () in the true_fn, but shape (1,) in the false_fn" in str(e)
    e = _trace_error(lambda x: tfn.cond(x, lambda: x, lambda: x), x)
    assert isinstance(e, TypeError) and "must be a bool tensor, got dtype float32" in str(e)
    e = _trace_error(lambda x: tfn.cond(tfn.reshape(x, [1]) > 0, lambda: x, lambda: x), x)
    assert isinstance(e, ValueError) and "must be a scalar" in str(e)


def test_tensor_from_a_branch_is_inaccessible_outside():
    def f(x):
        box = []
        tfn.cond(x > 0, lambda: box.append(x + 1.0) or x, lambda: x)
        return box[0] * 2.0  # line: leak
    e = _trace_error(f, tfn.constant(1.0))
    assert isinstance(e, tfn.errors.InaccessibleTensorError) and isinstance(e, ValueError)
    assert "defined in the true_fn of a tfn.cond" in str(e) and f"{HERE}:{_line_of('# line: leak')}" in str(e)


# ---- AutoGraph's builders --------------------------------------------------------------------------------

def test_build_if_and_build_while_values():
    @tfn.function
    def f(x, n):
        y, z = build_if(x > 0, lambda: (x, {"k": x * 2.0}), lambda: (-x, {"k": 0.0}), ("y", "z"))
        i, acc = build_while(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + y), (0, z["k"]), ("i", "acc"))
        return y, z, i, acc

    y, z, i, acc = f(tfn.constant(2.0), tfn.constant(3))
    assert (y.numpy(), z["k"].numpy(), i.numpy(), acc.numpy()) == (2.0, 4.0, 3, 10.0)
    y, z, i, acc = f(tfn.constant(-1.0), tfn.constant(0))
    assert (y.numpy(), z["k"].numpy(), i.numpy(), acc.numpy()) == (1.0, 0.0, 0, 0.0)
    assert build_if(True, lambda: (1,), lambda: (2,), ("a",)) == (1,)
    assert build_while(lambda i: i < 3, lambda i: (i + 1,), (0,), ("i",)) == (3,)


def test_builder_errors_name_the_variable_and_the_given_line():
    x = tfn.constant(1.0)
    where = ("user.py", 42, 5)  # (file, line, col); no source to show
    e = _trace_error(lambda x: build_if(x > 0, lambda: (x,), lambda: (tfn.constant(1),), ("y",), where), x)
    assert str(e) == ("'y' has dtype float32 in the main branch, but dtype int32 in the else branch\n"
                      "  in tfn.function '<lambda>' at user.py:42")
    e = _trace_error(lambda x: build_while(lambda v: v < 3.0, lambda v: (tfn.cast(v, tfn.int32),), (x,), ("x",), where),
                     x)
    assert isinstance(e, TypeError)
    assert str(e).startswith("'x' has dtype float32 before the loop, but dtype int32 after one iteration\n")
    assert str(e).endswith("at user.py:42")

    def grow(v):
        return (tfn.concat([v, v], 0),)
    e = _trace_error(lambda x: build_while(lambda v: tfn.reduce_sum(v) < 9.0, grow, (tfn.reshape(x, [1]),), ("v",),
                                           where), x)
    assert isinstance(e, ValueError)
    assert "'v' has shape (1,) before the loop, but shape (2,) after one iteration" in str(e)
    assert "set_loop_options(shape_invariants=" in str(e)
    ok = tfn.function(lambda x: build_while(lambda v: tfn.reduce_sum(v) < 9.0, grow, (tfn.reshape(x, [1]),), ("v",),
                                            where, shape_invariants={"v": [None]})[0])
    assert ok(x).shape == (16,)
    e = _trace_error(lambda x: build_while(lambda v: v < 3.0, lambda v: ((v, v),), (x,), ("v",), where), x)
    assert isinstance(e, ValueError) and "'v' does not have the same nested structure after one iteration" in str(e)


# ---- tfn.while_loop ------------------------------------------------------------------------------------

def _loops(n, x):
    i, (s, p) = tfn.while_loop(lambda i, sp: i < n, lambda i, sp: (i + 1, (sp[0] + i, Pair(sp[1].a * 2.0, sp[1].b))),
                               (0, (0, Pair(x, 1))))
    (k,) = tfn.while_loop(lambda k: True, lambda k: (k + 1,), [0], maximum_iterations=4)
    grown = tfn.while_loop(lambda v: tfn.reduce_sum(v) < 20.0, lambda v: tfn.concat([v, v], 0), x,
                           shape_invariants=tfn.TensorShape([None]))
    return i, s, p, k, grown


def test_while_loop_eager_equals_compiled():
    n, x = tfn.constant(5), tfn.constant([1.0, 2.0])
    f = tfn.function(_loops)
    eager, compiled = _loops(n, x), f(n, x)
    assert isinstance(compiled[2], Pair) and compiled[2].b == 1  # a Python leaf passes through unchanged
    for e, c in zip(tfn.nest.flatten(eager), tfn.nest.flatten(compiled)):
        np.testing.assert_allclose(np.asarray(c), np.asarray(e))
    assert compiled[0].numpy() == 5 and compiled[1].numpy() == 10 and compiled[3].numpy() == 4
    assert compiled[4].shape == (16,)
    ir = f.experimental_get_compiler_ir(n, x)()
    assert ir.count("scf.while") == 3 and "tensor<?xf32>" in ir


def test_while_loop_errors():
    x = tfn.constant(1.0)
    e = _trace_error(lambda x: tfn.while_loop(lambda v: v < 3.0, lambda v: tfn.cast(v, tfn.int32), [x]), x)
    assert "'loop_vars[0]' has dtype float32 before the loop, but dtype int32 after one iteration" in str(e)
    grow = (lambda v: tfn.reduce_sum(v) < 3.0, lambda v: tfn.concat([v, v], 0))
    e = _trace_error(lambda x: tfn.while_loop(*grow, [tfn.reshape(x, [1])]), x)  # line: shape
    assert isinstance(e, ValueError)
    assert "'loop_vars[0]' has shape (1,) before the loop, but shape (2,) after one iteration" in str(e)
    assert "`shape_invariants` argument of tfn.while_loop" in str(e) and f"{HERE}:{_line_of('# line: shape')}" in str(e)
    e = _trace_error(lambda x: tfn.while_loop(lambda v: v < 3.0, lambda v: v + 1.0, [x], shape_invariants=[[2]]), x)
    assert isinstance(e, ValueError) and "shape invariant (2,) of 'loop_vars[0]' is not compatible" in str(e)
    e = _trace_error(lambda x: tfn.while_loop(lambda v: v, lambda v: v + 1.0, [x]), x)
    assert isinstance(e, TypeError) and "the loop condition must be a bool tensor" in str(e)


def test_dynamic_shapes_through_a_loop():
    @tfn.function(input_signature=[tfn.TensorSpec([None], tfn.float32), tfn.TensorSpec([], tfn.int32)])
    def f(x, n):
        _, y = tfn.while_loop(lambda i, y: i < n,
                              lambda i, y: (i + 1, tfn.concat([y, x * tfn.cast(i, tfn.float32)], 0)),
                              (0, x[:0]), shape_invariants=(None, [None]))
        return y

    np.testing.assert_array_equal(f(tfn.constant([1.0, 2.0]), tfn.constant(3)).numpy(), [0, 0, 1, 2, 2, 4])
    assert f(tfn.constant([1.0, 2.0, 3.0]), tfn.constant(0)).shape == (0,)


# ---- variables written in control flow --------------------------------------------------------------

def test_variable_writes_in_branches_and_loops_are_carried():
    v = tfn.Variable(0)
    w = tfn.Variable(1.0)

    @tfn.function
    def f(x):
        tfn.cond(x > 0, lambda: v.assign_add(1), lambda: v.assign_sub(1))
        return tfn.while_loop(lambda i: i < x, lambda i: (w.assign(w * 2.0), i + 1)[1], [0])

    f(tfn.constant(3))
    assert (v.numpy(), w.numpy()) == (1, 8.0)
    f(tfn.constant(-1))
    assert (v.numpy(), w.numpy()) == (0, 8.0)
    ir = f.experimental_get_compiler_ir(tfn.constant(3))()
    assert re.search(r"scf\.if .* -> \(tensor<i32>, tensor<i32>\)", ir) and "scf.while" in ir


# ---- TensorArray ------------------------------------------------------------------------------------

def test_tensor_array_eager():
    ta = tfn.TensorArray(tfn.float32, size=3).write(0, [1.0, 2.0]).write(2, [5.0, 6.0])
    np.testing.assert_array_equal(ta.stack().numpy(), [[1, 2], [0, 0], [5, 6]])
    np.testing.assert_array_equal(ta.read(2).numpy(), [5, 6])
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [[5, 6], [1, 2]])
    np.testing.assert_array_equal(ta.concat().numpy(), [1, 2, 0, 0, 5, 6])
    assert ta.size().numpy() == 3 and ta.element_shape == tfn.TensorShape([2])
    u = tfn.TensorArray(tfn.int32, size=2).unstack([[1, 2], [3, 4]]).scatter([1], [[7, 8]])
    np.testing.assert_array_equal(u.stack().numpy(), [[1, 2], [7, 8]])
    d = tfn.TensorArray(tfn.int32, size=0, dynamic_size=True)
    for i in range(5):
        d = d.write(i, i * 10)
    np.testing.assert_array_equal(d.stack().numpy(), [0, 10, 20, 30, 40])
    assert d.size().numpy() == 5


def test_tensor_array_errors():
    ta = tfn.TensorArray(tfn.float32, size=2)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="array is not resizeable and size is: 2"):
        ta.write(2, 1.0)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="TensorArray dtype is float32 but Op is trying to "
                                                              "write dtype int32"):
        ta.write(0, tfn.constant(1))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Tried to read from index 3 but array size is: 2"):
        ta.write(0, 1.0).read(3)
    with pytest.raises(ValueError, match="incompatible with the TensorArray's element shape"):
        ta.write(0, [1.0]).write(1, [1.0, 2.0])
    with pytest.raises(ValueError, match="Size must be provided"):
        tfn.TensorArray(tfn.float32)
    # more rows than a static size: TF's error (the rows past the size were kept, a 3-element stack of a size-2 array)
    for unstack in (lambda: ta.unstack(tfn.ones([3])).stack(), tfn.function(lambda: ta.unstack(tfn.ones([3])).stack())):
        with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of static size 2"):
            unstack()


def test_guide_dynamic_rnn_with_while_loop():
    ns = guide.run("control_flow.py").namespace  # dynamic_rnn written with tf.while_loop
    dynamic_rnn, rnn_step = ns["dynamic_rnn"], ns["running_sum"]
    x = np.random.default_rng(0).uniform(size=[2, 3, 4]).astype(np.float32)
    out = dynamic_rnn(rnn_step, tfn.constant(x), tfn.zeros([2, 4]))
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1), rtol=1e-6)
    ir = dynamic_rnn.experimental_get_compiler_ir(rnn_step, tfn.constant(x), tfn.zeros([2, 4]))()
    assert "tfn.tensor_scatter_update" in ir and ir.count("scf.while") == 1


def test_growing_tensor_array_in_a_loop():
    @tfn.function
    def f(n):
        ta = tfn.TensorArray(tfn.float32, size=0, dynamic_size=True, element_shape=[2])
        _, ta = tfn.while_loop(lambda i, ta: i < n,
                               lambda i, ta: (i + 1, ta.write(i, tfn.fill([2], tfn.cast(i, tfn.float32)))), (0, ta))
        return ta.stack(), ta.size(), ta.read(n - 1)

    stacked, size, last = f(tfn.constant(7))
    np.testing.assert_array_equal(stacked.numpy(), np.repeat(np.arange(7, dtype=np.float32)[:, None], 2, 1))
    assert size.numpy() == 7 and last.numpy().tolist() == [6.0, 6.0]
    assert f(tfn.constant(1))[0].shape == (1, 2)


def test_tensor_scatter_out_of_range_raises_at_run_time():
    f = tfn.function(tfn.tensor_scatter_nd_update)
    message = r"indices\[1\] = \[4\] does not index into shape \[4,2\]"
    with pytest.raises(tfn.errors.InvalidArgumentError, match=message):
        f(tfn.zeros([4, 2]), tfn.constant([[1], [4]]), tfn.ones([2, 2]))


# ---- memory --------------------------------------------------------------------------------------------

def test_loops_and_branches_do_not_leak():
    @tfn.function
    def f(n, x):
        i, y, z = tfn.while_loop(lambda i, y, z: i < n,
                                 lambda i, y, z: (i + 1, y * 0.5 + 1.0, tfn.concat([z, y[:1]], 0)),
                                 (0, x, x[:0]), shape_invariants=(None, None, [None]))
        a, b = tfn.cond(i > 3, lambda: (y, z), lambda: (y * 2.0, z[:1]))
        return a, b, i > 2

    x, n = tfn.constant(np.ones(256, np.float32)), tfn.constant(10)
    for _ in range(500):
        f(n, x)
    before = _rss_kb()
    for _ in range(20_000):
        f(n, x)
    grown = _rss_kb() - before
    # 20k calls x ~12 KiB of loop temporaries would be ~240 MB if they leaked.
    assert grown < 10_000, f"RSS grew by {grown} KiB"
