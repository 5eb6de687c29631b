"""gather, x[...] (strided_slice), fill/zeros/ones(_like), range, one_hot: eager ≡ compiled ≡ NumPy over dtypes,
empty and dynamic shapes; TF's errors eagerly, while tracing and from compiled code (the run-time error channel)."""
import inspect
import os

import numpy as np
import pytest
from opcheck import assert_close, check, rand

import tfn

RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8, np.bool_]
IAE = tfn.errors.InvalidArgumentError


def _check_tuple(fn, ref, *args, signature=None):
    """fn eagerly, compiled and ref agree on every output of a tuple."""
    ts = [tfn.constant(a) for a in args]
    eager, compiled, want = fn(*ts), tfn.function(fn, input_signature=signature)(*ts), ref(*args)
    assert len(eager) == len(compiled) == len(want)
    for e, c, w in zip(eager, compiled, want):
        assert e.dtype == c.dtype and e.dtype.np == np.asarray(w).dtype, (e.dtype, c.dtype, np.asarray(w).dtype)
        assert_close(e.numpy(), w)
        assert_close(c.numpy(), w)


def _line_of(fn, marker):
    """`file:line` of the line of fn's source containing marker."""
    lines, first = inspect.getsourcelines(fn)
    k = next(i for i, text in enumerate(lines) if marker in text)
    return f"{os.path.basename(inspect.getsourcefile(fn))}:{first + k}"


# gather ------------------------------------------------------------------------------------------------

def _gathers(p, i):
    return (tfn.gather(p, i), tfn.gather(p, i, axis=1), tfn.gather(p, i, axis=-1), tfn.gather(p, i[0]),
            tfn.gather(p, tfn.reshape(i, [2, 2]), axis=1))


def _gathers_ref(p, i):
    return (np.take(p, i, 0), np.take(p, i, 1), np.take(p, i, -1), np.take(p, i[0], 0),
            np.take(p, i.reshape(2, 2), 1))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_dtypes_and_axes(dt):
    p = rand((4, 3, 5), dt, RNG)
    for idt in (np.int32, np.int64):
        i = np.array([2, 0, 2, 1], idt)
        _check_tuple(_gathers, _gathers_ref, p, i)


def test_gather_int16_indices_and_batch_dims():
    p = rand((2, 3, 4), np.float32, RNG)
    check(lambda a, b: tfn.gather(a, b), lambda a, b: np.take(a, b, 0), p, np.array([1, 1, 0], np.int16))
    i = np.array([[2, 0], [1, 1]], np.int32)
    want = np.stack([np.take(p[k], i[k], axis=0) for k in range(2)])
    check(lambda a, b: tfn.gather(a, b, axis=1, batch_dims=1), lambda a, b: want, p, i)
    want2 = np.stack([np.take(p[k], i[k], axis=1) for k in range(2)])
    check(lambda a, b: tfn.gather(a, b, axis=2, batch_dims=-1), lambda a, b: want2, p, i)


def test_gather_empty_and_dynamic():
    p = rand((0, 3), np.float32, RNG)
    check(lambda a, b: tfn.gather(a, b), lambda a, b: np.take(a, b, 0), p, np.zeros((0,), np.int32))
    check(lambda a, b: tfn.gather(a, b, axis=1), lambda a, b: np.take(a, b, 1), p, np.array([2, 0], np.int32))
    sig = [tfn.TensorSpec([None, None], tfn.float32), tfn.TensorSpec([None], tfn.int64)]
    f = tfn.function(lambda a, b: (tfn.gather(a, b), tfn.gather(a, b, axis=1)), input_signature=sig)
    for n, m in [(4, 3), (1, 2), (5, 0)]:
        a = rand((n, 6), np.float32, RNG)
        b = RNG.integers(0, n, size=m).astype(np.int64)
        g0, g1 = f(tfn.constant(a), tfn.constant(b))
        assert_close(g0.numpy(), np.take(a, b, 0))
        assert_close(g1.numpy(), np.take(a, b, 1))


def test_gather_errors_eager():
    p = tfn.constant([[1.0, 2.0, 3.0]] * 3)
    with pytest.raises(IAE, match=r"indices\[1\] = 7 is not in \[0, 3\)"):
        tfn.gather(p, [0, 7])
    with pytest.raises(IAE, match=r"indices\[1,0\] = -1 is not in \[0, 3\)"):
        tfn.gather(p, [[0, 1], [-1, 2]], axis=1)
    with pytest.raises(IAE, match=r"indices = 3 is not in \[0, 3\)"):
        tfn.gather(p, 3)
    with pytest.raises(IAE, match=r"Expected axis in the range \[-2, 2\), but got 2"):
        tfn.gather(p, [0], axis=2)
    with pytest.raises(IAE, match="Tindices"):
        tfn.gather(p, [0.5])
    with pytest.raises(IAE, match=r"batch_dims \(1\) must be less than or equal to axis \(0\)"):
        tfn.gather(p, [[0]], batch_dims=1)


def test_gather_out_of_range_in_compiled_code_raises_and_process_survives():
    def fn(p, i):
        return tfn.gather(p, i) * 2.0  # GATHER-HERE

    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, 2]), tfn.TensorSpec([None], tfn.int32)])
    p = tfn.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    where = _line_of(fn, "GATHER-HERE")
    for bad, text in (([0, 7, 1], r"indices\[1\] = 7 is not in \[0, 3\)"),
                      ([-2], r"indices\[0\] = -2 is not in \[0, 3\)")):
        with pytest.raises(IAE, match=text) as info:
            f(p, tfn.constant(bad))
        assert where in str(info.value) and "GatherV2" in str(info.value)
    assert f(p, tfn.constant([2, 0])).numpy().tolist() == [[8, 10], [0, 2]]  # the flag was reset
    with pytest.raises(IAE, match=r"indices\[0\] = 0 is not in \[0, 0\)"):  # nothing to read: no crash
        f(tfn.constant(np.zeros((0, 2), np.float32)), tfn.constant([0]))
    g = tfn.function(lambda a, b: tfn.gather(a, b, axis=1))
    with pytest.raises(IAE, match=r"indices\[1,0\] = 5 is not in \[0, 2\)"):
        g(p, tfn.constant([[1], [5]]))
    sig = [tfn.TensorSpec([None, None, 2]), tfn.TensorSpec([None, None], tfn.int64)]
    h = tfn.function(lambda a, b: tfn.gather(a, b, axis=1, batch_dims=1), input_signature=sig)
    q = tfn.constant(np.ones((3, 4, 2), np.float32))
    for rows in (2, 1000):  # batch sizes that differ only at run time: nothing is read
        with pytest.raises(IAE, match=f"params.shape\\[0\\]: 3 should be equal to indices.shape\\[0\\]: {rows}"):
            h(q, tfn.constant(np.zeros((rows, 5), np.int64)))
    assert h(q, tfn.constant(np.zeros((3, 5), np.int64))).shape == (3, 5, 2)


# x[...] ------------------------------------------------------------------------------------------------

KEYS = [1, -1, (0, 1), (slice(None), 2), (Ellipsis, 1), (None, 0), (slice(1, None), None, slice(None, None, -1)),
        (slice(None, None, -2),), (0, slice(3, 0, -1), slice(None, None, 2)), (slice(-5, 10),), (Ellipsis, None),
        (1, 2, 3), (slice(0, 0),), (slice(None, None, -1), Ellipsis, slice(-2, None)), (None, Ellipsis, None),
        (slice(2, -10, -1), slice(None), slice(1, 3)), (np.int64(-2), slice(None), -4), Ellipsis]


def _slices(x):
    return tuple(x[k] for k in KEYS)


def _slices_ref(a):
    return tuple(np.asarray(a[k]) for k in KEYS)


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.bool_, np.uint8, np.float16], ids=lambda d: np.dtype(d).name)
def test_getitem_static(dt):
    _check_tuple(_slices, _slices_ref, rand((2, 3, 4), dt, RNG))


def test_getitem_dynamic_and_empty():
    f = tfn.function(_slices, input_signature=[tfn.TensorSpec([None, None, 4], tfn.float32)])
    for shape in [(2, 3, 4), (3, 5, 4), (4, 3, 4)]:
        a = rand(shape, np.float32, RNG)
        for got, want in zip(f(tfn.constant(a)), _slices_ref(a)):
            assert_close(got.numpy(), want)
    empty = [(slice(None), 0), (slice(None, None, -1),), (Ellipsis, slice(1, None))]
    a = rand((0, 3), np.float32, RNG)
    _check_tuple(lambda x: tuple(x[k] for k in empty), lambda x: tuple(x[k] for k in empty), a)
    g = tfn.function(lambda x: tuple(x[k] for k in empty), input_signature=[tfn.TensorSpec([None, 3])])
    for got, want in zip(g(tfn.constant(a)), [a[k] for k in empty]):
        assert_close(got.numpy(), want)


def test_getitem_tensor_indices():
    a = rand((4, 3), np.float32, RNG)

    def fn(x, i, j):
        return x[i], x[:, j], x[i, j], x[j:], x[:i], x[-i:j:2], x[i:None:-1]
    f = tfn.function(fn)
    for i, j in [(1, 2), (-1, 0), (-4, -3), (3, 1)]:
        want = (a[i], a[:, j], a[i, j], a[j:], a[:i], a[-i:j:2], a[i::-1])
        ti, tj = tfn.constant(i), tfn.constant(j, tfn.int64)
        for got_e, got_c, w in zip(fn(tfn.constant(a), ti, tj), f(tfn.constant(a), ti, tj), want):
            assert_close(got_e.numpy(), w)
            assert_close(got_c.numpy(), w)


def test_getitem_errors():
    x = tfn.constant(np.zeros((3, 4), np.float32))
    with pytest.raises(IAE, match="slice index 5 of dimension 0 out of bounds"):
        x[5]
    with pytest.raises(IAE, match="slice index -5 of dimension 1 out of bounds"):
        x[0, -5]
    with pytest.raises(ValueError, match="slice index 3 of dimension 0 out of bounds"):
        tfn.function(lambda a: a[3])(x)
    with pytest.raises(IAE, match="Index out of range using input dim 2"):
        x[0, 0, 0]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        x[..., ...]
    with pytest.raises(IAE, match=r"strides\[0\] must be non-zero"):
        x[::0]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[1.5]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[tfn.constant([0, 1])]
    with pytest.raises(TypeError, match="slice step"):
        tfn.function(lambda a, s: a[::s])(x, tfn.constant(2))


def test_getitem_out_of_range_at_run_time():
    def fn(x, i):
        return x[i], x[2]  # INDEX-HERE

    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, 2]), tfn.TensorSpec([], tfn.int32)])
    x = tfn.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    assert [t.numpy().tolist() for t in f(x, tfn.constant(-1))] == [[6, 7], [4, 5]]
    with pytest.raises(IAE, match="slice index 7 of dimension 0 out of bounds") as info:
        f(x, tfn.constant(7))
    assert _line_of(fn, "INDEX-HERE") in str(info.value)
    with pytest.raises(IAE, match="slice index 2 of dimension 0 out of bounds"):
        f(tfn.constant(np.zeros((2, 2), np.float32)), tfn.constant(0))
    with pytest.raises(IAE, match="slice index -1 of dimension 0 out of bounds"):
        f(tfn.constant(np.zeros((0, 2), np.float32)), tfn.constant(-1))


# fill / zeros / ones -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fills(dt):
    tdt = tfn.as_dtype(dt)

    def fn(x):
        return (tfn.zeros([2, 3], tdt), tfn.ones((4,), tdt), tfn.zeros([], tdt), tfn.ones([0, 2], tdt),
                tfn.zeros_like(x), tfn.ones_like(x), tfn.zeros_like(x, tfn.float64), tfn.fill([3, 1], x[0, 0]))

    def ref(a):
        return (np.zeros((2, 3), dt), np.ones(4, dt), np.zeros((), dt), np.ones((0, 2), dt), np.zeros_like(a),
                np.ones_like(a), np.zeros(a.shape), np.full((3, 1), a[0, 0]))
    a = rand((2, 5), dt, RNG)
    _check_tuple(fn, ref, a)
    f = tfn.function(lambda x: (tfn.zeros_like(x), tfn.ones_like(x, tfn.int32)),
                     input_signature=[tfn.TensorSpec([None, 5, None], tdt)])
    for shape in [(2, 5, 1), (0, 5, 3)]:
        z, o = f(tfn.constant(rand(shape, dt, RNG)))
        assert_close(z.numpy(), np.zeros(shape, dt))
        assert_close(o.numpy(), np.ones(shape, np.int32))


def test_fill_python_values_and_errors():
    assert tfn.fill([2], 7).dtype == tfn.int32 and tfn.fill([2], 1.5).dtype == tfn.float32
    assert tfn.zeros(3).shape == (3,) and tfn.ones(tfn.TensorShape([2, 2])).numpy().tolist() == [[1, 1], [1, 1]]
    assert tfn.zeros([2], tfn.string).numpy().tolist() == [b"", b""]
    with pytest.raises(IAE, match="Dimension -1 must be >= 0"):
        tfn.fill([-1], 1.0)
    with pytest.raises(IAE, match="value must be a scalar"):
        tfn.fill([2], [1.0, 2.0])
    # a shape known only at run time (TF's Fill takes a shape tensor)
    assert tfn.function(lambda n: tfn.zeros(n))(tfn.constant([2])).numpy().tolist() == [0.0, 0.0]
    ir = tfn.function(lambda: tfn.zeros([1000, 1000])).experimental_get_compiler_ir()("tfn")
    assert "tfn.fill" in ir and len(ir) < 2000  # emitted as an op, not folded to a 4 MB constant


# range -------------------------------------------------------------------------------------------------

def test_range_python_numbers():
    cases = [((5,), {}, np.arange(5, dtype=np.int32)), ((2, 11, 3), {}, np.arange(2, 11, 3, dtype=np.int32)),
             ((10, 0, -3), {}, np.arange(10, 0, -3, dtype=np.int32)), ((1, 2.5, 0.5), {}, np.float32),
             ((0, 1, 0.1), {}, np.float32), ((3,), {"dtype": tfn.float64}, np.arange(3.0)),
             ((4, 4), {}, np.zeros(0, np.int32)), ((5,), {"dtype": tfn.int64}, np.arange(5))]
    for args, kw, want in cases:
        got = tfn.range(*args, **kw)
        if isinstance(want, type):
            want = np.arange(*args, dtype=want)
        assert got.dtype.np == want.dtype
        assert_close(got.numpy(), want)
    assert tfn.range(tfn.constant(5, tfn.int64)).dtype == tfn.int64
    assert tfn.range(2, tfn.constant(5.0)).dtype == tfn.float32
    assert isinstance(tfn.function(lambda: tfn.range(3)).experimental_get_compiler_ir()("tfn"), str)


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.int8, np.float32, np.float64, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_range_tensors(dt):
    f = tfn.function(lambda a, b, c: tfn.range(a, b, c))
    for s, l, d in [(1, 10, 3), (10, 1, -2), (0, 5, 1), (3, 3, 1), (5, -5, -5), (-3, 4, 2)]:
        want = np.arange(s, l, d).astype(dt)
        args = [np.asarray(v, dt) for v in (s, l, d)]
        check(lambda a, b, c: tfn.range(a, b, c), lambda *_, w=want: w, *args)
        assert f(*[tfn.constant(v) for v in args]).shape == want.shape
    if np.dtype(dt).kind == "f":
        check(lambda a, b, c: tfn.range(a, b, c), lambda *_: np.array([0, 0.5, 1], dt), *[np.asarray(v, dt)
                                                                                        for v in (0, 1.25, 0.5)])


def test_range_errors():
    with pytest.raises(IAE, match="Requires delta != 0"):
        tfn.range(1, 5, 0)
    with pytest.raises(IAE, match="Requires start <= limit when delta > 0: 5/1"):
        tfn.range(5, 1)
    with pytest.raises(IAE, match="Requires start >= limit when delta < 0: 1/5"):
        tfn.range(1, 5, -1)

    def fn(a, b, c):
        return tfn.range(a, b, c)  # RANGE-HERE
    f = tfn.function(fn)
    with pytest.raises(IAE, match="Requires delta != 0") as info:
        f(tfn.constant(1), tfn.constant(5), tfn.constant(0))
    assert _line_of(fn, "RANGE-HERE") in str(info.value)
    with pytest.raises(IAE, match=r"Requires start >= limit when delta < 0: 1.5/5.0"):
        f(tfn.constant(1.5), tfn.constant(5.0), tfn.constant(-1.0))
    with pytest.raises(IAE, match="Requires start <= limit when delta > 0: 9/-9"):
        f(tfn.constant(9, tfn.int64), tfn.constant(-9, tfn.int64), tfn.constant(1, tfn.int64))
    # 2**63 elements, counted unsigned (INT64_MIN / -1 must not trap; an int64 count wrapped to an empty range)
    with pytest.raises(tfn.errors.ResourceExhaustedError, match=r"shape\[9223372036854775807\]"):
        f(tfn.constant(0, tfn.int64), tfn.constant(np.iinfo(np.int64).min), tfn.constant(-1, tfn.int64))
    # |limit - start| past INT64_MAX: int64 wrapped it to a negative distance and an empty range
    big = f(tfn.constant(np.iinfo(np.int64).min), tfn.constant(np.iinfo(np.int64).max), tfn.constant(2 ** 62))
    assert big.numpy().tolist() == [-2 ** 63, -2 ** 62, 0, 2 ** 62]
    assert f(tfn.constant(1), tfn.constant(4), tfn.constant(1)).numpy().tolist() == [1, 2, 3]


# one_hot -----------------------------------------------------------------------------------------------

def _one_hot_ref(i, depth, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    a = i.ndim if axis == -1 else axis
    ids = np.arange(depth).reshape([-1 if k == a else 1 for k in range(i.ndim + 1)])
    return np.where(np.expand_dims(i.astype(np.int64), a) == ids, on, off).astype(dtype)


@pytest.mark.parametrize("idt", [np.int32, np.int64, np.uint8, np.int8], ids=lambda d: np.dtype(d).name)
def test_one_hot(idt):
    i = np.array([[0, 3, 1], [7, 2, 0]]).astype(idt)
    if np.dtype(idt).kind == "i":
        i[1, 0] = -1

    def fn(x):
        return (tfn.one_hot(x, 4), tfn.one_hot(x, 3, axis=0), tfn.one_hot(x, 5, axis=1, on_value=7, off_value=-2),
                tfn.one_hot(x, 2, dtype=tfn.bool), tfn.one_hot(x, 0), tfn.one_hot(x[0, 0], 4),
                tfn.one_hot(x, 4, on_value=2.5, dtype=tfn.float64))

    def ref(x):
        return (_one_hot_ref(x, 4), _one_hot_ref(x, 3, 0), _one_hot_ref(x, 5, 1, 7, -2, np.int32),
                _one_hot_ref(x, 2, dtype=np.bool_), _one_hot_ref(x, 0), _one_hot_ref(x[0, 0], 4),
                _one_hot_ref(x, 4, on=2.5, dtype=np.float64))
    _check_tuple(fn, ref, i)


def test_one_hot_dynamic_and_errors():
    f = tfn.function(lambda x: tfn.one_hot(x, 3, axis=0), input_signature=[tfn.TensorSpec([None], tfn.int32)])
    for n in (4, 0):
        i = RNG.integers(-1, 4, size=n).astype(np.int32)
        assert_close(f(tfn.constant(i)).numpy(), _one_hot_ref(i, 3, 0))
    with pytest.raises(IAE, match="depth must be non-negative, got: -1"):
        tfn.one_hot([1], -1)
    with pytest.raises(IAE, match=r"Expected axis to be -1 or between \[0, 2\)"):
        tfn.one_hot([1], 3, axis=2)
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        tfn.one_hot([1], 3, on_value=tfn.constant(1.0), dtype=tfn.int32)
    with pytest.raises(IAE, match="OneHot does not support dtype float32"):
        tfn.one_hot([1.0], 3)


def test_variable_scatter_methods_and_tensor_scatter_nd_sub():
    """Variable.scatter_nd_update/add/sub, sparse_read and gather_nd, eagerly and inside a tfn.function (the
    update persists), and tfn.tensor_scatter_nd_sub with repeated indices."""
    v = tfn.Variable(np.zeros((4, 2), np.float32))
    v.scatter_nd_update([[1], [3]], [[1.0, 2.0], [3.0, 4.0]])
    v.scatter_nd_add([[1], [1]], [[10.0, 10.0], [1.0, 1.0]])
    v.scatter_nd_sub([[3]], [[1.0, 1.0]])
    np.testing.assert_array_equal(v.numpy(), [[0, 0], [12, 13], [0, 0], [2, 3]])
    np.testing.assert_array_equal(v.sparse_read([3, 1]).numpy(), [[2, 3], [12, 13]])
    np.testing.assert_array_equal(v.gather_nd([[1, 0]]).numpy(), [12])

    @tfn.function
    def bump():
        v.scatter_nd_add([[0]], [[5.0, 5.0]])
        return v.sparse_read([0])
    np.testing.assert_array_equal(bump().numpy(), [[5, 5]])
    np.testing.assert_array_equal(v.numpy()[0], [5, 5])
    np.testing.assert_array_equal(tfn.tensor_scatter_nd_sub(tfn.ones([3]), [[0], [0]], [1.0, 2.0]).numpy(),
                                  [-2, 1, 1])


def test_fill_with_a_float_run_time_shape_raises_as_eagerly():
    """A float shape tensor known only when the function runs made a float range per dim: tfn.fill([2.0], v) gave
    two elements, where eagerly (and in TF) the shape must hold integers."""
    f = tfn.function(lambda d: tfn.fill(d, 1.0), input_signature=[tfn.TensorSpec([1], tfn.float32)])
    with pytest.raises(TypeError, match="Fill: the shape must be an int or a list of ints"):
        f(tfn.constant([2.0]))
    with pytest.raises(TypeError, match="Fill: the shape must be an int or a list of ints"):
        tfn.fill(tfn.constant([2.0]), 1.0)
    g = tfn.function(lambda d: tfn.zeros([d, 2]), input_signature=[tfn.TensorSpec([], tfn.int32)])
    assert g(tfn.constant(3)).shape == (3, 2)
