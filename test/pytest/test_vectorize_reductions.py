"""tfn-vectorize-reductions: f32 sum/mean/max/min over trailing axes as vector loops agree with NumPy."""
import numpy as np
import pytest
from opcheck import assert_close

import tfn
from tfn.passes import tfn_vectorize_reductions

RNG = np.random.default_rng(7)
# row lengths around the vector width (64), the block (4096) and the MIN_ROW cut (16)
SIZES = (15, 16, 63, 64, 65, 1000, 4095, 4097, 9001)


def _reductions(x):
    return (tfn.reduce_sum(x), tfn.reduce_max(x), tfn.reduce_min(x), tfn.reduce_mean(x),
            tfn.reduce_sum(x, axis=-1), tfn.reduce_max(x, axis=-1, keepdims=True), tfn.reduce_min(x, axis=-1),
            tfn.reduce_mean(x, axis=-1))


def _reference(x):
    x64 = x.astype(np.float64)
    return (x64.sum(), x.max(), x.min(), x64.mean(), x64.sum(axis=-1), x.max(axis=-1, keepdims=True),
            x.min(axis=-1), x64.mean(axis=-1))


def _check(got, x):
    for g, want in zip(got, _reference(x)):
        assert_close(g.numpy(), np.asarray(want, np.float32))


def test_static_rows_of_odd_lengths_match_numpy():
    """Each length compiled with 3 rows (row loop) and as a flat vector (full reduction); values of both signs."""
    for n in SIZES:
        f = tfn.function(_reductions)  # one function per shape: a shape change would retrace (and warn)
        x = RNG.standard_normal((3, n)).astype(np.float32) * 10
        _check(f(x), x)
        assert "vector.reduction" in f.get_concrete_function(x).ir("bufferized")


def test_dynamic_shapes_and_empty_tensors():
    """One trace with an unknown row count and length serves every size, including 0 rows and 0-length rows."""
    f = tfn.function(_reductions, input_signature=[tfn.TensorSpec([None, None], tfn.float32)])
    for shape in ((2, 1000), (5, 3), (1, 64), (4, 0), (0, 7)):
        x = RNG.standard_normal(shape).astype(np.float32)
        got = f(x)
        assert_close(got[0].numpy(), np.float32(x.astype(np.float64).sum()))
        assert_close(got[4].numpy(), x.astype(np.float64).sum(axis=-1).astype(np.float32))
        if x.shape[-1]:
            assert_close(got[6].numpy(), x.min(axis=-1))
        else:  # TF: the max/min of nothing is -inf / +inf, the mean of nothing nan
            assert np.all(got[5].numpy() == -np.inf) and np.all(got[6].numpy() == np.inf)
            assert np.all(np.isnan(got[7].numpy()))
    assert "vector.reduction" in f.get_concrete_function(tfn.TensorSpec([None, None], tfn.float32)).ir("bufferized")


def test_nan_and_infinities_propagate_like_numpy():
    x = RNG.standard_normal((4, 200)).astype(np.float32)
    x[0, 3], x[1, 199], x[2, 100], x[3, 150] = np.nan, np.nan, np.inf, -np.inf
    x[2, 5] = -np.inf
    f = tfn.function(lambda x: (tfn.reduce_max(x, axis=1), tfn.reduce_min(x, axis=1), tfn.reduce_sum(x, axis=1),
                                tfn.reduce_max(x[2:]), tfn.reduce_min(x[1:])))
    got = [t.numpy() for t in f(x)]
    np.testing.assert_array_equal(got[0], x.max(axis=1))
    np.testing.assert_array_equal(got[1], x.min(axis=1))
    assert np.isnan(got[2][:3]).all() and got[2][3] == -np.inf
    assert got[3] == np.inf and np.isnan(got[4])


def test_trailing_axes_of_rank_3_and_sums_stay_accurate():
    """Reducing the last two axes collapses them into rows; a long sum of positive values keeps ~1e-7 accuracy."""
    x = RNG.random((3, 70, 50), dtype=np.float32)
    y = RNG.random(300_000, dtype=np.float32)
    f = tfn.function(lambda x, y: (tfn.reduce_sum(x, axis=[1, 2]), tfn.reduce_max(x, axis=[-1, -2]),
                                   tfn.reduce_mean(x, axis=2, keepdims=True), tfn.reduce_sum(y)))
    got = [t.numpy() for t in f(x, y)]
    assert_close(got[0], x.astype(np.float64).sum(axis=(1, 2)).astype(np.float32))
    np.testing.assert_array_equal(got[1], x.max(axis=(1, 2)))
    assert_close(got[2], x.astype(np.float64).mean(axis=2, keepdims=True).astype(np.float32))
    exact = y.astype(np.float64).sum()
    assert abs(float(got[3]) - exact) / exact < 1e-6  # blocked partial sums: no drift over 3e5 terms


@pytest.mark.parametrize("shape, axis", [((1_000_003,), None), ((1001, 999), 1)])
def test_big_reductions_split_across_workers_match_numpy(monkeypatch, shape, axis):
    """With the split threshold lowered, a full reduction (column ranges) and a row reduction (row ranges) run
    as scf.forall over the workers and still agree with NumPy."""
    monkeypatch.setattr(tfn_vectorize_reductions, "MIN_SPLIT", 1 << 16)
    x = RNG.standard_normal(shape).astype(np.float32)
    f = tfn.function(lambda x: (tfn.reduce_sum(x, axis=axis), tfn.reduce_max(x, axis=axis),
                                tfn.reduce_min(x, axis=axis)))
    got = [t.numpy() for t in f(x)]
    assert_close(got[0], x.astype(np.float64).sum(axis=axis).astype(np.float32))
    np.testing.assert_array_equal(got[1], x.max(axis=axis))
    np.testing.assert_array_equal(got[2], x.min(axis=axis))
    assert "scf.forall" in f.get_concrete_function(x).ir("bufferized")


@pytest.mark.parametrize("shape", [(128, 256), (7, 100), (3, 5, 17), (40, 16), (1, 300)])
def test_leading_axis_reductions_in_column_blocks(shape):
    """Sums (a bias gradient), max and min over the leading axes become column blocks of vectors (tails masked):
    sums equal the float64 sums to float tolerance and a sequential sum's rounding exactly (the order is the scalar
    loop's: row by row from the init), max/min NumPy's bits, NaN and infinities included."""
    x = RNG.standard_normal(shape).astype(np.float32) * 10
    x.flat[5] = np.nan
    x.flat[-3] = np.inf
    y = RNG.standard_normal(shape).astype(np.float32)
    lead = tuple(range(len(shape) - 1))
    f = tfn.function(lambda x, y: (tfn.reduce_max(x, axis=lead), tfn.reduce_min(x, axis=lead),
                                   tfn.reduce_sum(y, axis=lead), tfn.reduce_mean(y, axis=0)))
    got = [t.numpy() for t in f(x, y)]
    np.testing.assert_array_equal(got[0], x.max(axis=lead))
    np.testing.assert_array_equal(got[1], x.min(axis=lead))
    flat = y.reshape(-1, shape[-1])
    sequential = np.zeros(shape[-1], np.float32)
    for row in flat:
        sequential = row + sequential
    np.testing.assert_array_equal(got[2], sequential)
    assert_close(got[2], y.astype(np.float64).sum(axis=lead).astype(np.float32))
    assert_close(got[3], y.astype(np.float64).mean(axis=0).astype(np.float32))
    ir = f.get_concrete_function(x, y).ir("bufferized")
    assert "linalg.reduce" not in ir and ("vector<64xf32>" in ir or "vector<32xf32>" in ir)


def test_other_reductions_keep_the_linalg_loop():
    """Short static rows, products and integers."""
    f = tfn.function(lambda x, i: (tfn.reduce_sum(x, axis=0), tfn.reduce_prod(x, axis=1),
                                   tfn.reduce_sum(x[:, :8], axis=1), tfn.reduce_max(i, axis=1)))
    x = RNG.random((40, 100), dtype=np.float32)
    i = RNG.integers(-9, 9, (40, 100)).astype(np.int32)
    got = [t.numpy() for t in f(x, i)]
    assert_close(got[0], x.sum(axis=0))
    assert_close(got[1], x.astype(np.float64).prod(axis=1).astype(np.float32))
    assert_close(got[2], x[:, :8].sum(axis=1))
    np.testing.assert_array_equal(got[3], i.max(axis=1))
    assert "vector.reduction" not in f.get_concrete_function(x, i).ir("bufferized")
