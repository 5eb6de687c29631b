"""Fast kernels: polynomial exp/log/tanh accuracy, packed/vectorised matmul and conv paths against NumPy."""
import numpy as np
import pytest
from opcheck import assert_close

import tfn
from tfn.dialects.errors import InvalidArgumentError
from tfn.passes import target

RNG = np.random.default_rng(11)


def rel_err(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    ok = np.isfinite(want) & (want != 0)
    return np.max(np.abs(got - want)[ok] / np.abs(want)[ok])


def test_polynomial_accuracy_and_special_values():
    """The bounds documented in tfn-polynomial-approximation (twice the measured maxima) hold."""
    xe = RNG.uniform(-87, 88, 200_000).astype(np.float32)
    xl = np.exp(RNG.uniform(np.log(1e-30), np.log(1e30), 200_000)).astype(np.float32)
    xn = RNG.uniform(0.5, 2, 200_000).astype(np.float32)
    xt = RNG.uniform(-10, 10, 200_000).astype(np.float32)
    special = np.array([0, -0.0, 1e-45, 1e-40, np.inf, -np.inf, np.nan, -1, 88.8, -104, -110, 3.4e38], np.float32)

    @tfn.function
    def f(xe, xl, xn, xt, sp):
        return (tfn.exp(xe), tfn.math.log(xl), tfn.math.log(xn), tfn.tanh(xt),
                tfn.exp(sp), tfn.math.log(sp), tfn.tanh(sp), tfn.sigmoid(xt))

    e, lg, ln, t, se, sl, st, sg = [r.numpy() for r in f(xe, xl, xn, xt, special)]
    assert rel_err(e, np.exp(xe.astype(np.float64))) < 2e-7
    assert rel_err(lg, np.log(xl.astype(np.float64))) < 2e-7
    assert np.max(np.abs(ln - np.log(xn.astype(np.float64)))) < 8e-8
    assert rel_err(t, np.tanh(xt.astype(np.float64))) < 6e-7
    assert np.max(np.abs(t - np.tanh(xt.astype(np.float64)))) < 6e-7
    assert rel_err(sg, 1 / (1 + np.exp(-xt.astype(np.float64)))) < 1e-6
    with np.errstate(all="ignore"):
        for got, fn in ((se, np.exp), (sl, np.log), (st, np.tanh)):
            want = fn(special)
            assert_close(got, want)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_array_equal(np.signbit(got[np.isfinite(want)]), np.signbit(want[np.isfinite(want)]))


def test_matmul_fast_path_sizes():
    """Packed, tiled and vectorised matmuls (sizes not multiples of the tiles, batched, transposed) equal NumPy."""
    shapes = [((100, 70), (70, 130)), ((128, 128), (128, 128)), ((3, 65, 33), (3, 33, 47)), ((1, 64, 64), (64, 72))]
    arrays = [RNG.random(s, dtype=np.float32) - 0.5 for pair in shapes for s in pair]
    bt = RNG.random((90, 70), dtype=np.float32)

    @tfn.function
    def f(a0, b0, a1, b1, a2, b2, a3, b3, bt):
        return (tfn.matmul(a0, b0), tfn.matmul(a1, b1), tfn.matmul(a2, b2), tfn.matmul(a3, b3),
                tfn.matmul(a0, bt, transpose_b=True))

    out = f(*arrays, bt)
    for got, (a, b) in zip(out, zip(arrays[::2], arrays[1::2])):
        assert_close(got.numpy(), a @ b)
    assert_close(out[4].numpy(), arrays[0] @ bt.T)
    assert "vector.contract" in f.get_concrete_function(*arrays, bt).ir("bufferized")


def test_matmul_worker_splits(cores):
    """Big matmuls are split over two workers by panels (B padded, packed per worker; batched with an odd batch) or
    by rows; one whose rows and panels are both odd counts of tiles runs on one thread. All equal NumPy."""
    cores(2)
    # each at least min-parallel-flops (2 x 256^3)
    shapes = [((800, 100), (100, 250)), ((256, 512), (512, 160)), ((3, 256, 96), (3, 96, 256)),
              ((120, 1536), (1536, 96))]
    arrays = [RNG.random(s, dtype=np.float32) - 0.5 for pair in shapes for s in pair]
    f = tfn.function(lambda *ab: [tfn.matmul(a, b) for a, b in zip(ab[::2], ab[1::2])])
    for got, a, b in zip(f(*arrays), arrays[::2], arrays[1::2]):
        assert_close(got.numpy(), a @ b)
    # the last is 15 x 3 tiles of 8 x 32 with AVX-512 (both odd: one thread); AVX2's 6 x 16 tiles make 20 x 6
    split = 3 if tfn.config.get_target().vector_bits == 512 else 4
    assert f.get_concrete_function(*arrays).ir("bufferized").count("scf.forall") == split


def test_matmul_dynamic_and_empty_shapes_take_the_generic_path():
    spec = [tfn.TensorSpec([None, 96], tfn.float32), tfn.TensorSpec([96, None], tfn.float32)]
    f = tfn.function(lambda a, b: tfn.matmul(a, b), input_signature=spec)
    for m, n in ((100, 70), (0, 5), (7, 0)):
        a, b = RNG.random((m, 96), dtype=np.float32), RNG.random((96, n), dtype=np.float32)
        assert_close(f(a, b).numpy(), a @ b)
    assert "vector.contract" not in f.get_concrete_function().ir("bufferized")


def conv_reference(x, w, strides, padding, dilations):
    """Direct float64 convolution with TF's SAME/VALID conventions."""
    (sh, sw), (dh, dw) = strides, dilations
    kh, kw = w.shape[:2]
    if padding == "SAME":
        pads = []
        for size, k, s, d in ((x.shape[1], kh, sh, dh), (x.shape[2], kw, sw, dw)):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    oh = (x.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for b in range(x.shape[0]):
        for i in range(oh):
            for j in range(ow):
                win = x[b, i * sh:i * sh + (kh - 1) * dh + 1:dh, j * sw:j * sw + (kw - 1) * dw + 1:dw, :]
                out[b, i, j] = np.tensordot(win.astype(np.float64), w.astype(np.float64), axes=3)
    return out.astype(x.dtype)


CONVS = [((1, 9, 9, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
         ((2, 10, 11, 3), (3, 2, 3, 5), (2, 2), "SAME", (1, 1)),
         ((1, 12, 12, 4), (3, 3, 4, 2), (1, 1), "SAME", (2, 2)),
         ((1, 30, 41, 20), (3, 3, 20, 36), (1, 1), "VALID", (1, 1)),    # packed fast path, ow not a multiple of 8
         ((1, 31, 29, 17), (3, 3, 17, 40), (2, 1), "SAME", (1, 1)),     # packed fast path, strided, padded
         ((2, 20, 30, 7), (2, 3, 7, 40), (1, 1), "VALID", (2, 2)),      # packed, rows on one thread, dilated
         ((3, 20, 20, 16), (3, 3, 16, 24), (1, 1), "SAME", (1, 1)),     # packed, rows on the workers, batch 3
         ((1, 14, 30, 12), (3, 3, 12, 100), (1, 1), "VALID", (1, 1)),   # 96 filters in full panels, 4 in a tail panel
         ((2, 9, 21, 8), (3, 3, 8, 52), (1, 2), "SAME", (1, 1))]        # a tail panel (AVX2), padded (AVX-512)


def test_conv2d_eager_and_compiled_match_the_reference():
    args = [RNG.random(s, dtype=np.float32) - 0.5 for xs, ws, *_ in CONVS for s in (xs, ws)]

    def convs(*xw):
        return [tfn.nn.conv2d(x, w, list(s), p, dilations=list(d))
                for (x, w), (_, _, s, p, d) in zip(zip(xw[::2], xw[1::2]), CONVS)]

    compiled = tfn.function(convs)(*args)
    eager = convs(*[tfn.constant(a) for a in args])
    for got_c, got_e, (x, w), (_, _, s, p, d) in zip(compiled, eager, zip(args[::2], args[1::2]), CONVS):
        want = conv_reference(x, w, s, p, d)
        assert got_c.shape == want.shape
        assert_close(got_e.numpy(), want)
        assert_close(got_c.numpy(), want)


@pytest.mark.parametrize("level", ["native", "avx2"])
def test_conv2d_plus_bias(monkeypatch, level):
    """A bias added along the filters of a packed convolution (tfn-pack-matmul starts each row's accumulators from
    it and drops the add): full panels only, a tail panel, padded filters, rows on the workers or not; with the
    convolution also returned (the add then stays) and followed by a ReLU. Results equal the float64 reference."""
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    for xs, ws, s, p, d in [CONVS[3], CONVS[5], CONVS[6], CONVS[7], CONVS[8]]:
        x, w = RNG.random(xs, dtype=np.float32) - 0.5, RNG.random(ws, dtype=np.float32) - 0.5
        b = RNG.random(ws[3], dtype=np.float32) - 0.5
        want = conv_reference(x, w, s, p, d)

        def conv(x, w, s=s, p=p, d=d):
            return tfn.nn.conv2d(x, w, list(s), p, dilations=list(d))

        f = tfn.function(lambda x, w, b: (conv(x, w) + b, tfn.nn.relu(b + conv(x, w))))
        fused, relu = f(x, w, b)
        assert_close(fused.numpy(), want + b)
        assert_close(relu.numpy(), np.maximum(want + b, 0))
        both = tfn.function(lambda x, w, b: (conv(x, w) + b, conv(x, w)))(x, w, b)
        assert_close(both[0].numpy(), want + b)
        assert_close(both[1].numpy(), want)
    # the contractions accumulate with vector.contract: an arith.addf left is the separate bias add
    alone = tfn.function(lambda x, w, b: conv(x, w) + b).get_concrete_function(x, w, b).ir("bufferized")
    kept = tfn.function(lambda x, w, b: (conv(x, w) + b, conv(x, w))).get_concrete_function(x, w, b).ir("bufferized")
    assert "arith.addf" not in alone and "arith.addf" in kept


def test_conv2d_dynamic_shapes():
    spec = [tfn.TensorSpec([None, None, None, 3], tfn.float32), tfn.TensorSpec([3, 3, 3, 2], tfn.float32)]
    f = tfn.function(lambda x, w: tfn.nn.conv2d(x, w, 2, "SAME"), input_signature=spec)
    w = RNG.random((3, 3, 3, 2), dtype=np.float32)
    for shape in ((1, 7, 8, 3), (2, 1, 5, 3), (0, 4, 4, 3)):
        x = RNG.random(shape, dtype=np.float32)
        assert_close(f(x, w).numpy(), conv_reference(x, w, (2, 2), "SAME", (1, 1)))


def test_conv2d_errors():
    x, w = tfn.ones([1, 5, 5, 3]), tfn.ones([3, 3, 3, 2])
    with pytest.raises(ValueError, match="padding must be 'SAME' or 'VALID'"):
        tfn.nn.conv2d(x, w, 1, "FULL")
    with pytest.raises(ValueError, match="data_format='NHWC' only"):
        tfn.nn.conv2d(x, w, 1, "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="strides"):
        tfn.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
    with pytest.raises(InvalidArgumentError, match="input depth must be evenly divisible by filter depth: 3 vs 4"):
        tfn.nn.conv2d(x, tfn.ones([3, 3, 4, 2]), 1, "SAME")
    with pytest.raises(InvalidArgumentError, match="Computed output size would be negative"):
        tfn.nn.conv2d(x, tfn.ones([7, 7, 3, 2]), 1, "VALID")


@pytest.mark.parametrize("level", ["native", "avx2"])
def test_transposed_operands_are_packed_as_stored(monkeypatch, level):
    """matmul with transpose_a / transpose_b (as a gradient writes x^T @ dz and dz @ W^T) takes the packed path without
    a transposed copy: B^T is packed directly into panels, A^T read through the contraction's map; sizes not
    multiples of the tiles, split over workers or not, batched, and both operands transposed at once equal NumPy."""
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    cases = [((70, 100), (70, 130), True, False), ((100, 70), (130, 70), False, True),
             ((784, 128), (128, 256), False, False), ((128, 784), (128, 256), True, False),
             ((128, 256), (256, 256), False, True), ((72, 66), (90, 72), True, True),
             ((3, 40, 65), (3, 47, 40), True, True), ((256, 128), (10, 128), False, True)]
    arrays = [RNG.random(s, dtype=np.float32) - 0.5 for sa, sb, _, _ in cases for s in (sa, sb)]

    def f(*ab):
        return [tfn.matmul(a, b, transpose_a=ta, transpose_b=tb)
                for a, b, (_, _, ta, tb) in zip(ab[::2], ab[1::2], cases)]

    compiled = tfn.function(f)
    for got, a, b, (_, _, ta, tb) in zip(compiled(*arrays), arrays[::2], arrays[1::2], cases):
        want = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
        assert_close(got.numpy(), want)
    ir = compiled.get_concrete_function(*arrays).ir("bufferized")
    assert "linalg.transpose" not in ir and ir.count("vector.contract") >= len(cases)


def test_matmul_beside_reshapes_is_still_packed():
    """A matmul between reshapes becomes, after upstream elementwise fusion, a linalg.generic whose M, N or K is
    several loops (and whose operands may be stored transposed); tfn-pack-matmul recognises it as a contraction, so
    it takes the packed path. Results equal NumPy's in float64 to float32 rounding."""
    def filter_grad_shape(g, x):  # g^T [f, (n y x)] times patches [(n y x), c]: K is three loops
        return tfn.matmul(tfn.transpose(tfn.reshape(g, [-1, 16])), tfn.reshape(x, [-1, 72]))

    def dense_on_3d(x, w, b):  # M is two loops
        return tfn.reshape(tfn.matmul(tfn.reshape(x, [-1, 64]), w), [8, 32, 128]) + b

    def split_columns(x, w):  # N is two loops
        return tfn.reshape(tfn.matmul(x, tfn.reshape(w, [96, -1])), [100, 6, 20])

    cases = [(filter_grad_shape, [(8, 24, 24, 16), (8, 24, 24, 72)],
              lambda g, x: g.reshape(-1, 16).T @ x.reshape(-1, 72)),
             (dense_on_3d, [(8, 32, 64), (64, 128), (128,)],
              lambda x, w, b: (x.reshape(-1, 64) @ w).reshape(8, 32, 128) + b),
             (split_columns, [(100, 96), (96, 6, 20)], lambda x, w: (x @ w.reshape(96, -1)).reshape(100, 6, 20))]
    for fn, shapes, reference in cases:
        args = [RNG.random(s, dtype=np.float32) - 0.5 for s in shapes]
        compiled = tfn.function(fn)
        want = reference(*[a.astype(np.float64) for a in args])  # K up to 4608: float32 sums differ by ~1e-5
        np.testing.assert_allclose(compiled(*args).numpy(), want, rtol=1e-5, atol=1e-4)
        concrete = compiled.get_concrete_function(*args)
        assert "linalg.matmul" not in concrete.ir("linalg")  # the case this test is about: fused into a generic
        assert "vector.contract" in concrete.ir("bufferized"), fn.__name__
