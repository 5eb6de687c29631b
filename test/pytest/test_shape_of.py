"""tfn.shape / tfn.size / tfn.rank (TF semantics), and their uses: loops over tensors of unknown length."""
import numpy as np
import pytest

import tfn

X = np.arange(10, dtype=np.float32).reshape(5, 2)


def test_eager_shape_size_rank_print_like_tf():
    x = tfn.constant(X)
    assert str(tfn.shape(x)) == "tfn.Tensor([5 2], shape=(2,), dtype=int32)"
    assert tfn.shape(x, out_type=tfn.int64).dtype == tfn.int64
    assert tfn.shape(tfn.constant(1.0)).shape == (0,)
    assert tfn.size(x).numpy() == 10 and tfn.size(x, out_type=tfn.int64).dtype == tfn.int64
    assert tfn.rank(x).numpy() == 2 and tfn.rank(x).dtype == tfn.int32
    assert tfn.shape([[1, 2, 3]]).numpy().tolist() == [1, 3]
    with pytest.raises(TypeError, match="Value for attr 'out_type' of float32 is not in the list of allowed values"):
        tfn.shape(x, out_type=tfn.float32)


def test_compiled_shape_reads_dynamic_dims_at_run_time():
    @tfn.function(input_signature=[tfn.TensorSpec([None, 2, None], tfn.float32)])
    def f(x):
        return tfn.shape(x), tfn.shape(x, out_type=tfn.int64), tfn.size(x), tfn.rank(x), tfn.shape(tfn.reduce_sum(x))

    for shape in [(3, 2, 4), (0, 2, 1)]:
        s32, s64, size, rank, scalar = f(tfn.constant(np.zeros(shape, np.float32)))
        assert s32.numpy().tolist() == list(shape) and s32.dtype == tfn.int32
        assert s64.numpy().tolist() == list(shape) and s64.dtype == tfn.int64
        assert size.numpy() == np.prod(shape) and rank.numpy() == 3 and scalar.shape == (0,)
    assert "tfn.shape" in f.experimental_get_compiler_ir(tfn.constant(np.zeros((1, 2, 1), np.float32)))("tfn")


def test_for_over_a_tensor_of_unknown_length_and_tensor_array_unstack():
    @tfn.function(input_signature=[tfn.TensorSpec([None, 2], tfn.float32)])
    def f(x):
        acc = tfn.zeros([2])
        n = tfn.constant(0)
        for row in x:
            acc = acc + row
            n = n + 1
        grown = tfn.TensorArray(tfn.float32, size=0, dynamic_size=True).unstack(x)
        fixed = tfn.TensorArray(tfn.float32, size=0).unstack(x)
        return acc, n, grown.size(), fixed.stack()

    for rows in (5, 0):
        acc, n, size, stacked = f(tfn.constant(X[:rows]))
        np.testing.assert_allclose(acc.numpy(), X[:rows].sum(0))
        assert n.numpy() == rows and size.numpy() == rows
        np.testing.assert_array_equal(stacked.numpy(), X[:rows])
