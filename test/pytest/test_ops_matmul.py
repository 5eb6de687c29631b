"""matmul: eager ≡ compiled ≡ NumPy over dtypes, transposes, batch broadcasting, empty and dynamic shapes."""
import numpy as np
import pytest
from opcheck import assert_close, check, rand

import tfn

RNG = np.random.default_rng(2)


def np_matmul(a, b, ta=False, tb=False):
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    with np.errstate(all="ignore"):
        return np.matmul(a, b)


# (shape of a, shape of b, transpose_a, transpose_b, the linalg op expected)
CASES = [
    ((3, 4), (4, 5), False, False, "linalg.matmul"),
    ((4, 3), (4, 5), True, False, "linalg.matmul"),
    ((3, 4), (5, 4), False, True, "linalg.matmul"),
    ((4, 3), (5, 4), True, True, "linalg.matmul"),
    ((2, 3, 4), (2, 4, 5), False, False, "linalg.batch_matmul"),
    ((2, 4, 3), (2, 5, 4), True, True, "linalg.batch_matmul"),
    ((1, 3, 4), (2, 4, 5), False, False, "linalg.generic"),
    ((2, 3, 4), (4, 5), False, False, "linalg.generic"),
    ((3, 4), (6, 2, 5, 4), False, True, "linalg.generic"),
    ((2, 1, 4, 3), (3, 5, 4), True, True, "linalg.generic"),
    ((2, 3, 3, 4), (2, 3, 4, 2), False, False, "linalg.generic"),
]


@pytest.mark.parametrize("sa,sb,ta,tb,linalg_op", CASES, ids=[f"{c[0]}x{c[1]}-{c[2]:d}{c[3]:d}" for c in CASES])
def test_shapes_and_transposes(sa, sb, ta, tb, linalg_op):
    a, b = rand(sa, np.float32, RNG), rand(sb, np.float32, RNG)

    def fn(x, y):
        return tfn.matmul(x, y, transpose_a=ta, transpose_b=tb)
    check(fn, lambda x, y: np_matmul(x, y, ta, tb), a, b)
    ir = tfn.function(fn).experimental_get_compiler_ir(tfn.constant(a), tfn.constant(b))("linalg")
    assert linalg_op in ir and "linalg.fill" in ir


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32,
                                np.int64])
def test_dtypes(dt):
    def fn(x, y, z):
        return [x @ y, tfn.matmul(z, y, transpose_a=True), tfn.matmul(z, y, adjoint_a=True)]
    a = rand((3, 4), dt, RNG, low=0 if dt == np.uint8 else -3, high=4)
    b = rand((4, 5), dt, RNG, low=0 if dt == np.uint8 else -3, high=4)
    c = np.ascontiguousarray(a.T)
    ta, tb, tc = (tfn.constant(v) for v in (a, b, c))
    want = np_matmul(a, b)
    for out in (fn(ta, tb, tc), tfn.function(fn)(ta, tb, tc)):
        for got in out:
            assert got.dtype is tfn.as_dtype(dt)
            assert_close(got.numpy(), want)
    x, y = rand((2, 3, 4), dt, RNG, low=0, high=4), rand((1, 4, 2), dt, RNG, low=0, high=4)
    check(lambda u, v: tfn.matmul(u, v), np_matmul, x, y)


def test_integer_matmul_wraps_like_numpy():
    a = np.full((2, 300), 100, np.int32)
    b = np.full((300, 2), 100000, np.int32)
    check(tfn.matmul, np_matmul, a, b)


def test_empty():
    check(tfn.matmul, np_matmul, np.ones((0, 4), np.float32), np.ones((4, 5), np.float32))
    out = check(tfn.matmul, np_matmul, np.ones((3, 0), np.float32), np.ones((0, 5), np.float32))
    assert out.shape == (3, 5)
    check(tfn.matmul, np_matmul, np.ones((2, 3, 0), np.int32), np.ones((1, 0, 2), np.int32))


def test_dynamic_shapes():
    sig = [tfn.TensorSpec([None, 4], tfn.float32), tfn.TensorSpec([4, None], tfn.float32)]
    f = tfn.function(tfn.matmul, input_signature=sig)
    for m, n in [(3, 5), (1, 1), (0, 2), (6, 0)]:
        a, b = rand((m, 4), np.float32, RNG), rand((4, n), np.float32, RNG)
        assert_close(f(tfn.constant(a), tfn.constant(b)).numpy(), np_matmul(a, b))
    assert "linalg.matmul" in f.experimental_get_compiler_ir(tfn.constant(a), tfn.constant(b))("linalg")

    dyn = tfn.TensorSpec([None, None, None], tfn.float64)
    g = tfn.function(lambda x, y: tfn.matmul(x, y, transpose_a=True), input_signature=[dyn, dyn])
    for batch, k in [(2, 4), (1, 0), (3, 1)]:
        a, b = rand((batch, k, 3), np.float64, RNG), rand((batch, k, 5), np.float64, RNG)
        assert_close(g(tfn.constant(a), tfn.constant(b)).numpy(), np_matmul(a, b, True))
    assert "linalg.batch_matmul" in g.experimental_get_compiler_ir(tfn.constant(a), tfn.constant(b))("linalg")

    h = tfn.function(tfn.matmul, input_signature=[tfn.TensorSpec([None, None, 2, 3], tfn.int32),
                                                  tfn.TensorSpec([None, 3, None], tfn.int32)])
    a, b = rand((4, 2, 2, 3), np.int32, RNG), rand((2, 3, 5), np.int32, RNG)
    assert_close(h(tfn.constant(a), tfn.constant(b)).numpy(), np_matmul(a, b))


def test_dynamic_size_mismatch_is_a_runtime_error():
    """Sizes that disagree only at run time are never read out of bounds; the call raises InvalidArgumentError."""
    spec = tfn.TensorSpec([None, None], tfn.float32)
    f = tfn.function(tfn.matmul, input_signature=[spec, spec])
    a, b = tfn.constant(np.ones((3, 4), np.float32)), tfn.constant(np.ones((1000, 2), np.float32))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Matrix size-incompatible: contraction sizes 4 vs. 1000"):
        f(a, b)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        tfn.matmul(a, b)
    assert_close(f(a, tfn.constant(np.ones((4, 2), np.float32))).numpy(), np.full((3, 2), 4, np.float32))
    spec3 = tfn.TensorSpec([None, 2, 2], tfn.float32)
    g = tfn.function(tfn.matmul, input_signature=[spec3, spec3])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="must have compatible batch dimensions: 3 vs. 1"):
        g(tfn.constant(np.ones((3, 2, 2), np.float32)), tfn.constant(np.ones((1, 2, 2), np.float32)))


def test_operator_and_aliases():
    a = tfn.constant([[1.0, 2.0]])
    b = [[3.0], [4.0]]
    assert (a @ b).numpy().tolist() == [[11.0]]
    assert (b @ tfn.constant([[1.0, 2.0]])).numpy().tolist() == [[3.0, 6.0], [4.0, 8.0]]
    assert tfn.linalg.matmul(a, b).numpy().tolist() == [[11.0]]
    assert tfn.function(lambda x, y: x @ y)(a, tfn.constant(b)).numpy().tolist() == [[11.0]]


def test_errors():
    f32 = tfn.constant(np.ones((2, 3), np.float32))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"cannot compute MatMul as input #1\(zero-based\)"):
        tfn.matmul(f32, tfn.constant(np.ones((3, 2), np.int32)))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="cannot compute BatchMatMulV2 as input #1"):
        tfn.function(tfn.matmul)(tfn.constant(np.ones((1, 2, 3), np.float32)), tfn.constant(np.ones((3, 2))))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Matrix size-incompatible: In\[0\]: \[2,3\], "
                                                              r"In\[1\]: \[2,3\]"):
        tfn.matmul(f32, f32)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        tfn.function(lambda x, y: x @ y)(f32, f32)
    tfn.matmul(f32, f32, transpose_b=True)  # with the transpose the inner dims agree
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"In\[0\] is not a matrix"):
        tfn.matmul(tfn.constant([1.0, 2.0, 3.0]), f32)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="must have compatible batch dimensions"):
        tfn.matmul(tfn.constant(np.ones((2, 2, 3), np.float32)), tfn.constant(np.ones((3, 3, 2), np.float32)))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="MatMul does not support dtype bool"):
        tfn.matmul(tfn.constant([[True]]), tfn.constant([[True]]))
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        tfn.matmul(f32, f32, transpose_a=True, adjoint_a=True)
