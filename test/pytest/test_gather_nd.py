"""tfn.gather_nd: TF's docstring examples, eager = compiled, dynamic dims, gradients (repeated rows add up), rows
out of range raising InvalidArgumentError naming GatherNd and the user's line."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values

import tfn

P = np.arange(24.0).reshape(2, 3, 4) / 7


def _ref(p, idx):
    idx = np.asarray(idx)
    return p[tuple(np.moveaxis(idx, -1, 0))]


@pytest.mark.parametrize("idx", [[[0, 1], [1, 2]], [[[1]], [[0]]], [[0, 2, 3], [1, 0, 0]], [[1, 1], [1, 1]]])
def test_values_and_gradients(idx):
    fn, ref = (lambda p: tfn.gather_nd(p, idx)), (lambda p: _ref(p, idx))
    check_values(fn, ref, [P])
    check_gradients(fn, ref, [P])


def test_tf_docstring_examples():
    assert tfn.gather_nd(indices=[[0, 0], [1, 1]], params=[["a", "b"], ["c", "d"]]).numpy().tolist() == [b"a", b"d"]
    assert tfn.gather_nd(indices=[[1], [0]], params=[["a", "b"], ["c", "d"]]).numpy().tolist() == \
        [[b"c", b"d"], [b"a", b"b"]]
    p = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    assert tfn.gather_nd(p, [[0, 1], [1, 0]]).numpy().tolist() == [[3, 4], [5, 6]]
    assert tfn.gather_nd(p, [[[0, 1]], [[1, 0]]]).numpy().tolist() == [[[3, 4]], [[5, 6]]]
    assert tfn.gather_nd(p, [[0, 1, 1]]).numpy().tolist() == [4]


def test_dynamic_dims():
    f = tfn.function(tfn.gather_nd, input_signature=[tfn.TensorSpec([None, None, 4], tfn.float64),
                                                      tfn.TensorSpec([None, 2], tfn.int64)])
    idx = np.array([[1, 2], [0, 0], [1, 0]])
    np.testing.assert_array_equal(f(tfn.constant(P), tfn.constant(idx)).numpy(), _ref(P, idx))


def test_rows_out_of_range_raise():
    with pytest.raises(tfn.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[2, 0\] does not index into param shape \[2,3,4\]"):
        tfn.gather_nd(tfn.constant(P), [[0, 1], [2, 0]])
    f = tfn.function(lambda p, i: tfn.gather_nd(p, i))
    with pytest.raises(tfn.errors.InvalidArgumentError,
                       match=r"(?s)indices\[0\] = \[-1\] does not index.*GatherNd.*test_gather_nd.py"):
        f(tfn.constant(P), tfn.constant([[-1]]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="innermost dimension length must be <= params rank"):
        tfn.gather_nd(tfn.constant(P), [[0, 0, 0, 0]])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="'Tindices' of float32"):
        tfn.gather_nd(tfn.constant(P), [[0.0]])


@pytest.mark.parametrize("idx_shape", [(2, 0), (0, 0), (2, 3, 0)])
def test_empty_index_rows_take_the_whole_tensor(idx_shape):
    """Index rows of depth 0 name all of params (TF's GatherNd; the scatters write all of it), also when there
    are no rows at all: eagerly as compiled, not numpy's `reshape(-1, 0)` error."""
    idx = np.zeros(idx_shape, np.int32)
    want = np.broadcast_to(P, idx_shape[:-1] + P.shape)
    for f in (tfn.gather_nd, tfn.function(tfn.gather_nd)):
        np.testing.assert_array_equal(f(tfn.constant(P), idx).numpy(), want)
    ups = np.ones(idx_shape[:-1] + P.shape)
    added = tfn.tensor_scatter_nd_add(tfn.constant(P), idx, ups).numpy()
    np.testing.assert_allclose(added, P + ups.reshape((-1,) + P.shape).sum(0))
    updated = tfn.tensor_scatter_nd_update(tfn.constant(P), idx, ups).numpy()
    np.testing.assert_array_equal(updated, P if 0 in idx_shape[:-1] else np.ones_like(P))
