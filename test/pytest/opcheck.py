"""Shared checks: an op's eager result, its compiled result and a NumPy reference agree."""
import numpy as np

import tfn

TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}


def assert_close(got, want, dtype=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    dt = np.dtype(dtype or want.dtype)
    if dt.kind == "f":
        rtol = TOL.get(dt.type, 1e-6) * 4
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def central_differences(loss, arrays, eps):
    """d loss / d arrays[k][idx] for every element, by central differences; loss(arrays) -> float."""
    out = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = [x.copy() for x in arrays], [x.copy() for x in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        out.append(g)
    return out


def eager_and_compiled(fn, *args, signature=None):
    """(eager result, compiled result) of fn on tfn tensors made from numpy args."""
    tensors = [tfn.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    eager = fn(*tensors)
    compiled = tfn.function(fn, input_signature=signature)(*tensors)
    return eager, compiled


def check(fn, reference, *args, signature=None):
    """fn eagerly, fn compiled (optionally with an input_signature) and reference(*args) agree."""
    eager, compiled = eager_and_compiled(fn, *args, signature=signature)
    want = reference(*args)
    assert eager.dtype == compiled.dtype
    assert_close(eager.numpy(), want)
    assert_close(compiled.numpy(), want)
    return compiled


def rand(shape, dtype, rng, low=-5, high=5):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        lo = max(low, np.iinfo(dt).min)
        return rng.integers(lo, high, size=shape).astype(dt)
    return (rng.random(shape) * (high - low) + low).astype(dt)
