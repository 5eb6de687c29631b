"""A run-time error names the op that failed even when tfn-fold-constants removed an op that may fail before it
(the codes are written on the ops before folding)."""
import numpy as np
import pytest

import tfn


def test_gather_after_a_folded_sqrt_is_named():
    @tfn.function
    def f(x, i):
        y = x * tfn.sqrt(4.0)  # folded: sqrt may report errors, and its code must not be reused
        return tfn.gather(y, i)
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"(?s)indices\[0\] = 5 is not in \[0, 2\).*GatherV2"):
        f(tfn.constant([1.0, 2.0]), tfn.constant([5]))


def test_check_numerics_after_folded_ops_is_named():
    @tfn.function
    def f(x):
        scale = tfn.sqrt(tfn.constant(4.0)) + tfn.exp(tfn.constant(0.0))
        return tfn.debugging.check_numerics(x * scale, "scaled")
    assert f(tfn.constant([1.0])).numpy().tolist() == [3.0]
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"(?s)scaled : Tensor had NaN values.*CheckNumerics"):
        f(tfn.constant([np.nan]))
