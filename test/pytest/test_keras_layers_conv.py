"""tfn.keras's Conv1D family, SeparableConv2D and Conv2DTranspose against direct NumPy loops (outputs, output
sizes, gradients of inputs and weights), the 1-D and global poolings, and a 1-D convolutional model that trains."""
import numpy as np
import pytest
from keras_layer_checks import check_config, check_gradients, compiled_equals_eager, fit_reduces_loss, rand

import tfn as tf

L = tf.keras.layers


def conv1d_ref(x, k, b=None, stride=1, padding="valid", dilation=1, groups=1):
    """Direct loops: out[n, t, f] = sum_{j, c} xp[n, t * stride + j * dilation, c] k[j, c, f] (per group)."""
    n, steps, cin = x.shape
    ks, cg, filters = k.shape
    span = (ks - 1) * dilation + 1
    if padding == "causal":
        x = np.pad(x, ((0, 0), (span - 1, 0), (0, 0)))
    elif padding == "same":
        out_len = -(-steps // stride)
        total = max((out_len - 1) * stride + span - steps, 0)
        x = np.pad(x, ((0, 0), (total // 2, total - total // 2), (0, 0)))
    out_len = (x.shape[1] - span) // stride + 1
    fg = filters // groups
    out = np.zeros((n, out_len, filters), x.dtype)
    for t in range(out_len):
        for j in range(ks):
            xs = x[:, t * stride + j * dilation]
            for g in range(groups):
                out[:, t, g * fg:(g + 1) * fg] += xs[:, g * cg:(g + 1) * cg] @ k[j, :, g * fg:(g + 1) * fg]
    return out if b is None else out + b


@pytest.mark.parametrize("padding,stride,dilation,groups", [
    ("valid", 1, 1, 1), ("same", 2, 1, 1), ("causal", 1, 2, 1), ("same", 1, 3, 1), ("valid", 3, 1, 2),
    ("causal", 1, 1, 4)])
def test_conv1d_matches_loops(padding, stride, dilation, groups):
    x = rand(2, 9, 4)
    layer = L.Conv1D(8, 3, strides=stride, padding=padding, dilation_rate=dilation, groups=groups)
    layer(x)
    assert [(v.name.split("/")[-1], tuple(v.shape)) for v in layer.weights] == [("kernel:0", (3, 4 // groups, 8)),
                                                                               ("bias:0", (8,))]
    k, b = rand(3, 4 // groups, 8), rand(8)
    layer.set_weights([k, b])
    np.testing.assert_allclose(compiled_equals_eager(layer, x), conv1d_ref(x, k, b, stride, padding, dilation, groups),
                               rtol=1e-4, atol=1e-5)


def test_conv1d_causal_sees_only_the_past_gradients_and_config():
    layer = L.Conv1D(2, 3, padding="causal", dilation_rate=2, activation="tanh")
    x = rand(1, 8, 3)
    base = layer(x).numpy()
    x2 = x.copy()
    x2[:, 5:] += 1.0  # changing steps >= 5 leaves outputs 0..4 alone
    np.testing.assert_allclose(layer(x2).numpy()[:, :5], base[:, :5], rtol=1e-6)
    check_gradients(L.Conv1D(3, 2, strides=2, padding="same", bias_initializer="random_normal"), rand(2, 5, 2),
                    lambda x, k, b: conv1d_ref(x, k, b, 2, "same"))
    check_config(layer, x)
    with pytest.raises(ValueError, match="padding"):
        L.Conv1D(2, 3, padding="full")
    with pytest.raises(ValueError, match="evenly divisible"):
        L.Conv1D(3, 3, groups=2)
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.Conv1D(2, 3)(rand(2, 4))


def pool1d_ref(x, k, s, padding, kind):
    steps = x.shape[1]
    if padding == "same":
        out_len = -(-steps // s)
        before = max((out_len - 1) * s + k - steps, 0) // 2
    else:
        out_len, before = (steps - k) // s + 1, 0
    reduce = np.max if kind == "max" else np.mean
    return np.stack([reduce(x[:, max(t * s - before, 0):min(t * s - before + k, steps)], axis=1)
                     for t in range(out_len)], axis=1)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k,s,padding", [(2, None, "valid"), (3, 2, "same"), (3, 1, "valid")])
def test_pooling1d_matches_reference(kind, k, s, padding):
    cls = L.MaxPooling1D if kind == "max" else L.AveragePooling1D
    x = rand(2, 7, 3)
    layer = cls(k, strides=s, padding=padding)
    np.testing.assert_allclose(compiled_equals_eager(layer, x), pool1d_ref(x, k, s or k, padding, kind), rtol=1e-5,
                               atol=1e-6)
    check_config(layer, x)


def test_global_poolings_and_aliases():
    x1, x2 = rand(2, 5, 3), rand(2, 4, 5, 3)
    np.testing.assert_allclose(L.GlobalAveragePooling1D()(x1).numpy(), x1.mean(1), rtol=1e-5)
    np.testing.assert_allclose(L.GlobalMaxPooling1D(keepdims=True)(x1).numpy(), x1.max(1, keepdims=True))
    np.testing.assert_allclose(compiled_equals_eager(L.GlobalMaxPooling2D(), x2), x2.max((1, 2)))
    assert L.GlobalMaxPool1D is L.GlobalMaxPooling1D and L.GlobalAvgPool2D is L.GlobalAveragePooling2D
    assert L.MaxPool1D is L.MaxPooling1D and L.AvgPool1D is L.AveragePooling1D and L.GlobalMaxPool2D is \
        L.GlobalMaxPooling2D and L.GlobalAvgPool1D is L.GlobalAveragePooling1D
    with pytest.raises(ValueError, match="expected ndim=4"):
        L.GlobalMaxPooling2D()(x1)


def conv2d_ref(x, k, stride=(1, 1), same=False, dilation=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, f = k.shape
    sh, sw = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    if same:
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
        ph, pw = max((oh - 1) * stride[0] + sh - h, 0), max((ow - 1) * stride[1] + sw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh, ow = (x.shape[1] - sh) // stride[0] + 1, (x.shape[2] - sw) // stride[1] + 1
    out = np.zeros((n, oh, ow, f), x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    out[:, i, j] += x[:, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]] @ k[a, b]
    return out


def separable_ref(x, dk, pk, b, stride=(1, 1), same=False, dilation=(1, 1)):
    c, m = dk.shape[2], dk.shape[3]
    depth = np.concatenate([conv2d_ref(x[..., ci:ci + 1], dk[:, :, ci:ci + 1, mi:mi + 1], stride, same, dilation)
                            for ci in range(c) for mi in range(m)], axis=-1)
    return np.einsum("nhwc,cf->nhwf", depth, pk[0, 0]) + b


@pytest.mark.parametrize("padding,stride,dilation,multiplier", [("valid", 1, 1, 1), ("same", 2, 1, 2),
                                                                 ("same", 1, 2, 1)])
def test_separable_conv2d_matches_reference(padding, stride, dilation, multiplier):
    layer = L.SeparableConv2D(5, 3, strides=stride, padding=padding, dilation_rate=dilation,
                              depth_multiplier=multiplier)
    x = rand(2, 7, 6, 3)
    layer(x)
    assert [(v.name.split("/")[-1], tuple(v.shape)) for v in layer.weights] == [
        ("depthwise_kernel:0", (3, 3, 3, multiplier)), ("pointwise_kernel:0", (1, 1, 3 * multiplier, 5)),
        ("bias:0", (5,))]
    dk, pk, b = rand(3, 3, 3, multiplier), rand(1, 1, 3 * multiplier, 5), rand(5)
    layer.set_weights([dk, pk, b])
    want = separable_ref(x, dk, pk, b, (stride,) * 2, padding == "same", (dilation,) * 2)
    np.testing.assert_allclose(compiled_equals_eager(layer, x), want, rtol=1e-4, atol=1e-4)
    check_config(layer, x)


def test_separable_conv2d_gradients():
    layer = L.SeparableConv2D(2, 2, padding="same", depth_multiplier=2, bias_initializer="random_normal")
    check_gradients(layer, rand(1, 3, 3, 2), lambda x, dk, pk, b: separable_ref(x, dk, pk, b, same=True))


def conv_transpose_ref(x, k, stride, padding, output_padding=None, dilation=(1, 1)):
    """Scatter form: every input pixel adds its kernel-weighted copy at stride-spaced positions; then Keras's
    cropping and output size."""
    n, h, w, c = x.shape
    kh, kw, f, _ = k.shape
    eff = [(kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1]
    sizes, crops = [], []
    for size, s, e, op in zip((h, w), stride, eff, output_padding or (None, None)):
        if padding == "valid":
            out = (size - 1) * s + max(e, s) + (0 if op is None else op - (max(e, s) - e))
            crop = 0
        else:
            out = size * s if op is None else (size - 1) * s + e % 2 + op
            total = s + e - 2 if op is None else e + e % 2 - 2 + op
            crop = e - 1 - min(total // 2 + total % 2, e - 1)
        sizes.append(out)
        crops.append(crop)
    full = np.zeros((n, (h - 1) * stride[0] + eff[0] + 10, (w - 1) * stride[1] + eff[1] + 10, f), np.float64)
    for i in range(h):
        for j in range(w):
            for a in range(kh):
                for b in range(kw):
                    full[:, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]] += x[:, i, j] @ k[a, b].T
    return full[:, crops[0]:crops[0] + sizes[0], crops[1]:crops[1] + sizes[1]]


@pytest.mark.parametrize("kernel,stride,padding,output_padding,dilation", [
    (3, 1, "valid", None, 1), (3, 2, "valid", None, 1), (3, 2, "same", None, 1), (2, 3, "valid", None, 1),
    (4, 2, "same", None, 1), (3, 2, "same", 1, 1), (3, 2, "valid", 1, 1), (3, 1, "same", None, 2),
    ((2, 3), (2, 1), "same", None, 1)])
def test_conv2d_transpose_matches_scatter_reference(kernel, stride, padding, output_padding, dilation):
    layer = L.Conv2DTranspose(4, kernel, strides=stride, padding=padding, output_padding=output_padding,
                              dilation_rate=dilation, use_bias=False)
    x = rand(2, 4, 5, 3)
    layer(x)
    k = layer.kernel.numpy()
    assert k.shape == (*((kernel,) * 2 if isinstance(kernel, int) else kernel), 4, 3)
    st = (stride,) * 2 if isinstance(stride, int) else stride
    op = None if output_padding is None else (output_padding,) * 2
    want = conv_transpose_ref(x.astype(np.float64), k, st, padding, op, (dilation,) * 2)
    got = compiled_equals_eager(layer, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_is_conv2d_input_gradient_and_trains_its_kernel():
    x = rand(2, 6, 6, 3)  # 6 -> 3 with SAME, stride 2: no padding before, so the sizes line up exactly
    conv = L.Conv2D(4, 3, strides=2, padding="same", use_bias=False)
    xt = tf.constant(x)
    g = rand(2, 3, 3, 4)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(conv(xt) * g)
    transpose = L.Conv2DTranspose(3, 3, strides=2, padding="same", use_bias=False)
    transpose(g)
    transpose.set_weights([conv.kernel.numpy()])  # Conv2D's (kh, kw, in, out) kernel is the transpose's (kh, kw, f, c)
    np.testing.assert_allclose(transpose(g).numpy(), tape.gradient(y, xt).numpy(), rtol=1e-4, atol=1e-5)
    check_gradients(L.Conv2DTranspose(2, 2, strides=2, bias_initializer="random_normal"), rand(1, 2, 2, 2),
                    lambda x, k, b: conv_transpose_ref(x, k, (2, 2), "valid") + b)
    check_config(L.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1), x)
    with pytest.raises(ValueError, match="output_padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)


def test_conv1d_model_trains():
    tf.random.set_seed(6)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((128, 16, 2)).astype(np.float32)
    y = (x[:, 1:, 0] - x[:, :-1, 1]).mean(1, keepdims=True).astype(np.float32) * 4
    model = tf.keras.Sequential([L.Conv1D(8, 3, padding="causal", activation="relu"), L.MaxPooling1D(),
                                 L.Conv1D(8, 3, padding="same", dilation_rate=2), L.AveragePooling1D(2),
                                 L.GlobalAveragePooling1D(), L.Dense(1)])
    fit_reduces_loss(model, x, y, epochs=12, factor=0.6, optimizer=tf.keras.optimizers.Adam(0.01))


def test_separable_and_transposed_model_trains():
    tf.random.set_seed(7)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 6, 6, 2)).astype(np.float32)
    y = np.repeat(np.repeat(x[..., :1], 2, axis=1), 2, axis=2)  # learn a 2x nearest upsampling of channel 0
    model = tf.keras.Sequential([L.SeparableConv2D(4, 3, padding="same"),
                                 L.Conv2DTranspose(1, 2, strides=2)])
    fit_reduces_loss(model, x, y, epochs=12, factor=0.5, optimizer=tf.keras.optimizers.Adam(0.02))


def depthwise1d_ref(x, k, stride=1, padding="valid", dilation=1):
    """Channel c's m-th output: a one-channel conv1d of x[..., c] with k[:, c, m] (output channel c * M + m)."""
    c, m = k.shape[1], k.shape[2]
    return np.concatenate([conv1d_ref(x[..., ci:ci + 1], k[:, ci:ci + 1, mi:mi + 1], None, stride, padding, dilation)
                           for ci in range(c) for mi in range(m)], axis=-1)


@pytest.mark.parametrize("stride,padding,dilation,multiplier", [(1, "valid", 1, 1), (2, "same", 1, 2),
                                                                 (1, "same", 2, 1)])
def test_depthwise_and_separable_conv1d_match_loops(stride, padding, dilation, multiplier):
    x = rand(2, 9, 3)
    dw = L.DepthwiseConv1D(3, strides=stride, padding=padding, dilation_rate=dilation, depth_multiplier=multiplier)
    dw(x)
    k, b = rand(3, 3, multiplier), rand(3 * multiplier)
    dw.set_weights([k, b])
    want = depthwise1d_ref(x, k, stride, padding, dilation) + b
    np.testing.assert_allclose(compiled_equals_eager(dw, x), want, rtol=1e-4, atol=1e-5)
    sep = L.SeparableConv1D(4, 3, strides=stride, padding=padding, dilation_rate=dilation,
                            depth_multiplier=multiplier)
    sep(x)
    assert [tuple(v.shape) for v in sep.weights] == [(3, 3, multiplier), (1, 3 * multiplier, 4), (4,)]
    pk, pb = rand(1, 3 * multiplier, 4), rand(4)
    sep.set_weights([k, pk, pb])
    want = depthwise1d_ref(x, k, stride, padding, dilation) @ pk[0] + pb
    np.testing.assert_allclose(compiled_equals_eager(sep, x), want, rtol=1e-4, atol=1e-5)
    check_config(sep, x)
    check_config(dw, x)


@pytest.mark.parametrize("stride,padding,output_padding", [(1, "valid", None), (2, "same", None), (3, "valid", 1),
                                                           (2, "same", 1)])
def test_conv1d_transpose_matches_scatter_reference(stride, padding, output_padding):
    x = rand(2, 5, 3)
    layer = L.Conv1DTranspose(4, 3, strides=stride, padding=padding, output_padding=output_padding)
    layer(x)
    k, b = rand(3, 4, 3), rand(4)
    layer.set_weights([k, b])
    op = None if output_padding is None else (0, output_padding)
    want = conv_transpose_ref(x[:, None].astype(np.float64), k[None], (1, stride), padding, op)[:, 0] + b
    np.testing.assert_allclose(compiled_equals_eager(layer, x), want, rtol=1e-4, atol=1e-4)
    check_gradients(L.Conv1DTranspose(2, 2, strides=2, bias_initializer="random_normal"), rand(1, 3, 2),
                    lambda x, k, b: conv_transpose_ref(x[:, None], k[None], (1, 2), "valid")[:, 0] + b)
    check_config(layer, x)
