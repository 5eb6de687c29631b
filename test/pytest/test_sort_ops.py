"""tfn.sort, tfn.argsort, tfn.math.top_k: TF's docstring examples, NumPy's stable order (NaN as the largest
value), eager = compiled with dynamic dims, ints, other axes, gradients by finite differences, errors."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfn

R = np.random.default_rng(13)
X = R.permutation(24).reshape(4, 6) / 4.0 - 2
WITH_NAN = R.normal(size=(3, 9))
WITH_NAN[0, 2] = WITH_NAN[0, 5]
WITH_NAN[1, 3] = WITH_NAN[2, 0] = WITH_NAN[2, 7] = np.nan


def _desc(a, axis=-1):
    """NumPy's stable order, largest first, NaN as the largest value."""
    return np.argsort(np.where(np.isnan(a), -np.inf, -a), axis, kind="stable")


CASES = {
    "sort": (tfn.sort, lambda a: np.sort(a, -1), [X]),
    "sort_axis0_descending": (lambda x: tfn.sort(x, axis=0, direction="DESCENDING"),
                              lambda a: np.take_along_axis(a, _desc(a, 0), 0), [X]),
    "top_k": (lambda x: tfn.math.top_k(x, 3).values, lambda a: np.take_along_axis(a, _desc(a), -1)[:, :3], [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, ref, arrays = CASES[name]
    check_values(fn, ref, arrays)
    check_gradients(fn, ref, arrays)


@pytest.mark.parametrize("fn,ref", [
    (tfn.sort, lambda a: np.sort(a, -1)),
    (tfn.argsort, lambda a: np.argsort(a, -1, kind="stable")),
    (lambda t: tfn.sort(t, direction="DESCENDING"), lambda a: np.take_along_axis(a, _desc(a), -1)),
    (lambda t: tfn.argsort(t, direction="DESCENDING"), _desc),
    (lambda t: tfn.math.top_k(t, 4).values, lambda a: np.take_along_axis(a, _desc(a), -1)[:, :4]),
    (lambda t: tfn.nn.top_k(t, 4).indices, lambda a: _desc(a)[:, :4])])
def test_ties_and_nan_eager_and_compiled_dynamic(fn, ref):
    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, None], tfn.float64)])
    for got in (fn(tfn.constant(WITH_NAN)), f(tfn.constant(WITH_NAN))):
        np.testing.assert_array_equal(got.numpy(), ref(WITH_NAN))


def test_tf_docstring_examples_and_ints():
    a = [1, 10, 26.7, 2.8, 2.5, 3.5, -9.5]
    np.testing.assert_allclose(tfn.sort(a).numpy(), np.sort(np.float32(a)))
    np.testing.assert_allclose(tfn.sort(a, direction="DESCENDING").numpy(), np.sort(np.float32(a))[::-1])
    mat = [[3, 2, 1], [2, 1, 3], [1, 3, 2]]
    assert tfn.sort(mat, axis=0).numpy().tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    assert tfn.sort(mat, axis=-1).numpy().tolist() == [[1, 2, 3]] * 3
    assert tfn.argsort([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5]).numpy().tolist() == [7, 0, 4, 3, 5, 1, 2, 6]
    assert tfn.argsort([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5], direction="DESCENDING").numpy().tolist() == \
        [6, 2, 1, 5, 3, 4, 0, 7]
    result = tfn.math.top_k([1, 10, 26.7, 2.8, 2.5, 3.5, 100.0, -9.5], k=2)
    np.testing.assert_allclose(result.values.numpy(), [100, 26.7], rtol=1e-6)
    assert result.indices.numpy().tolist() == [6, 2] and result.indices.dtype is tfn.int32
    ints = tfn.constant([[5, -2147483648, 7, 5]])
    assert tfn.math.top_k(ints, 4).indices.numpy().tolist() == [[2, 0, 3, 1]]
    assert tfn.math.top_k(ints, 2, index_type=tfn.int64).indices.dtype is tfn.int64
    assert tfn.math.top_k(ints, 0).values.shape == [1, 0]


def test_errors_name_the_problem():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="at least k columns. Had 3, needed 4"):
        tfn.math.top_k([1, 2, 3], 4)
    with pytest.raises(ValueError, match="ASCENDING or DESCENDING"):
        tfn.sort([1, 2], direction="UP")
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Sort does not support dtype bool"):
        tfn.sort([True, False])
    with pytest.raises(TypeError, match="`k` must be known when the function is traced"):
        tfn.function(lambda x, k: tfn.math.top_k(x, k))(tfn.constant([1, 2]), tfn.constant(1))


# ---- the argsort op: NumPy's stable order at every size, dtype and direction, eagerly and compiled -----------------

def _stable_desc(a):
    """TF's argsort(direction="DESCENDING", stable=True): largest first, equal values in input order; NaN first."""
    if a.dtype.kind == "f":
        return np.lexsort((-np.where(np.isnan(a), 0, a), ~np.isnan(a)))
    return np.argsort(~a, -1, kind="stable")  # (~ reverses the order of ints and uint8 exactly)


_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8]


@st.composite
def _lines(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    # lines short (merge sort) and long (radix sort from 32, 64 or 256 elements by width, passes/lowering/sort.py)
    length = draw(st.one_of(st.integers(0, 40), st.integers(60, 300)))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2))) + (length,)
    if np.dtype(dtype).kind == "f":  # few distinct values (ties), NaN, infinities and both zeros
        pool = np.array([-np.inf, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan], dtype)
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.min + 1, -3 if info.min else 0, 0, 1, 2, 7, info.max - 1, info.max], dtype)
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=int(np.prod(shape)),
                          max_size=int(np.prod(shape))))
    return pool[np.array(picks, np.int64)].reshape(shape)


_FUNCTIONS = {}


def _compiled(rank, dtype, descending):
    """One tfn.function per rank, dtype and direction, every dim dynamic (one trace serves every size)."""
    key = (rank, dtype, descending)
    if key not in _FUNCTIONS:
        spec = tfn.TensorSpec([None] * rank, tfn.as_dtype(dtype))
        direction = "DESCENDING" if descending else "ASCENDING"
        _FUNCTIONS[key] = tfn.function(lambda x: (tfn.argsort(x, direction=direction, stable=True),
                                                  tfn.sort(x, direction=direction)), input_signature=[spec])
    return _FUNCTIONS[key]


@settings(derandomize=True, deadline=None, database=None, max_examples=60,
          suppress_health_check=[HealthCheck.too_slow])
@given(_lines(), st.booleans())
def test_argsort_and_sort_equal_numpys_stable_order(a, descending):
    want = _stable_desc(a) if descending else np.argsort(a, -1, kind="stable")
    direction = "DESCENDING" if descending else "ASCENDING"
    eager = (tfn.argsort(a, direction=direction, stable=True), tfn.sort(a, direction=direction))
    for order, values in (eager, _compiled(a.ndim, a.dtype.type, descending)(tfn.constant(a))):
        assert order.dtype is tfn.int32 and order.shape == a.shape
        np.testing.assert_array_equal(order.numpy(), want)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, want, -1))  # NaN == NaN here


@pytest.mark.parametrize("dtype", _DTYPES)
def test_every_key_width_over_its_whole_range(dtype):
    """Values drawn over the dtype's whole range (floats: normal values with NaN, both infinities and both zeros),
    a line of known length and one of run-time length, both directions: every radix digit of the keys matters."""
    r = np.random.default_rng(np.dtype(dtype).num)
    if np.dtype(dtype).kind == "f":
        magnitude = np.float64(np.finfo(dtype).max) ** r.random((3, 700)) * r.uniform(0.5, 1.0, (3, 700))
        a = (r.choice([-1.0, 1.0], (3, 700)) * magnitude).astype(dtype)  # (never past the largest finite)
        for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
            a.flat[r.integers(0, a.size, 25)] = v
    else:
        info = np.iinfo(dtype)
        a = r.integers(info.min, int(info.max) + 1, (3, 700), dtype=dtype)
        a.flat[r.integers(0, a.size, 25)] = info.min
        a.flat[r.integers(0, a.size, 25)] = info.max
    for descending in (False, True):
        direction = "DESCENDING" if descending else "ASCENDING"
        want = _stable_desc(a) if descending else np.argsort(a, -1, kind="stable")
        for shape in ([None, None], [3, 700]):
            f = tfn.function(lambda x, d=direction: tfn.argsort(x, direction=d),
                             input_signature=[tfn.TensorSpec(shape, tfn.as_dtype(dtype))])
            np.testing.assert_array_equal(f(tfn.constant(a)).numpy(), want)
        np.testing.assert_array_equal(tfn.argsort(a, direction=direction).numpy(), want)


def test_negative_zero_keeps_its_place_and_bits():
    a = np.array([0.0, -0.0, 1.0, -0.0, 0.0], np.float32)
    f = tfn.function(tfn.sort)
    for got in (tfn.sort(a), f(tfn.constant(a))):
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(a[np.argsort(a, kind="stable")]))


@pytest.mark.parametrize("compiled", [False, True])
def test_long_lines_sort_without_quadratic_memory(compiled):
    """10^5 elements (the O(n^2) ranking needed ~40 GB): sort, argsort and a large top_k."""
    a = np.random.default_rng(3).normal(size=100_000).astype(np.float32)
    a[::1000] = np.round(a[::1000])  # some ties
    def fn(x):
        return tfn.sort(x), tfn.argsort(x, direction="DESCENDING"), tfn.math.top_k(x, 100).indices
    run = tfn.function(fn, input_signature=[tfn.TensorSpec([None], tfn.float32)]) if compiled else fn
    values, order, top = run(tfn.constant(a))
    np.testing.assert_array_equal(values.numpy(), np.sort(a))
    want = _stable_desc(a)
    np.testing.assert_array_equal(order.numpy(), want)
    np.testing.assert_array_equal(top.numpy(), want[:100])


@pytest.mark.parametrize("k", [2, 3, 40])
def test_top_k_by_passes_and_by_sorting_agree(k):
    a = np.round(np.random.default_rng(k).normal(size=(3, 5, 40)), 1)
    a[0, 0, 5] = a[1, 2, 7] = np.nan
    f = tfn.function(lambda x: tfn.math.top_k(x, k), input_signature=[tfn.TensorSpec([None, 5, None], tfn.float64)])
    for got in (tfn.math.top_k(a, k), f(tfn.constant(a))):
        np.testing.assert_array_equal(got.indices.numpy(), _stable_desc(a)[..., :k])
        np.testing.assert_array_equal(got.values.numpy(), np.take_along_axis(a, _stable_desc(a)[..., :k], -1))


def test_sort_gradient_on_other_axes_and_dynamic_dims():
    a = np.random.default_rng(5).permutation(60).reshape(3, 4, 5) / 7.0
    for axis in (0, 1, 2):
        def fn(x, axis=axis):
            return tfn.sort(x, axis=axis, direction="DESCENDING")
        check_values(fn, lambda v, axis=axis: -np.sort(-v, axis), [a])
        check_gradients(fn, lambda v, axis=axis: -np.sort(-v, axis), [a])

    def top(x):  # the sorting path of top_k
        return tfn.math.top_k(x, 20).values
    check_gradients(top, lambda v: -np.sort(-v, -1)[..., :20], [a.reshape(3, 20)])
    w = np.arange(60.0).reshape(3, 4, 5)

    def grad(x):  # every dim known only when the function runs: the picked element of each gets its weight
        with tfn.GradientTape() as tape:
            tape.watch(x)
            loss = tfn.reduce_sum(tfn.sort(x, axis=1) * w)
        return tape.gradient(loss, x)
    f = tfn.function(grad, input_signature=[tfn.TensorSpec([None, None, None], tfn.float64)])
    want = np.zeros_like(a)
    np.put_along_axis(want, np.argsort(a, 1, kind="stable"), w, 1)
    for got in (grad(tfn.constant(a)), f(tfn.constant(a))):
        np.testing.assert_array_equal(got.numpy(), want)


def test_argsort_has_no_gradient_and_errors_name_the_users_line():
    x = tfn.constant([3.0, 1.0, 2.0])
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch(x)
        order = tfn.argsort(x)
        y = tfn.cast(order, tfn.float32) * x
    assert tape.gradient(order, x) is None
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 2.0, 0.0]  # through x only
    with pytest.raises(tfn.errors.InvalidArgumentError, match="at least rank 1"):
        tfn.sort(3.0)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="ArgSort does not support dtype bool"):
        tfn.argsort([True])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"(?s)axis 2 is out of range.*test_sort_ops.py"):
        tfn.function(lambda v: tfn.sort(v, axis=2))(tfn.constant([[1.0]]))


@pytest.mark.parametrize("k", [2, 5])
def test_top_k_of_a_line_shorter_than_k_at_run_time(k):
    f = tfn.function(lambda v: tfn.math.top_k(v, k), input_signature=[tfn.TensorSpec([None, None], tfn.float32)])
    assert f.get_concrete_function().structured_outputs.indices.shape.as_list() == [None, k]
    with pytest.raises(tfn.errors.InvalidArgumentError, match=f"at least k columns. Had 1, needed {k}"):
        f(tfn.constant([[1.0], [2.0]]))
