"""Reductions and argmax/argmin: eager ≡ compiled ≡ NumPy over dtypes, axes, keepdims, empty and dynamic shapes."""
import warnings

import numpy as np
import pytest
from opcheck import rand

import tfn

RNG = np.random.default_rng(1)
TOL = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}
# (axis, keepdims) variants applied to a rank-3 input
AXES = [(None, False), (0, False), (1, True), (-1, False), ([0, 2], True), ([], False), ((2, -2), False),
        ([1, 1], False), (None, True)]


def _np_axis(axis):
    if axis is None:
        return None
    return tuple(sorted({a % 3 for a in np.atleast_1d(axis).tolist()}))


def trunc_mean(x, axis, keepdims):
    """TF's integer mean: the wrapped integer sum divided by the count, truncated toward zero."""
    total = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype).astype(np.int64)
    count = x.size // max(total.size, 1) if x.size else 0
    q = np.trunc(total / max(count, 1)).astype(np.int64)
    return q.astype(x.dtype)


def reference(name, x, axis, keepdims):
    dt = x.dtype
    acc = np.float32 if dt == np.float16 else dt
    with np.errstate(all="ignore"):
        if name == "reduce_sum":
            out = np.sum(x, axis=axis, keepdims=keepdims, dtype=acc)
        elif name == "reduce_prod":
            out = np.prod(x, axis=axis, keepdims=keepdims, dtype=acc)
        elif name == "reduce_max":
            out = np.max(x, axis=axis, keepdims=keepdims)
        elif name == "reduce_min":
            out = np.min(x, axis=axis, keepdims=keepdims)
        elif dt.kind == "f":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN
                out = np.mean(x, axis=axis, keepdims=keepdims, dtype=acc)
        else:
            out = trunc_mean(x, axis, keepdims)
        return np.asarray(out).astype(dt)


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind == "f":
        tol = TOL[want.dtype.type]
        finite = np.abs(want[np.isfinite(want)].astype(np.float64))
        scale = max(float(np.max(finite, initial=1.0)), 1.0)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol * scale,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _all_reductions(x):
    return [getattr(tfn, name)(x, axis=axis, keepdims=kd) for name in NUMERIC_OPS for axis, kd in AXES]


NUMERIC_OPS = ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min"]


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64])
def test_numeric_reductions(dt):
    x = rand((3, 4, 5), dt, RNG, low=0 if dt == np.uint8 else -5)
    if np.dtype(dt).kind == "f":
        x = (np.abs(x) / 5 + 0.5).astype(dt)  # products of 60 values stay finite
    t = tfn.constant(x)
    eager = _all_reductions(t)
    compiled = tfn.function(_all_reductions)(t)
    wants = [reference(n, x, _np_axis(a), kd) for n in NUMERIC_OPS for a, kd in AXES]
    for e, c, w in zip(eager, compiled, wants):
        assert e.dtype is c.dtype
        assert_same(e.numpy(), w)
        assert_same(c.numpy(), w)


def test_any_all():
    x = np.array([[[True, False], [True, True]], [[False, False], [True, False]]])
    t = tfn.constant(x)

    def fn(x):
        return [f(x, axis=a, keepdims=kd) for f in (tfn.reduce_any, tfn.reduce_all) for a, kd in AXES]
    refs = [np.asarray(f(x, axis=_np_axis(a), keepdims=kd)) for f in (np.any, np.all) for a, kd in AXES]
    for e, c, w in zip(fn(t), tfn.function(fn)(t), refs):
        assert e.dtype is tfn.bool and c.dtype is tfn.bool
        assert_same(e.numpy(), w)
        assert_same(c.numpy(), w)
    assert tfn.math.reduce_all(tfn.constant([True, True])).numpy()
    assert not tfn.math.reduce_any(tfn.constant([False, False])).numpy()


def _empty_fns(x):
    return [tfn.reduce_sum(x, 0), tfn.reduce_prod(x, 0), tfn.reduce_max(x, 0), tfn.reduce_min(x, 0),
            tfn.reduce_mean(x, 0), tfn.reduce_sum(x, 1, keepdims=True), tfn.reduce_max(x)]


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.uint8])
def test_empty_inputs_give_identities(dt):
    x = np.zeros((0, 3), dt)
    t = tfn.constant(x)
    is_float = np.dtype(dt).kind == "f"
    lo = -np.inf if is_float else np.iinfo(dt).min
    hi = np.inf if is_float else np.iinfo(dt).max
    mean = np.nan if is_float else 0
    wants = [np.zeros(3, dt), np.ones(3, dt), np.full(3, lo, dt), np.full(3, hi, dt), np.full(3, mean, dt),
             np.zeros((0, 1), dt), np.asarray(lo, dt)]
    for e, c, w in zip(_empty_fns(t), tfn.function(_empty_fns)(t), wants):
        assert_same(e.numpy(), w)
        assert_same(c.numpy(), w)
    b = tfn.constant(np.zeros((0, 2), bool))
    for f in (lambda v: [tfn.reduce_any(v, 0), tfn.reduce_all(v, 0)], ):
        for out in (f(b), tfn.function(f)(b)):
            assert_same(out[0].numpy(), np.zeros(2, bool))
            assert_same(out[1].numpy(), np.ones(2, bool))


def _dyn_fns(x):
    return [tfn.reduce_mean(x, [0, 1], keepdims=True), tfn.reduce_sum(x, 1), tfn.reduce_max(x, -1, keepdims=True),
            tfn.reduce_min(x), tfn.reduce_prod(x, [0, 2]), tfn.argmax(x, 2), tfn.argmin(x, -1, output_type=tfn.int32)]


@pytest.mark.parametrize("dt", [np.float32, np.int64])
def test_dynamic_shapes(dt):
    f = tfn.function(_dyn_fns, input_signature=[tfn.TensorSpec([None, None, 3], tfn.as_dtype(dt))])
    for shape in [(2, 4, 3), (5, 1, 3), (0, 2, 3), (3, 0, 3)]:
        x = rand(shape, dt, RNG)
        t = tfn.constant(x)
        for e, c in zip(_dyn_fns(t), f(t)):
            assert e.dtype is c.dtype
            assert_same(c.numpy(), e.numpy())
        assert_same(f(t)[0].numpy(), reference("reduce_mean", x, (0, 1), True))
    ir = f.experimental_get_compiler_ir(t)("linalg")
    assert "linalg.reduce" in ir and "tensor.dim" in ir and "tensor.expand_shape" in ir and "linalg.fill" in ir


def test_integer_mean_truncates_and_float_mean_divides():
    assert tfn.reduce_mean(tfn.constant([-3, -4])).numpy() == -3
    assert tfn.reduce_mean(tfn.constant([3, 4])).numpy() == 3
    f = tfn.function(lambda x: tfn.reduce_mean(x, 1))
    x = np.array([[-3, -4, 0], [7, 7, 8], [-1, 0, 0]], np.int32)
    assert_same(f(tfn.constant(x)).numpy(), np.array([-2, 7, 0], np.int32))
    assert_same(f(tfn.constant(x.astype(np.float64))).numpy(), x.mean(1))


def test_max_min_propagate_nan():
    x = tfn.constant(np.array([[1.0, np.nan, 3.0], [2.0, 5.0, -1.0]], np.float32))

    def fn(v):
        return [tfn.reduce_max(v, 1), tfn.reduce_min(v, 1), tfn.reduce_max(v, 0)]
    for out in (fn(x), tfn.function(fn)(x)):
        assert_same(out[0].numpy(), np.array([np.nan, 5.0], np.float32))
        assert_same(out[1].numpy(), np.array([np.nan, -1.0], np.float32))
        assert_same(out[2].numpy(), np.array([2.0, np.nan, 3.0], np.float32))


def _arg_fns(x):
    return [tfn.argmax(x), tfn.math.argmax(x, 1), tfn.math.argmax(x, -1, output_type=tfn.int32), tfn.argmin(x),
            tfn.math.argmin(x, 2, output_type=tfn.int64), tfn.argmin(x, tfn.constant(-2))]


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64, np.bool_])
def test_argmax_argmin(dt):
    x = rand((3, 4, 5), dt, RNG, low=0 if dt == np.uint8 else -3, high=3)  # a small range forces ties
    t = tfn.constant(x)
    wants = [np.argmax(x, 0), np.argmax(x, 1), np.argmax(x, -1).astype(np.int32), np.argmin(x, 0), np.argmin(x, 2),
             np.argmin(x, -2)]
    for e, c, w in zip(_arg_fns(t), tfn.function(_arg_fns)(t), wants):
        assert e.dtype is c.dtype
        assert_same(e.numpy(), w.astype(e.dtype.as_numpy_dtype))
        assert_same(c.numpy(), w.astype(e.dtype.as_numpy_dtype))
    assert tfn.argmax(t).dtype is tfn.int64


def test_argmax_ties_nan_and_infinities():
    x = np.array([[1.0, 3.0, 3.0, np.nan, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
                  [np.inf, 0.0, np.inf, 2.0, 0.0]], np.float32)
    t = tfn.constant(x)

    def fn(v):
        return [tfn.argmax(v, 1), tfn.argmin(v, 1), tfn.argmax(-v, 1)]
    wants = [np.argmax(x, 1), np.argmin(x, 1), np.argmax(-x, 1)]
    for out in (fn(t), tfn.function(fn)(t)):
        for got, w in zip(out, wants):
            assert_same(got.numpy(), w)


def test_ir_uses_named_linalg_ops():
    f = tfn.function(lambda x: [tfn.reduce_sum(x, 1), tfn.argmax(x, 0)])
    ir = f.experimental_get_compiler_ir(tfn.constant(np.ones((2, 3), np.float32)))("linalg")
    assert "linalg.reduce" in ir and "linalg.fill" in ir and "linalg.index" in ir and "tfn." not in ir


def test_errors():
    x = tfn.constant(np.ones((2, 3), np.float32))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Invalid reduction dimension \(2 for input with 2"):
        tfn.reduce_sum(x, 2)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        tfn.function(lambda v: tfn.reduce_mean(v, [-3]))(x)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        tfn.reduce_max(tfn.constant(1.0), 0)
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Any does not support dtype float32"):
        tfn.reduce_any(x)
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Sum does not support dtype bool"):
        tfn.function(lambda v: tfn.reduce_sum(v))(tfn.constant([True]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Expected dimension in the range \[-2, 2\), but got 2"):
        tfn.argmax(x, 2)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Reduction axis 0 is empty in shape"):
        tfn.function(lambda v: tfn.argmin(v))(tfn.constant(np.zeros((0, 2), np.float32)))
    g = tfn.function(tfn.argmax, input_signature=[tfn.TensorSpec([None, 2], tfn.float32)])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Reduction axis 0 is empty in shape \[0,2\]"):
        g(tfn.constant(np.zeros((0, 2), np.float32)))
    assert g(tfn.constant(np.ones((1, 2), np.float32))).numpy().tolist() == [0, 0]
    with pytest.raises(tfn.errors.InvalidArgumentError, match="ArgMax does not support dtype float32"):
        tfn.argmax(x, output_type=tfn.float32)
    with pytest.raises(TypeError, match="axis must be an int"):
        tfn.reduce_sum(x, 1.5)
    with pytest.raises(TypeError, match="must be known when the function is traced"):
        tfn.function(lambda v, a: tfn.reduce_sum(v, a))(x, tfn.constant(1))
