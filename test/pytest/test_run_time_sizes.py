"""Sizes known only when the function runs (run-time shapes of reshape and broadcast_to, a run-time one_hot depth)
are int64, as TF's: a size past 2**31 - 1 is not wrapped into a small or empty result, sizes whose product passes
int64 raise InvalidArgumentError, and a tensor too large for the machine ResourceExhaustedError."""
import numpy as np
import pytest

import tfn
from tfn.errors import InvalidArgumentError, ResourceExhaustedError

I64 = tfn.int64


def test_broadcast_to_a_run_time_size_past_int32():
    f = tfn.function(lambda x, s: tfn.broadcast_to(x, s))
    with pytest.raises(ResourceExhaustedError, match=r"(?s)OOM when allocating.*test_run_time_sizes.py"):
        f(tfn.ones([1, 3]), tfn.constant([2 ** 40, 3], I64))
    with pytest.raises(InvalidArgumentError, match=r"(?s)shape \[1099511627776,1073741824\] has more elements than "
                                                   r"int64 can count \[Op:BroadcastTo\].*test_run_time_sizes.py"):
        f(tfn.ones([1, 1]), tfn.constant([2 ** 40, 2 ** 30], I64))
    with pytest.raises(InvalidArgumentError, match=r"Unable to broadcast tensor of shape \[1,3\] to tensor of shape "
                                                   r"\[2,4\]"):
        f(tfn.ones([1, 3]), tfn.constant([2, 4], I64))
    np.testing.assert_array_equal(f(tfn.ones([1, 3]), tfn.constant([4, 2, 3], I64)).numpy(), np.ones([4, 2, 3]))


def test_reshape_to_run_time_sizes_past_int32():
    f = tfn.function(lambda x, s: tfn.reshape(x, s))
    x = tfn.constant(np.arange(12.0))
    with pytest.raises(InvalidArgumentError, match=r"requested shape \[4294967296,4294967296\] has more elements "
                                                   r"than int64 can count \[Op:Reshape\]"):
        f(x, tfn.constant([2 ** 32, 2 ** 32], I64))
    # 100 * 42949673 = 2**32 + 4: counted in int32 it wrapped to 4
    with pytest.raises(InvalidArgumentError, match=r"tensor with 12 values, but the requested shape has 4294967300"):
        f(x, tfn.constant([100, 42949673], I64))
    with pytest.raises(InvalidArgumentError, match="requires a multiple of 1099511627776"):
        f(x, tfn.constant([2 ** 40, -1], I64))
    np.testing.assert_array_equal(f(x, tfn.constant([2, -1, 3], I64)).numpy(), np.arange(12.0).reshape(2, 2, 3))


def test_one_hot_with_a_run_time_depth_past_int32():
    f = tfn.function(lambda i, d: tfn.one_hot(i, d))
    with pytest.raises(ResourceExhaustedError, match=r"(?s)OOM when allocating.*test_run_time_sizes.py"):
        f(tfn.constant([1, 2]), tfn.constant(2 ** 40, I64))
    with pytest.raises(InvalidArgumentError, match=r"(?s)depth must be non-negative, got: -3 \[Op:OneHot\]"
                                                   r".*test_run_time_sizes.py"):
        f(tfn.constant([1, 2]), tfn.constant(-3))
    np.testing.assert_array_equal(f(tfn.constant([0, 5, -1, 2]),
                                    tfn.constant(3)).numpy(), np.eye(3)[[0, 1, 1, 2]] * [[1], [0], [0], [1]])
