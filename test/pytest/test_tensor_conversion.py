"""Turning Python and NumPy values into tensors: copies, and the dtype literals take."""
import numpy as np

import tfn


def test_constant_copies_the_callers_numpy_array():
    a = np.ones(3, np.float32)
    t = tfn.constant(a)
    assert a.flags.writeable  # the caller's array stays writable, as in TF
    a[0] = 5.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0])
    b = np.arange(4)
    tfn.add(b, 1)
    b[0] = 9  # an op's NumPy input is not frozen either


def test_a_numpy_array_fixes_the_dtype_of_python_literals():
    assert tfn.add(np.ones(3, np.float32), 1).dtype == tfn.float32
    assert tfn.maximum(1, np.arange(3)).dtype == tfn.int64
    np.testing.assert_array_equal(tfn.add(np.ones(2), 1).numpy(), [2.0, 2.0])
