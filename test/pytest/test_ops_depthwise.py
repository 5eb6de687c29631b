"""tfn.nn.depthwise_conv2d: eager, compiled and a loop-by-loop reference agree (padding, strides, dilations,
multipliers, dtypes, dynamic shapes); TF's errors for bad arguments; the Keras layer trains a tiny model."""
import numpy as np
import pytest
from opcheck import assert_close, check

import tfn

RNG = np.random.default_rng(17)


def reference(x, w, strides=(1, 1), pads=((0, 0), (0, 0)), dilations=(1, 1)):
    """out[n, i, j, c * M + m] = sum over taps of x_padded[n, i s + a d, j s + b d, c] w[a, b, c, m], loop by loop
    in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, oh, ow, c * m))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    tap = x[:, i * sh + a * dh, j * sw + b * dw, :]  # [n, c]
                    out[:, i, j, :] += (tap[:, :, None] * w[a, b].astype(np.float64)[None]).reshape(n, c * m)
    return out


def _same(size, k, s, d):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


CASES = [  # x shape, w shape, strides, padding, dilations
    ((2, 7, 8, 3), (3, 3, 3, 1), 1, "VALID", 1),
    ((2, 7, 8, 3), (3, 3, 3, 1), 1, "SAME", 1),
    ((1, 9, 10, 4), (3, 2, 4, 2), 2, "SAME", 1),
    ((1, 9, 10, 4), (3, 3, 4, 3), 2, "VALID", 1),
    ((2, 11, 9, 5), (3, 3, 5, 1), 1, "SAME", 2),
    ((1, 6, 7, 2), (2, 3, 2, 2), 1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1),
    ((1, 8, 8, 33), (5, 5, 33, 1), 1, "SAME", 1),  # channels not a multiple of any vector width
    # channels a vector divides (tfn-vectorize-depthwise): border blocks padding their own slices, an interior block
    # reading the image, interior columns cut to a multiple of the register tile, tasks over images or rows
    ((3, 9, 13, 32), (3, 3, 32, 1), 1, "SAME", 1),
    ((2, 10, 11, 16), (3, 3, 16, 1), 2, "SAME", 1),
    ((1, 12, 20, 64), (3, 3, 64, 1), 1, "SAME", 2),
    ((2, 8, 9, 16), (2, 3, 16, 1), 1, [[0, 0], [2, 0], [1, 3], [0, 0]], 1),
    ((1, 6, 7, 16), (2, 2, 16, 1), 1, [[0, 0], [3, 3], [0, 0], [0, 0]], 1),  # pads wider than a window
    ((4, 28, 28, 64), (3, 3, 64, 1), 1, "SAME", 1),
    ((1, 40, 36, 32), (5, 5, 32, 1), 1, "SAME", 1),
]


def _pads(xs, ws, s, padding, d):
    if padding == "VALID":
        return (0, 0), (0, 0)
    if padding == "SAME":
        return _same(xs[1], ws[0], s, d), _same(xs[2], ws[1], s, d)
    return tuple(padding[1]), tuple(padding[2])


@pytest.mark.parametrize("xs,ws,s,padding,d", CASES)
def test_depthwise_matches_loop_reference(xs, ws, s, padding, d):
    x, w = RNG.standard_normal(xs).astype(np.float32), RNG.standard_normal(ws).astype(np.float32)
    pads = _pads(xs, ws, s, padding, d)
    check(lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, s, s, 1], padding, dilations=[d, d]),
          lambda x, w: reference(x, w, (s, s), pads, (d, d)).astype(np.float32), x, w)


def test_depthwise_equals_conv2d_with_a_block_diagonal_filter():
    """An independent route: the regular convolution whose filter is w on the (c, c * M + m) entries, zero else."""
    x, w = RNG.standard_normal((2, 10, 9, 3)).astype(np.float32), RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
    full = np.zeros((3, 3, 3, 6), np.float32)
    for c in range(3):
        full[:, :, c, 2 * c:2 * c + 2] = w[:, :, c, :]
    f = tfn.function(lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"))
    assert_close(f(x, w).numpy(), tfn.nn.conv2d(x, full, 2, "SAME").numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_float_dtypes(dtype):
    x, w = RNG.standard_normal((1, 6, 5, 4)).astype(dtype), RNG.standard_normal((3, 3, 4, 2)).astype(dtype)
    check(lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
          lambda x, w: reference(x, w, pads=((1, 1), (1, 1))).astype(dtype), x, w)


def test_dynamic_shapes_and_depths_checked_at_run_time():
    x, w = RNG.standard_normal((2, 6, 7, 3)).astype(np.float32), RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
    want = reference(x, w, (2, 2), (_same(6, 3, 2, 1), _same(7, 3, 2, 1))).astype(np.float32)
    bad_x = [(x[..., :2], w), (np.concatenate([x, x], -1), w)]
    bad_w = [(x, w[:, :, :2]), (x, np.concatenate([w, w], 2))]
    for sig, bad in (([tfn.TensorSpec([None] * 4), tfn.TensorSpec([3, 3, None, 2])], bad_x + bad_w),
                     ([tfn.TensorSpec([None, None, None, None]), tfn.TensorSpec([3, 3, 3, 2])], bad_x),
                     ([tfn.TensorSpec([2, 6, 7, 3]), tfn.TensorSpec([3, 3, None, 2])], bad_w),
                     ([tfn.TensorSpec([None, 6, 7, 3]), tfn.TensorSpec([3, 3, 3, 2])], [])):
        f = tfn.function(lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"), input_signature=sig)
        assert_close(f(x, w).numpy(), want)
        for args in bad:
            with pytest.raises(tfn.errors.InvalidArgumentError,
                               match=r"input and filter must have the same depth: \d vs \d at run time"):
                f(*args)


def test_bad_arguments_raise_tf_errors():
    x, w = np.ones((1, 5, 5, 3), np.float32), np.ones((3, 3, 3, 1), np.float32)
    dw = tfn.nn.depthwise_conv2d
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"input and filter must have the same depth: 3 vs 4"):
        dw(x, np.ones((3, 3, 4, 1), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"input must be 4-dimensional\[5,5,3\]"):
        dw(x[0], w, [1, 1, 1, 1], "SAME")
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"filter must be 4-dimensional: \[3,3,3\]"):
        dw(x, w[..., 0], [1, 1, 1, 1], "SAME")
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Computed output size would be negative"):
        dw(x, np.ones((7, 7, 3, 1), np.float32), [1, 1, 1, 1], "VALID")
    with pytest.raises(tfn.errors.InvalidArgumentError, match="DepthwiseConv2dNative"):
        dw(x.astype(np.int32), w.astype(np.int32), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with dilation_rate > 1"):
        dw(x, w, [1, 2, 2, 1], "SAME", dilations=[2, 2])
    with pytest.raises(ValueError, match="strides in the batch and depth dimensions must be 1"):
        dw(x, w, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="padding must be 'SAME', 'VALID'"):
        dw(x, w, [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="padding in the batch and depth dimensions must be 0"):
        dw(x, w, [1, 1, 1, 1], [[1, 0], [0, 0], [0, 0], [0, 0]])
    with pytest.raises(ValueError, match="data_format='NHWC' only"):
        dw(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW")

    @tfn.function
    def traced(x):
        return dw(x, np.ones((3, 3, 2, 1), np.float32), [1, 1, 1, 1], "SAME")

    with pytest.raises(tfn.errors.InvalidArgumentError, match="same depth: 3 vs 2"):
        traced(x)


def test_export_paths():
    assert tfn.nn.depthwise_conv2d is tfn.nn.depthwise_conv2d
    assert "depthwise_conv2d" in dir(tfn.nn)


@pytest.mark.parametrize("xs", [(4, 28, 28, 64), (1, 9, 13, 32), (2, 10, 11, 16)])
def test_depthwise_plus_bias(xs):
    """A bias added along the channels (tfn-vectorize-depthwise starts the accumulators from it, in the tasks of an
    scf.forall or not), alone, with the convolution also returned (not fused), and followed by a ReLU."""
    c = xs[3]
    x, w = RNG.standard_normal(xs).astype(np.float32), RNG.standard_normal((3, 3, c, 1)).astype(np.float32)
    b = RNG.standard_normal(c).astype(np.float32)
    pads = _pads(xs, (3, 3), 1, "SAME", 1)

    def ref(x, w, b):
        return (reference(x, w, (1, 1), pads) + b).astype(np.float32)

    def conv(x, w):
        return tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")

    check(lambda x, w, b: conv(x, w) + b, ref, x, w, b)
    check(lambda x, w, b: tfn.nn.relu(conv(x, w) + b), lambda x, w, b: np.maximum(ref(x, w, b), 0), x, w, b)
    got = tfn.function(lambda x, w, b: (conv(x, w) + b, conv(x, w)))(x, w, b)
    assert_close(got[0].numpy(), ref(x, w, b))
    assert_close(got[1].numpy(), reference(x, w, (1, 1), pads).astype(np.float32))


@pytest.mark.parametrize("conv", ["conv2d", "depthwise"])
@pytest.mark.parametrize("window", [(0, 3), (3, 0)])
def test_a_filter_window_of_no_elements_raises(conv, window):
    """A filter of height or width 0 covered no input: a VALID conv of a 5x5 input gave a 6x3 (or 3x6) output of
    zeros, larger than the input. TF's error instead, eagerly and compiled."""
    x = np.ones((1, 5, 5, 2), np.float32)
    if conv == "conv2d":
        w = np.ones(window + (2, 4), np.float32)

        def run(a, b):
            return tfn.nn.conv2d(a, b, 1, "VALID")
    else:
        w = np.ones(window + (2, 1), np.float32)

        def run(a, b):
            return tfn.nn.depthwise_conv2d(a, b, [1, 1, 1, 1], "VALID")
    for f in (run, tfn.function(run)):
        with pytest.raises(tfn.errors.InvalidArgumentError, match="filter must not have zero elements"):
            f(x, w)
