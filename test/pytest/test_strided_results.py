"""A compiled function returning part of each row of a computed tensor with dynamic sizes (`(x * 2)[:, :2]`)
returns those elements (tfn-copy-strided-results copies the strided view bufferization would hand back)."""
import numpy as np
import pytest

import tfn

Y = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


@pytest.mark.parametrize("fn,ref", [
    (lambda t: (t * 2)[:, :, :2], lambda a: (a * 2)[:, :, :2]),
    (lambda t: tfn.reduce_sum(t, 1)[:, 1:3], lambda a: a.sum(1)[:, 1:3]),
    (lambda t: (t + 1)[:, 1:, ::2], lambda a: (a + 1)[:, 1:, ::2]),
    (lambda t: tfn.split(t * 3, [1, -1, 2], 2)[1], lambda a: (a * 3)[:, :, 1:2])])
def test_views_of_dynamic_buffers_are_returned_as_their_elements(fn, ref):
    f = tfn.function(fn, input_signature=[tfn.TensorSpec([None, None, None], tfn.int32)])
    np.testing.assert_array_equal(f(tfn.constant(Y)).numpy(), ref(Y))
    np.testing.assert_array_equal(f(tfn.constant(Y[:1, :2])).numpy(), ref(Y[:1, :2]))
