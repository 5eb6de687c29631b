"""tfn.keras's layers against Keras 3 itself (TensorFlow backend): each pair made with the same arguments, given the
same weights (Keras's initial ones, perturbed), called on the same inputs; prints the largest difference per case
and exits 1 on a mismatch. Needs Keras and TensorFlow (not tfn dependencies), e.g. from the repository root:
`PYTHONPATH=<this tree>/.venv/shim /work/benchenv/venv/bin/python bench/keras_layers_agree.py`."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

import tfn  # noqa: E402

rng = np.random.default_rng(0)
FAILED = []


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def plain(layer, x):
    return layer(x)


def report(name, ys_keras, ys_tfn, atol=1e-4):
    ys_keras = [np.asarray(a) for a in (ys_keras if isinstance(ys_keras, (list, tuple)) else [ys_keras])]
    ys_tfn = [np.asarray(a) for a in (ys_tfn if isinstance(ys_tfn, (list, tuple)) else [ys_tfn])]
    same = len(ys_keras) == len(ys_tfn) and all(a.shape == b.shape for a, b in zip(ys_keras, ys_tfn))
    err = max(float(np.abs(a - b).max()) for a, b in zip(ys_keras, ys_tfn)) if same else float("inf")
    ok = same and all(np.allclose(a, b, atol=atol, rtol=1e-3) for a, b in zip(ys_keras, ys_tfn))
    print(f"{name:64s} {'ok' if ok else 'MISMATCH'}  max |diff| {err:.2e}")
    if not ok:
        FAILED.append(name)


def compare(name, make, x, call=plain):
    """make(module) builds the layer from keras.layers or tfn.keras.layers; call(layer, x) runs it."""
    lk, lt = make(keras.layers), make(tfn.keras.layers)
    call(lk, x)
    call(lt, x)
    weights = lk.get_weights()
    if [w.shape for w in weights] != [tuple(v.shape) for v in lt.weights]:
        print(f"{name:64s} WEIGHT SHAPES DIFFER: Keras {[w.shape for w in weights]}, tfn "
              f"{[tuple(v.shape) for v in lt.weights]}")
        FAILED.append(name)
        return
    if weights:
        weights = [w + 0.1 * rng.standard_normal(w.shape).astype(w.dtype) for w in weights]
        lk.set_weights(weights)
        lt.set_weights(weights)
    report(name, call(lk, x), call(lt, x))


x3, x4, pair = r(2, 7, 4), r(2, 6, 5, 3), [r(3, 4), r(3, 4)]
q, v, images = r(2, 4, 6), r(2, 5, 3), r(2, 7, 9, 3)
CASES = [
    ("LayerNormalization()", lambda m: m.LayerNormalization(), x3),
    ("LayerNormalization(axis=[1, 2])", lambda m: m.LayerNormalization(axis=[1, 2]), x3),
    ("LayerNormalization(center=False)", lambda m: m.LayerNormalization(center=False), x3),
    ("GroupNormalization(2)", lambda m: m.GroupNormalization(2), r(2, 6, 5, 4)),
    ("UnitNormalization()", lambda m: m.UnitNormalization(), x3),
    ("RMSNormalization()", lambda m: m.RMSNormalization(), x3),
    *[(f"{n}()", lambda m, n=n: getattr(m, n)(), pair)
      for n in ("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate")],
    ("Dot(1, normalize=True)", lambda m: m.Dot(1, normalize=True), pair),
    ("Dot((1, 2))", lambda m: m.Dot((1, 2)), [r(2, 3, 5), r(2, 4, 3)]),
    ("LeakyReLU()", lambda m: m.LeakyReLU(), x3),
    ("PReLU(shared_axes=[1])", lambda m: m.PReLU(shared_axes=[1]), x3),
    ("ELU(0.7)", lambda m: m.ELU(0.7), x3),
    ("Reshape((-1, 2))", lambda m: m.Reshape((-1, 2)), x3),
    ("Permute((2, 1))", lambda m: m.Permute((2, 1)), x3),
    ("RepeatVector(3)", lambda m: m.RepeatVector(3), r(2, 4)),
    ("Cropping2D(((1, 0), (2, 1)))", lambda m: m.Cropping2D(((1, 0), (2, 1))), x4),
    ("ZeroPadding2D(((1, 0), (2, 1)))", lambda m: m.ZeroPadding2D(((1, 0), (2, 1))), x4),
    ("UpSampling2D((2, 3))", lambda m: m.UpSampling2D((2, 3)), x4),
    ("UpSampling2D((2, 3), bilinear)", lambda m: m.UpSampling2D((2, 3), interpolation="bilinear"), x4),
    *[(f"Conv1D(4, 3, {kw})", lambda m, kw=kw: m.Conv1D(4, 3, **kw), x3)
      for kw in (dict(padding="causal", dilation_rate=2), dict(padding="same", strides=2), dict(groups=2),
                 dict(strides=3))],
    *[(f"{n}(3, {kw})", lambda m, n=n, kw=kw: getattr(m, n)(3, **kw), x3)
      for n in ("MaxPooling1D", "AveragePooling1D") for kw in (dict(), dict(padding="same", strides=2))],
    ("GlobalMaxPooling2D()", lambda m: m.GlobalMaxPooling2D(), x4),
    *[(f"SeparableConv2D(5, 3, {kw})", lambda m, kw=kw: m.SeparableConv2D(5, 3, **kw), x4)
      for kw in (dict(), dict(padding="same", strides=2, depth_multiplier=2))],
    *[(f"Conv2DTranspose(4, {kw})", lambda m, kw=kw: m.Conv2DTranspose(4, **{"kernel_size": 3, **kw}), x4)
      for kw in (dict(), dict(strides=2), dict(strides=2, padding="same"), dict(strides=3, kernel_size=2),
                 dict(strides=2, padding="same", output_padding=1), dict(strides=2, output_padding=1),
                 dict(dilation_rate=2, padding="same"), dict(kernel_size=4, strides=2, padding="same"))],
    *[(f"Conv1DTranspose(4, 3, {kw})", lambda m, kw=kw: m.Conv1DTranspose(4, 3, **kw), x3)
      for kw in (dict(), dict(strides=2, padding="same"), dict(strides=3, output_padding=1), dict(dilation_rate=2))],
    *[(f"{n}({kw})", lambda m, n=n, kw=kw: getattr(m, n)(*((5,) if n == "SeparableConv1D" else ()), 3, **kw), x3)
      for n in ("DepthwiseConv1D", "SeparableConv1D")
      for kw in (dict(), dict(strides=2, padding="same", depth_multiplier=2), dict(dilation_rate=2, padding="same"))],
    *[(f"{n}(5, {extra}, {kw})", lambda m, n=n, extra=extra, kw=kw: getattr(m, n)(5, **extra, **kw), x3)
      for n, extra in (("SimpleRNN", {}), ("LSTM", {}), ("GRU", {}), ("GRU", {"reset_after": False}))
      for kw in (dict(), dict(return_sequences=True, go_backwards=True, return_state=True))],
    ("Bidirectional(LSTM(3, return_sequences=True))",
     lambda m: m.Bidirectional(m.LSTM(3, return_sequences=True)), x3),
    ("Bidirectional(GRU(3, return_state=True), 'ave')",
     lambda m: m.Bidirectional(m.GRU(3, return_state=True), merge_mode="ave"), x3),
    ("TimeDistributed(Dense(3))", lambda m: m.TimeDistributed(m.Dense(3)), x3),
    ("Attention(use_scale=True)", lambda m: m.Attention(use_scale=True), [q, q]),
    ("Attention(score_mode='concat')", lambda m: m.Attention(score_mode="concat"), [q, q]),
    ("Rescaling(0.5, 1.0)", lambda m: m.Rescaling(0.5, 1.0), x3),
    *[(f"Resizing{args}", lambda m, args=args: m.Resizing(args[0], args[1], interpolation=args[2],
                                                        crop_to_aspect_ratio=args[3]), images)
      for args in ((14, 18, "bilinear", False), (4, 5, "bilinear", False), (5, 12, "nearest", False),
                   (3, 4, "nearest", False), (10, 10, "bilinear", True), (4, 6, "nearest", True))],
    ("Resizing(4, 5) unbatched", lambda m: m.Resizing(4, 5), images[0]),
    *[(f"CenterCrop{hw}", lambda m, hw=hw: m.CenterCrop(*hw), images) for hw in ((5, 5), (8, 4), (10, 12))],
]
for case in CASES:
    compare(*case)
compare("MultiHeadAttention(2, 3) with scores", lambda m: m.MultiHeadAttention(2, 3), [q, v],
        lambda layer, x: layer(x[0], x[1], return_attention_scores=True))
compare("MultiHeadAttention(2, 3, value_dim=2, output_shape=4) causal",
        lambda m: m.MultiHeadAttention(2, 3, value_dim=2, output_shape=4), q,
        lambda layer, x: layer(x, x, use_causal_mask=True))
compare("Attention() causal", lambda m: m.Attention(), [q, q], lambda layer, x: layer(x, use_causal_mask=True))

data = r(50, 4, 3) * 4 + 1
for axis in (-1, None, (1, 2)):  # (Keras reads adapt's statistics once: compared without set_weights)
    a, b = keras.layers.Normalization(axis=axis), tfn.keras.layers.Normalization(axis=axis)
    a.adapt(data)
    b.adapt(data)
    report(f"Normalization(axis={axis}).adapt", a(data), b(data))
a, b = keras.layers.ActivityRegularization(0.1, 0.2), tfn.keras.layers.ActivityRegularization(0.1, 0.2)
a(x3)
b(x3)
report("ActivityRegularization(0.1, 0.2)'s loss", a.losses[0], b.losses[0])

if FAILED:
    print("MISMATCHES:", ", ".join(FAILED))
    sys.exit(1)
print("all cases agree")
