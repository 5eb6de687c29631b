"""tensor_scatter_nd_add, scatter_nd, unsorted_segment_sum and segment_sum: TF's docstring examples, repeated
indices, eager = compiled, dynamic dims, gradients by finite differences, ids out of range."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values
from opcheck import central_differences, check

import tfn

R = np.random.default_rng(9)
D = R.normal(size=(5, 3))
IDS = np.array([2, 0, 2, 1, 0], np.int32)


def _segments(d, ids, n):
    out = np.zeros((n,) + d.shape[1:])
    for row, i in zip(d, ids):
        if i >= 0:
            out[i] += row
    return out


CASES = {
    "tensor_scatter_nd_add": (lambda t, u: tfn.tensor_scatter_nd_add(t, [[1], [3], [1]], u),
                              lambda t, u: t + _segments(u, [1, 3, 1], 4), [D[:4], D[:3]]),
    "scatter_nd": (lambda u: tfn.scatter_nd([[0, 1], [2, 2], [0, 1]], u, [3, 3]),
                   lambda u: _segments(u[:, None], [1, 8, 1], 9).reshape(3, 3), [D[:3, 0]]),
    "unsorted_segment_sum": (lambda d: tfn.math.unsorted_segment_sum(d, IDS, 4), lambda d: _segments(d, IDS, 4), [D]),
    "unsorted_segment_sum_negative": (lambda d: tfn.math.unsorted_segment_sum(d, [0, -1, 1, -1, 0], 2),
                                      lambda d: _segments(d, [0, -1, 1, -1, 0], 2), [D]),
    "segment_sum": (lambda d: tfn.math.segment_sum(d, [0, 0, 1, 3, 3]), lambda d: _segments(d, [0, 0, 1, 3, 3], 4),
                    [D]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_eager_and_compiled(name):
    fn, ref, arrays = CASES[name]
    check_values(fn, ref, arrays)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name):
    fn, ref, arrays = CASES[name]
    check_gradients(fn, ref, arrays)


def test_tf_docstring_examples():
    indices, updates = tfn.constant([[4], [3], [1], [7]]), tfn.constant([9, 10, 11, 12])
    assert tfn.scatter_nd(indices, updates, tfn.constant([8])).numpy().tolist() == [0, 11, 0, 10, 9, 0, 0, 12]
    t = tfn.constant([1, 2, 3, 4, 5, 6, 7, 8])
    assert tfn.tensor_scatter_nd_add(t, indices, updates).numpy().tolist() == [1, 13, 3, 14, 14, 6, 7, 20]
    u = np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]] * 2)
    out = tfn.scatter_nd(tfn.constant([[0], [2]]), tfn.constant(u), [4, 4, 4]).numpy()
    assert out[0].tolist() == u[0].tolist() and out[2].tolist() == u[1].tolist() and not out[1].any()
    c = tfn.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
    assert tfn.math.unsorted_segment_sum(c, tfn.constant([0, 1, 0]), num_segments=2).numpy().tolist() == \
        [[5, 5, 5, 5], [5, 6, 7, 8]]
    c = tfn.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    assert tfn.math.segment_sum(c, tfn.constant([0, 0, 1])).numpy().tolist() == [[5, 5, 5, 5], [5, 6, 7, 8]]


def test_dynamic_dims_and_run_time_segment_count():
    @tfn.function(input_signature=[tfn.TensorSpec([None, None], tfn.float64), tfn.TensorSpec([None], tfn.int32),
                                   tfn.TensorSpec([], tfn.int32)])
    def f(d, ids, n):
        with tfn.GradientTape() as tape:
            tape.watch(d)
            s = tfn.math.unsorted_segment_sum(d, ids, n)
            loss = tfn.reduce_sum(s * s)
        return s, tfn.math.segment_sum(d, ids), tape.gradient(loss, d)
    s, seg, g = f(tfn.constant(D), tfn.constant(IDS), tfn.constant(4))
    np.testing.assert_allclose(s.numpy(), _segments(D, IDS, 4), rtol=1e-12)
    np.testing.assert_allclose(seg.numpy(), _segments(D, IDS, 3), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), 2 * _segments(D, IDS, 4)[IDS], rtol=1e-12)


def test_out_of_range_ids_raise_naming_the_op_and_line():
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"indices\[2\] = \[5\] does not index into shape"):
        tfn.math.unsorted_segment_sum(tfn.constant(D), [0, 1, 5, 0, 0], 3)
    f = tfn.function(lambda d, i: tfn.math.unsorted_segment_sum(d, i, 3))
    with pytest.raises(tfn.errors.InvalidArgumentError,
                       match=r"(?s)does not index into shape \[3,3\].*TensorScatterAdd.*test_scatter_segment.py"):
        f(tfn.constant(D), tfn.constant([0, 1, 5, 0, 0]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="does not index"):
        tfn.function(tfn.tensor_scatter_nd_add)(tfn.zeros([4]), tfn.constant([[-1]]), tfn.ones([1]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="does not index"):
        tfn.math.segment_sum(tfn.constant(D), [0, -1, 0, 0, 0])
    with pytest.raises(TypeError, match="segment_ids must be int32 or int64"):
        tfn.math.segment_sum(tfn.constant(D), [0.0, 1.0, 0.0, 0.0, 0.0])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="TensorScatterAdd does not support dtype bool"):
        tfn.tensor_scatter_nd_add(tfn.constant([True]), [[0]], [False])


def test_segment_means_and_sqrt_n():
    d = np.arange(12.0).reshape(4, 3) - 4.0
    ids = np.array([0, 2, 0, 2], np.int32)
    counts = np.array([2.0, 0.0, 2.0, 0.0])[:, None]
    sums = np.stack([d[ids == s].sum(0) for s in range(4)])
    safe = np.where(counts == 0, 1, counts)
    check(lambda d, i: tfn.math.unsorted_segment_mean(d, i, 4), lambda d, i: sums / safe, d, ids)
    check(lambda d, i: tfn.math.unsorted_segment_sqrt_n(d, i, 4), lambda d, i: sums / np.sqrt(safe), d, ids)
    check(tfn.math.segment_mean, lambda d, i: (sums / safe)[:3], d, np.array([0, 0, 2, 2], np.int32)[[0, 2, 1, 3]])
    weights = np.arange(12.0).reshape(4, 3)

    def grads(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            loss = tfn.reduce_sum(tfn.math.unsorted_segment_mean(x, ids, 4) * weights)
        return tape.gradient(loss, x)
    want = central_differences(lambda v: float(np.sum(np.stack([v[0][ids == s].sum(0) for s in range(4)]) / safe
                                                        * weights)), [d.copy()], 1e-6)[0]
    for got in (grads(tfn.constant(d)), tfn.function(grads)(tfn.constant(d))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
