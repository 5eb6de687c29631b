"""tfn.map_fn: TF's docstring examples, eager = compiled (a tfn.while_loop over a TensorArray, fn traced once),
nested elems and results, a run-time number of slices, fn_output_signature, errors, eager gradients."""
import numpy as np
import pytest

import tfn


def test_tf_docstring_examples_eager_and_compiled():
    for run in (lambda f, *a, **k: f(*a, **k), lambda f, *a, **k: tfn.function(lambda: f(*a, **k))()):
        assert run(tfn.map_fn, fn=lambda t: tfn.range(t, t + 3), elems=tfn.constant([3, 5, 2]),
                   fn_output_signature=tfn.TensorSpec([3], tfn.int32)).numpy().tolist() == \
            [[3, 4, 5], [5, 6, 7], [2, 3, 4]]
        out = run(tfn.map_fn, lambda x: x[0] + x[1], (tfn.constant([1, 2, 3]), tfn.constant([-1, 1, -1])),
                  fn_output_signature=tfn.int32)
        assert out.numpy().tolist() == [0, 3, 2]
        a, b = run(tfn.map_fn, lambda x: (x, -x), tfn.constant([3, 5, 2]), fn_output_signature=(tfn.int32, tfn.int32))
        assert a.numpy().tolist() == [3, 5, 2] and b.numpy().tolist() == [-3, -5, -2]
        cast = run(tfn.map_fn, lambda t: tfn.cast(t, tfn.int64), tfn.constant([1.5, 2.5]),
                   fn_output_signature=tfn.TensorSpec([], tfn.int64))
        assert cast.dtype is tfn.int64 and cast.numpy().tolist() == [1, 2]


def test_run_time_count_traces_fn_once():
    traced = []

    def fn(row):
        traced.append(row.shape.as_list())
        return tfn.reduce_sum(row * row)
    f = tfn.function(lambda e: tfn.map_fn(fn, e), input_signature=[tfn.TensorSpec([None, 3], tfn.float64)])
    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(f(tfn.constant(x)).numpy(), (x * x).sum(1))
    np.testing.assert_array_equal(f(tfn.constant(x[:1])).numpy(), (x[:1] ** 2).sum(1))
    assert all(s == [3] for s in traced) and len(traced) <= 2  # (a loop body may be traced twice, never per row)


def test_eager_gradient():
    x = tfn.constant([1.0, 2.0, 3.0])
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.map_fn(lambda t: t * t, x))
    assert tape.gradient(y, x).numpy().tolist() == [2, 4, 6]


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="fn returned a int32 tensor where float32 was expected"):
        tfn.map_fn(lambda t: tfn.cast(t, tfn.int32), tfn.constant([1.0]))
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tfn.map_fn(lambda t: t, tfn.constant(1.0))
    with pytest.raises(ValueError, match="different first dims"):
        tfn.map_fn(lambda t: t[0], (tfn.ones([2]), tfn.ones([3])))
    with pytest.raises(TypeError, match="fn must be callable"):
        tfn.map_fn(3, tfn.ones([2]))
    with pytest.raises(ValueError, match=r"(?s)shape \(None,\), not fully known when traced.*test_map_fn.py"):
        tfn.function(lambda e: tfn.map_fn(lambda t: tfn.range(t), e))(tfn.constant([1, 2]))
    with pytest.raises(ValueError, match="fn returned 2 tensor"):
        tfn.function(lambda e: tfn.map_fn(lambda t: (t, t), e))(tfn.ones([2]))
