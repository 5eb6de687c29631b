"""Elementwise ops: eager ≡ compiled ≡ NumPy over dtypes, broadcasting, empty and dynamic shapes."""
import numpy as np
import pytest
from opcheck import assert_close, check, rand

import tfn

RNG = np.random.default_rng(0)
FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64]
SIGNED = FLOATS + INTS

UNARY = [
    ("negative", tfn.negative, np.negative, SIGNED),
    ("abs", tfn.abs, np.abs, SIGNED),
    ("sign", tfn.sign, np.sign, SIGNED),
    ("square", tfn.square, np.square, SIGNED),
    ("sqrt", tfn.sqrt, np.sqrt, FLOATS),
    ("rsqrt", tfn.math.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS),
    ("exp", tfn.exp, np.exp, FLOATS),
    ("log", tfn.math.log, np.log, FLOATS),
    ("tanh", tfn.tanh, np.tanh, FLOATS),
    ("sigmoid", tfn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), FLOATS),
    ("sin", tfn.sin, np.sin, FLOATS),
    ("cos", tfn.cos, np.cos, FLOATS),
    ("identity", tfn.identity, lambda x: x, SIGNED),
]


def _positive(name):
    return name in ("sqrt", "rsqrt", "log")


@pytest.mark.parametrize("name,fn,ref,dts", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, ref, dts):
    for dt in dts:
        x = rand((3, 4), dt, RNG, low=1 if _positive(name) else -5)
        with np.errstate(all="ignore"):
            check(fn, lambda a, dt=dt: ref(a).astype(dt), x)


BINARY = [
    ("add", lambda a, b: a + b, np.add, SIGNED + [np.uint8]),
    ("subtract", lambda a, b: a - b, np.subtract, SIGNED),
    ("multiply", lambda a, b: a * b, np.multiply, SIGNED + [np.uint8]),
    ("floordiv", lambda a, b: a // b, np.floor_divide, SIGNED + [np.uint8]),
    ("floormod", lambda a, b: a % b, np.mod, SIGNED + [np.uint8]),
    ("maximum", tfn.maximum, np.maximum, SIGNED + [np.uint8]),
    ("minimum", tfn.minimum, np.minimum, SIGNED + [np.uint8]),
    ("pow", tfn.pow, np.power, FLOATS),
    ("equal", tfn.equal, np.equal, SIGNED + [np.bool_]),
    ("not_equal", tfn.not_equal, np.not_equal, SIGNED + [np.bool_]),
    ("less", lambda a, b: a < b, np.less, SIGNED + [np.uint8]),
    ("less_equal", lambda a, b: a <= b, np.less_equal, SIGNED),
    ("greater", lambda a, b: a > b, np.greater, SIGNED + [np.uint8]),
    ("greater_equal", lambda a, b: a >= b, np.greater_equal, SIGNED),
]


@pytest.mark.parametrize("name,fn,ref,dts", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcasting(name, fn, ref, dts):
    for dt in dts:
        x = rand((2, 3, 4), dt, RNG, low=0 if dt == np.uint8 else -5)
        y = rand((3, 1), dt, RNG, low=1 if name in ("floordiv", "floormod") else -5)
        if name == "pow":
            x = np.abs(x) + 1
        with np.errstate(all="ignore"):
            check(fn, ref, x, y)


def test_truediv_floats_and_ints():
    x = rand((4,), np.float32, RNG)
    y = rand((4,), np.float32, RNG, low=1)
    check(lambda a, b: a / b, np.true_divide, x, y)
    xi = np.array([1, 7, -7], np.int32)
    yi = np.array([2, 2, 2], np.int32)
    out = check(lambda a, b: a / b, lambda a, b: (a / b).astype(np.float64), xi, yi)
    assert out.dtype == tfn.float64
    assert (tfn.constant([1], tfn.int16) / tfn.constant([2], tfn.int16)).dtype == tfn.float32


def test_integer_division_by_zero():
    x = np.array([5, -5, 3], np.int32)
    y = np.array([0, 2, 0], np.int32)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Integer division by zero"):
        tfn.constant(x) // tfn.constant(y)
    # Compiled code must not trap: it reports the error, as TF does, and the process goes on.
    f = tfn.function(lambda a, b: (a // b, a % b))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Integer division by zero(.|\n)*FloorDiv"):
        f(tfn.constant(x), tfn.constant(y))
    out = f(tfn.constant(x), tfn.constant(y + 1))
    assert out[0].numpy().tolist() == [5, -2, 3]
    assert out[1].numpy().tolist() == [0, 1, 0]


def test_int_min_floordiv_minus_one_does_not_trap():
    x = np.array([np.iinfo(np.int32).min, 7], np.int32)
    y = np.array([-1, -1], np.int32)
    out = tfn.function(lambda a, b: a // b)(tfn.constant(x), tfn.constant(y))
    assert out.numpy().tolist() == [np.iinfo(np.int32).min, -7]


def test_logical_ops():
    a, b = rand((5,), np.bool_, RNG), rand((2, 5), np.bool_, RNG)
    check(lambda x, y: x & y, np.logical_and, a, b)
    check(lambda x, y: x | y, np.logical_or, a, b)
    check(lambda x, y: ~x, lambda x, y: np.logical_not(x), a, b)
    check(tfn.logical_and, np.logical_and, a, b)


def test_select_and_cast():
    c = rand((3, 4), np.bool_, RNG)
    x, y = rand((3, 4), np.float32, RNG), rand((4,), np.float32, RNG)
    check(tfn.where, np.where, c, x, y)
    for src in (np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8, np.int8):
        for dst in (tfn.float32, tfn.float64, tfn.int32, tfn.int64, tfn.bool, tfn.uint8, tfn.float16):
            v = rand((6,), src, RNG, low=0 if dst is tfn.uint8 else -5)
            ref = (lambda d: (lambda a: np.trunc(a).astype(d.np) if a.dtype.kind == "f" and d.is_integer
                              else a.astype(d.np)))(dst)
            check(lambda a, d=dst: tfn.cast(a, d), ref, v)


def test_python_scalars_take_the_tensor_dtype():
    x = tfn.constant([1.5, 2.5])
    assert (x + 1).dtype == tfn.float32
    assert (2 * tfn.constant([1, 2])).dtype == tfn.int32
    assert (tfn.constant([1, 2], tfn.int64) + 1).dtype == tfn.int64
    with pytest.raises(TypeError, match="Cannot convert 1.5"):
        tfn.constant([1, 2]) + 1.5


def test_mixed_dtypes_raise_invalid_argument():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="expected to be a float32 tensor but is a int32"):
        tfn.constant([1.0]) + tfn.constant([1])

    @tfn.function
    def f(a, b):
        return a * b
    with pytest.raises(tfn.errors.InvalidArgumentError, match="cannot compute Multiply"):
        f(tfn.constant([1.0]), tfn.constant([1], tfn.int64))


def test_incompatible_shapes_raise():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Incompatible shapes"):
        tfn.constant([1.0, 2.0]) + tfn.constant([1.0, 2.0, 3.0])


def test_unsupported_dtype_for_op():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Sqrt does not support dtype int32|sqrt"):
        tfn.sqrt(tfn.constant([4]))


def test_empty_shapes():
    x = np.zeros((0, 3), np.float32)
    y = np.ones((3,), np.float32)
    check(lambda a, b: tfn.exp(a) + b * 2, lambda a, b: np.exp(a) + b * 2, x, y)


def test_dynamic_shapes():
    sig = [tfn.TensorSpec([None, 4], tfn.float32), tfn.TensorSpec([4], tfn.float32)]
    f = tfn.function(lambda a, b: tfn.tanh(a * b) - a, input_signature=sig)
    for n in (1, 3, 7, 0):
        a, b = rand((n, 4), np.float32, RNG), rand((4,), np.float32, RNG)
        assert_close(f(tfn.constant(a), tfn.constant(b)).numpy(), np.tanh(a * b) - a)
    assert "tensor<?x4xf32>" in f.experimental_get_compiler_ir(tfn.constant(a), tfn.constant(b))("tfn")


def test_twenty_op_numpy_style_function():
    def body(x, y):
        a = x * y + 1.0
        b = tfn.tanh(a) - tfn.sigmoid(y)
        c = tfn.maximum(b, x) / (tfn.abs(y) + 1.0)
        d = tfn.exp(-tfn.square(c)) + tfn.sqrt(tfn.abs(x))
        e = tfn.where(d > 0.5, d, -d) * 2.0
        f = tfn.minimum(e, 3.0) - tfn.sin(x) + tfn.cos(y)
        return f ** 2.0 + tfn.cast(x > y, tfn.float32)

    def ref(x, y):
        a = x * y + 1
        b = np.tanh(a) - 1 / (1 + np.exp(-y))
        c = np.maximum(b, x) / (np.abs(y) + 1)
        d = np.exp(-np.square(c)) + np.sqrt(np.abs(x))
        e = np.where(d > 0.5, d, -d) * 2
        f = np.minimum(e, 3) - np.sin(x) + np.cos(y)
        return (f ** 2 + (x > y)).astype(np.float32)
    f = tfn.function(body)
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        x, y = rand(shape, np.float32, RNG), rand(shape[-1:], np.float32, RNG)
        assert_close(f(tfn.constant(x), tfn.constant(y)).numpy(), ref(x, y))
    dyn = tfn.function(body, input_signature=[tfn.TensorSpec([None, 4]), tfn.TensorSpec([4])])
    for n in (2, 9):
        x, y = rand((n, 4), np.float32, RNG), rand((4,), np.float32, RNG)
        assert_close(dyn(tfn.constant(x), tfn.constant(y)).numpy(), ref(x, y))


def test_dynamic_dims_that_differ_at_run_time_raise_instead_of_reading_out_of_bounds():
    f = tfn.function(lambda a, b: a + b, input_signature=[tfn.TensorSpec([None, 4]), tfn.TensorSpec([3, 4])])
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"Incompatible shapes at run time(.|\n)*test_ops"):
        f(tfn.ones([1, 4]), tfn.ones([3, 4]))
    g = tfn.function(lambda a, b: tfn.where(a > b, a, b),
                     input_signature=[tfn.TensorSpec([None]), tfn.TensorSpec([None])])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="operand #1 has size 3"):
        g(tfn.ones([5]), tfn.ones([3]))
    assert g(tfn.ones([2]), tfn.zeros([2])).numpy().tolist() == [1.0, 1.0]  # the process and function go on
