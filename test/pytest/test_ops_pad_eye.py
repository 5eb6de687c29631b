"""tfn.pad (constant, REFLECT and SYMMETRIC) and tfn.eye, eager and compiled, against NumPy (TF's results)."""
import numpy as np
import pytest

import tfn

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("mode,np_mode", [("CONSTANT", "constant"), ("reflect", "reflect"),
                                          ("SYMMETRIC", "symmetric")])
def test_pad_modes_eager_and_compiled(mode, np_mode):
    paddings = [[1, 1], [2, 1]]
    kw = {"constant_values": 7} if np_mode == "constant" else {}
    want = np.pad(X, paddings, mode=np_mode, **kw)
    f = tfn.function(lambda t: tfn.pad(t, paddings, mode, constant_values=7))
    assert np.array_equal(tfn.pad(tfn.constant(X), paddings, mode, constant_values=7).numpy(), want)
    assert np.array_equal(f(tfn.constant(X)).numpy(), want)


def test_pad_a_dynamic_dim():
    f = tfn.function(lambda t: tfn.pad(t, tfn.constant([[1, 2], [0, 1]])),
                     input_signature=[tfn.TensorSpec([None, 3], tfn.int32)])
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    out = f(tfn.constant(x))
    assert out.shape == (7, 4) and np.array_equal(out.numpy(), np.pad(x, [[1, 2], [0, 1]]))
    empty = f(tfn.constant(np.zeros((0, 3), np.int32)))
    assert np.array_equal(empty.numpy(), np.zeros((3, 4), np.int32))


def test_pad_errors():
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Paddings must be non-negative"):
        tfn.pad(tfn.constant(X), [[-1, 0], [0, 0]])
    with pytest.raises(ValueError, match="paddings must be an int tensor of shape \\[2, 2\\]"):
        tfn.pad(tfn.constant(X), [[1, 0]])
    with pytest.raises(tfn.errors.InvalidArgumentError, match="no greater than the dimension size"):
        tfn.pad(tfn.constant(X), [[2, 0], [0, 0]], "REFLECT")
    with pytest.raises(ValueError, match="Received `mode` = WRAP"):
        tfn.pad(tfn.constant(X), [[0, 0], [0, 0]], "wrap")


def test_eye():
    assert np.array_equal(tfn.eye(2, 3).numpy(), np.eye(2, 3, dtype=np.float32))
    assert tfn.eye(3).dtype == tfn.float32 and tfn.linalg.eye(2, dtype=tfn.int64).dtype == tfn.int64
    batched = tfn.eye(2, batch_shape=[3], dtype=tfn.bool)
    assert batched.shape == (3, 2, 2) and batched.numpy()[2].tolist() == [[True, False], [False, True]]
    f = tfn.function(lambda x: tfn.matmul(x, tfn.eye(3)))
    assert np.array_equal(f(tfn.constant(X)).numpy(), X)
    assert "tfn.eye" in f.experimental_get_compiler_ir(tfn.constant(X))("tfn")


def test_eye_with_run_time_sizes():
    @tfn.function
    def f(n, m):
        return tfn.eye(n, m, dtype=tfn.int32), tfn.eye(n, batch_shape=[2], dtype=tfn.bool), tfn.eye(3, m)

    a, b, c = f(tfn.constant(2), tfn.constant(3))  # TF 2.21's values
    assert a.numpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    assert b.numpy().tolist() == [[[True, False], [False, True]]] * 2
    assert c.numpy().tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_one_hot_with_a_run_time_depth():
    @tfn.function
    def f(x, d):
        return tfn.one_hot(x, d), tfn.one_hot(x, d, axis=0, on_value=5, off_value=-1)

    a, b = f(tfn.constant([0, 4]), tfn.constant(3))  # TF 2.21's values (index 4 is out of range: all off)
    assert a.dtype == tfn.float32 and a.numpy().tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert b.numpy().tolist() == [[5, -1], [-1, -1], [-1, -1]]
