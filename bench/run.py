"""tfn's benchmark suite (issue 6): `python bench/run.py [--quick]` prints one table of medians and targets."""
import argparse
import atexit
import ctypes
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# --target must take effect before NumPy, JAX and tfn are imported: it sets tfn's TFN_TARGET_FEATURES and asks
# OpenBLAS (OPENBLAS_CORETYPE, honoured by DYNAMIC_ARCH builds such as NumPy's), XLA (--xla_cpu_max_isa) and
# TensorFlow's oneDNN kernels (ONEDNN_MAX_CPU_ISA) for the same instruction set, so every column runs code for the
# one target.
TARGETS = {"native": {},
           "avx512": {"OPENBLAS_CORETYPE": "SkylakeX", "XLA_FLAGS": "--xla_cpu_max_isa=AVX512",
                      "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
           "avx2": {"OPENBLAS_CORETYPE": "Haswell", "XLA_FLAGS": "--xla_cpu_max_isa=AVX2",
                    "ONEDNN_MAX_CPU_ISA": "AVX2"}}


def _target_from_argv(argv):
    """The value of --target in argv ('native' when absent), its environment set before any framework loads."""
    name = "native"
    for i, a in enumerate(argv):
        if a.startswith("--target="):
            name = a.split("=", 1)[1]
        elif a == "--target" and i + 1 < len(argv):
            name = argv[i + 1]
    if name in TARGETS:
        os.environ["TFN_TARGET_FEATURES"] = name
        for k, v in TARGETS[name].items():
            os.environ[k] = (os.environ.get(k, "") + " " + v).strip() if k == "XLA_FLAGS" else v
    return name


_target_from_argv(sys.argv[1:])

import numpy as np  # noqa: E402

# Compile into a private, initially empty artifact cache: first-call figures must not hit an old artifact.
_CACHE_ROOT = tempfile.mkdtemp(prefix="tfn-bench-")
atexit.register(shutil.rmtree, _CACHE_ROOT, ignore_errors=True)
os.environ["TFN_CACHE_DIR"] = os.path.join(_CACHE_ROOT, "main")

import tfn  # noqa: E402

perf = time.perf_counter


SETTLE_S = 0.1  # pause before each framework's measurement


class Config:
    """Repetition counts: --quick trades precision for a run well under two minutes."""

    def __init__(self, quick):
        self.quick = quick
        self.repeats = 5 if quick else 15        # timed samples per measurement
        self.sample_s = 0.01 if quick else 0.05  # target length of one sample (an inner loop of calls)
        self.case_s = 1.0 if quick else 4.0      # cap on the time spent sampling one slow call
        self.first_reps = 3 if quick else 7      # cold first calls / new processes
        self.big_matmul = not quick              # 1024^3 takes seconds per tfn call
        self.big_compile = not quick             # the 1,000-op first call takes ~2 s
        self.trace_reps = {100: 5, 1000: 3, 10000: 1} if quick else {100: 9, 1000: 5, 10000: 3}


def median_time(fn, cfg):
    """Median seconds per call of fn() after warm-up: repeats of an inner loop sized to cfg.sample_s. tfn functions
    that started on quick code (tiered compilation) are timed on their optimised code."""
    fn()
    tfn.config.wait_for_optimized_code()
    t = perf()
    fn()
    one = perf() - t
    inner = max(1, int(cfg.sample_s / max(one, 1e-9)))
    repeats = cfg.repeats if inner > 1 else max(3, min(cfg.repeats, int(cfg.case_s / one)))
    samples = []
    for _ in range(repeats):
        t = perf()
        for _ in range(inner):
            fn()
        samples.append((perf() - t) / inner)
    return statistics.median(samples)


# ---- frameworks: each builds a zero-argument callable running fn on given NumPy inputs -------------------------

class Framework:
    """One column of the table: how to make inputs, how to wrap a function, which op namespace it uses."""

    def __init__(self, name, ns, to_input, wrap, sync=lambda y: y):
        self.name, self.ns, self.to_input, self.wrap, self.sync = name, ns, to_input, wrap, sync

    def callable(self, build, arrays):
        """A zero-argument callable running build(ns) on the inputs, synchronised, already called once."""
        fn = self.wrap(build(self.ns))
        inputs = [self.to_input(a) for a in arrays]

        def call():
            return self.sync(fn(*inputs))
        call()
        return call


def _frameworks():
    """tfn compiled, tfn eager, NumPy, then TensorFlow and JAX when they can be imported."""
    fws = [Framework("tfn compiled", tfn, tfn.constant, tfn.function),
           Framework("tfn eager", tfn, tfn.constant, lambda f: f),
           Framework("NumPy", np, lambda a: a, lambda f: f)]
    try:
        import tensorflow as tf
        fws.append(Framework("TF function", tf, tf.constant, tf.function))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        fws.append(Framework("JAX jit", jnp, jnp.asarray, jax.jit, lambda y: y.block_until_ready()))
    except ImportError:
        pass
    return fws


def measure_all(fws, build, arrays, cfg):
    """{framework name: median seconds or an error string} for build(ns) on the inputs."""
    out = {}
    for fw in fws:
        # TF's and XLA's thread pools spin a while after their last op; let them go idle before timing the next
        # framework, so no column pays for the previous one's threads.
        time.sleep(SETTLE_S)
        try:
            out[fw.name] = median_time(fw.callable(build, arrays), cfg)
        except NotImplementedError as e:
            out[fw.name] = str(e)
        except Exception as e:  # a framework lacking an op must not stop the suite
            out[fw.name] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    return out


# ---- the functions benchmarked ----------------------------------------------------------------------------------

def add_one(ns):
    return lambda x: x + 1


def arith_chain(n):
    """n elementwise arithmetic ops, values kept near 1."""
    def build(ns):
        def chain(x):
            for i in range(n):
                k = i % 4
                x = x * 0.999 if k == 0 else x + 0.001 if k == 1 else x - 0.0005 if k == 2 else x / 1.0001
            return x
        return chain
    return build


def transcendental_chain(n):
    """n elementwise ops cycling tanh, *0.5, exp, -1, +0.1 (two in five transcendental), values bounded."""
    def build(ns):
        def chain(x):
            for i in range(n):
                k = i % 5
                x = ns.tanh(x) if k == 0 else x * 0.5 if k == 1 else ns.exp(x) if k == 2 else (
                    x - 1.0 if k == 3 else x + 0.1)
            return x
        return chain
    return build


def matmul(ns):
    return lambda a, b: ns.matmul(a, b)


def dense(x, w, b):
    return tfn.tanh(tfn.matmul(x, w) + b)


def rand(*shape):
    return np.random.default_rng(0).random(shape, dtype=np.float32)


# ---- rows of the table ------------------------------------------------------------------------------------------

def row(case, unit, values, target="", met=None, ratio=None, note=""):
    """One table row: values maps a column to seconds (converted to unit), a number in unit, or a string."""
    return {"case": case, "unit": unit, "values": values, "target": target, "met": met, "ratio": ratio,
            "note": note}


def _speedup(times, over="NumPy", of="tfn compiled"):
    """times[over] / times[of] when both are numbers, else None."""
    a, b = times.get(over), times.get(of)
    return a / b if isinstance(a, float) and isinstance(b, float) and b > 0 else None


def case_overhead(fws, cfg):
    """(a) per-call overhead of x + 1 on 4 float32."""
    t = measure_all(fws, add_one, [rand(4)], cfg)
    c = t["tfn compiled"]
    return [row("(a) x + 1, 4 float32", "us", t, "tfn compiled <= 5 us", c * 1e6 <= 5, _speedup(t))]


def case_chains(fws, cfg):
    """(b) 50-op elementwise chains on 1,000 and 1,000,000 float32, arithmetic-only and with exp/tanh."""
    rows = []
    for size in (1000, 1_000_000):
        for label, build, need in (("arith", arith_chain(50), 15.0), ("exp/tanh", transcendental_chain(50), 2.0)):
            t = measure_all(fws, build, [rand(size)], cfg)
            c, s = t["tfn compiled"], _speedup(t)
            if size == 1000:
                target, met = "tfn compiled <= 15 us", c * 1e6 <= 15
            else:
                target, met = f"tfn >= {need:g}x NumPy", s is not None and s >= need
            rows.append(row(f"(b) 50-op {label}, {size:,} f32", "us" if size == 1000 else "ms", t, target, met, s))
    return rows


def _reduce_sum(axis):
    """sum over axis (None: everything) in namespace ns (tfn/TF: reduce_sum; NumPy/JAX: sum)."""
    def build(ns):
        fn = getattr(ns, "reduce_sum", None) or ns.sum
        return lambda x: fn(x, axis=axis)
    return build


def case_reductions(fws, cfg):
    """(g) float32 sums: all of 1,000,000 elements, and each row of 1024x1024."""
    rows = []
    for label, axis, array in (("all 1,000,000", None, rand(1_000_000)), ("rows of 1024x1024", 1, rand(1024, 1024))):
        t = measure_all(fws, _reduce_sum(axis), [array], cfg)
        rows.append(row(f"(g) reduce_sum, {label} f32", "us", t, "", None, _speedup(t)))
    return rows


def _sort_build(kind):
    """sort (or the stable argsort) of a line in namespace ns: NumPy's np.sort / np.argsort(kind="stable"), TF's and
    tfn's tf.sort / tf.argsort(stable=True), jnp.sort / jnp.argsort(stable=True)."""
    def build(ns):
        if kind == "sort":
            return lambda x: ns.sort(x)
        if ns is np:
            return lambda x: np.argsort(x, kind="stable")
        return lambda x: ns.argsort(x, stable=True)
    return build


def case_sort(fws, cfg):
    """(n) sort and stable argsort of 1,000,000 float32 (normal values)."""
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    rows = []
    for kind in ("sort", "argsort"):
        t = measure_all(fws, _sort_build(kind), [x], cfg)
        rows.append(row(f"(n) {kind}, 1,000,000 f32", "ms", t, "", None, _speedup(t)))
    return rows


def _blas_threads():
    """(get, set) for the thread count of the BLAS NumPy loaded (OpenBLAS), or (None, None)."""
    libs = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower() and ".so" in line}
    for path in sorted(libs):
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", "_64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    return get, put
    return None, None


def _numpy_single_thread(a, b, cfg):
    """NumPy matmul seconds with BLAS limited to one thread in this process, or None if that can't be set."""
    get, put = _blas_threads()
    if get is None:
        return None
    before = get()
    put(1)
    try:
        return median_time(lambda: a @ b, cfg)
    finally:
        put(before)


MATMUL_TARGET = "tfn >= 0.9x the faster of NumPy and JAX"


def case_matmul(fws, cfg):
    """(c) float32 matmul n^3 in GFLOP/s, with NumPy at its default threads and at one thread; then tfn with another
    process busy on one CPU (matmul_busy_row)."""
    rows = []
    for n in (256, 1024) if cfg.big_matmul else (256,):
        a, b = rand(n, n), rand(n, n)
        t = measure_all(fws, matmul, [a, b], cfg)
        t["NumPy 1 thread"] = _numpy_single_thread(a, b, cfg) or "unavailable"
        gf = {k: (2 * n**3 / v / 1e9 if isinstance(v, float) else v) for k, v in t.items()}
        best = min((k for k in ("NumPy", "JAX jit") if isinstance(t.get(k), float)), key=t.get, default=None)
        ratio = _speedup(t, over=best) if best else None
        one = _speedup(t, over="NumPy 1 thread")
        note = f"speedup: tfn / the faster of NumPy and JAX ({best})"
        note += "" if one is None else f"; tfn / NumPy 1 thread {one:.2f}x"
        rows.append(row(f"(c) matmul {n}^3 f32", "GFLOP/s", gf, MATMUL_TARGET, ratio is not None and ratio >= 0.9,
                        ratio, note))
    if not cfg.big_matmul:
        rows.append(row("(c) matmul 1024^3 f32", "GFLOP/s", {}, MATMUL_TARGET, None, note="skipped with --quick"))
    if len(os.sched_getaffinity(0)) > 1:
        rows += [matmul_busy_row(fws, n, cfg) for n in ((256, 1024) if cfg.big_matmul else (256,))]
    return rows


BUSY_LOOP = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


class _busy_cpu:
    """While open, another process spins on one CPU of this process's (its last): a core taken by someone else."""

    def __enter__(self):
        cpu = max(os.sched_getaffinity(0))
        self.proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(cpu)])
        time.sleep(SETTLE_S)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


class _one_cpu:
    """While open, every thread of this process (tfn's worker threads included) runs on one CPU only."""

    def __enter__(self):
        cpu = min(os.sched_getaffinity(0))
        self.saved = {}
        for tid in map(int, os.listdir("/proc/self/task")):
            try:
                self.saved[tid] = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, {cpu})
            except OSError:  # the thread ended meanwhile
                pass
        return self

    def __exit__(self, *exc):
        for tid, cpus in self.saved.items():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass


BUSY_TARGET = "tfn >= 0.5x its 1-core speed with a CPU busy"


def matmul_busy_row(fws, n, cfg):
    """(c) tfn's matmul while another process spins on one of the CPUs, against its time on one CPU (all its threads
    pinned there) and alone; NumPy alone and beside the busy process for comparison."""
    a, b = rand(n, n), rand(n, n)
    tfn_fn = next(fw for fw in fws if fw.name == "tfn compiled").callable(matmul, [a, b])
    alone = median_time(tfn_fn, cfg)
    with _one_cpu():
        one = median_time(tfn_fn, cfg)
    numpy_alone = median_time(lambda: a @ b, cfg)
    with _busy_cpu():
        busy = median_time(tfn_fn, cfg)
        numpy_busy = median_time(lambda: a @ b, cfg)
    ratio = one / busy
    note = (f"speedup: tfn 1-CPU time / tfn time with a CPU busy; tfn alone {alone * 1e3:.3g} ms, on 1 CPU "
            f"{one * 1e3:.3g} ms (busy / alone {busy / alone:.2f}x); NumPy alone {numpy_alone * 1e3:.3g} ms "
            f"(busy / alone {numpy_busy / numpy_alone:.2f}x)")
    return row(f"(c) matmul {n}^3 f32, a CPU busy", "ms", {"tfn compiled": busy, "NumPy": numpy_busy}, BUSY_TARGET,
               ratio >= 0.5, ratio, note)


def _conv_numpy(image, kernel, bias):
    """VALID 2-D convolution, NHWC x HWIO, by im2col and one tensordot (NumPy's best plain route)."""
    kh, kw = kernel.shape[:2]
    win = np.lib.stride_tricks.sliding_window_view(image, (kh, kw), axis=(1, 2))  # N,H',W',C,kh,kw
    return np.tensordot(win, kernel, axes=([4, 5, 3], [0, 1, 2])) + bias


def conv(ns):
    """The guide's Conv2D(100, 3) forward pass in namespace ns; NotImplementedError where ns has no conv."""
    if ns is np:
        return _conv_numpy
    nn = getattr(ns, "nn", None)
    if nn is not None and hasattr(nn, "conv2d"):
        return lambda image, kernel, bias: nn.conv2d(image, kernel, 1, "VALID") + bias
    if ns.__name__.startswith("jax"):
        import jax
        return lambda image, kernel, bias: jax.lax.conv_general_dilated(
            image, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")) + bias
    raise NotImplementedError("not supported yet")


def case_conv(fws, cfg):
    """(d) the guide's conv: input 1x200x200x100, 100 filters 3x3, VALID, with bias."""
    arrays = [rand(1, 200, 200, 100), rand(3, 3, 100, 100) * 0.01, rand(100)]
    t = measure_all(fws, conv, arrays, cfg)
    flops = 2 * 198 * 198 * 100 * 3 * 3 * 100
    note = f"{flops / 1e9:.1f} GFLOP per call"
    over_eager = _speedup(t, over="tfn eager")
    if over_eager is not None:
        note += f"; tfn compiled / tfn eager {over_eager:.2f}x"
    return [row("(d) conv 1x200x200x100, 100x3x3", "ms", t, "tfn compiled >= 1.5x faster than tfn eager",
                over_eager is not None and over_eager >= 1.5, _speedup(t), note), _keras_conv_row(fws, cfg),
            _depthwise_row(fws, cfg)]


def _depthwise_numpy(image, kernel, bias):
    """SAME depthwise 3 x 3 convolution, multiplier 1: the sum of the 9 shifted, zero-padded images times their taps."""
    kh, kw = kernel.shape[:2]
    padded = np.pad(image, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    h, w = image.shape[1:3]
    out = bias + padded[:, :h, :w] * kernel[0, 0, :, 0]
    for i in range(kh):
        for j in range(kw):
            if i or j:
                out += padded[:, i:i + h, j:j + w] * kernel[i, j, :, 0]
    return out


def depthwise(ns):
    """A MobileNet block's depthwise 3 x 3 SAME convolution plus bias in namespace ns."""
    if ns is np:
        return _depthwise_numpy
    nn = getattr(ns, "nn", None)
    if nn is not None and hasattr(nn, "depthwise_conv2d"):
        return lambda image, kernel, bias: nn.depthwise_conv2d(image, kernel, [1, 1, 1, 1], "SAME") + bias
    if ns.__name__.startswith("jax"):
        import jax  # optional dependency
        return lambda image, kernel, bias: jax.lax.conv_general_dilated(
            image, kernel.reshape(3, 3, 1, -1), (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=image.shape[-1]) + bias
    raise NotImplementedError("not supported yet")


def _depthwise_row(fws, cfg):
    """(d) depthwise 3 x 3 SAME on 8x56x56x128 (a MobileNet block), with bias: compiled vs eager."""
    arrays = [rand(8, 56, 56, 128), rand(3, 3, 128, 1), rand(128)]
    t = measure_all(fws, depthwise, arrays, cfg)
    over_eager = _speedup(t, over="tfn eager")
    note = f"{2 * 8 * 56 * 56 * 128 * 9 / 1e6:.0f} MFLOP per call"
    if over_eager is not None:
        note += f"; tfn compiled / tfn eager {over_eager:.2f}x"
    return row("(d) depthwise 8x56x56x128, 3x3 SAME", "ms", t, "tfn compiled >= 1.5x faster than tfn eager",
               over_eager is not None and over_eager >= 1.5, _speedup(t), note)


def _keras_conv_row(fws, cfg):
    """(d) the guide's timing: keras.layers.Conv2D(100, 3) on zeros [1, 200, 200, 100], function vs eager."""
    layer = tfn.keras.layers.Conv2D(100, 3)
    image = tfn.zeros([1, 200, 200, 100])
    conv_fn = tfn.function(lambda image: layer(image))
    layer(image)
    t = {"tfn compiled": median_time(lambda: conv_fn(image).numpy(), cfg),
         "tfn eager": median_time(lambda: layer(image).numpy(), cfg)}
    if any(fw.name == "TF function" for fw in fws):
        import tensorflow as tf  # optional dependency
        tf_layer, tf_image = tf.keras.layers.Conv2D(100, 3), tf.zeros([1, 200, 200, 100])
        tf_fn = tf.function(lambda image: tf_layer(image))
        time.sleep(SETTLE_S)
        t["TF function"] = median_time(lambda: tf_fn(tf_image).numpy(), cfg)
    s = _speedup(t, over="tfn eager")
    return row("(d) keras Conv2D(100, 3) layer, guide", "ms", t, "function >= 1.5x faster than eager",
               s is not None and s >= 1.5, s, "speedup: tfn eager / tfn compiled (the guide's Keras conv)")


# ---- a training step (issue 14) -----------------------------------------------------------------------------------

MLP_LR = 0.01


def _mlp_data():
    """Batch 128 of 784 features, one-hot labels of 10 classes, and MLP 784-256-256-10 initial parameters."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    params = [rng.standard_normal((784, 256), dtype=np.float32) * 0.05, np.zeros(256, np.float32),
              rng.standard_normal((256, 256), dtype=np.float32) * 0.05, np.zeros(256, np.float32),
              rng.standard_normal((256, 10), dtype=np.float32) * 0.05, np.zeros(10, np.float32)]
    return x, y, params


def _mlp_loss(params, x, y):
    """Softmax cross-entropy of the MLP's logits (ReLU hidden layers), averaged over the batch."""
    w1, b1, w2, b2, w3, b3 = params
    h = tfn.maximum(tfn.matmul(x, w1) + b1, 0.0)
    h = tfn.maximum(tfn.matmul(h, w2) + b2, 0.0)
    logits = tfn.matmul(h, w3) + b3
    m = tfn.reduce_max(logits, axis=1, keepdims=True)
    log_probs = logits - m - tfn.math.log(tfn.reduce_sum(tfn.exp(logits - m), axis=1, keepdims=True))
    return -tfn.reduce_mean(tfn.reduce_sum(y * log_probs, axis=1))


def tfn_train_step(params, x, y):
    """One SGD step of the MLP on tfn variables: tape, gradients, assign_sub; returns the loss."""
    with tfn.GradientTape() as tape:
        loss = _mlp_loss(params, x, y)
    for p, g in zip(params, tape.gradient(loss, params)):
        p.assign_sub(MLP_LR * g)
    return loss


def _numpy_train_step(params, x, y):
    """The same step with a hand-written backward pass in NumPy."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    d3 = (p - y) / x.shape[0]
    d2 = (d3 @ w3.T) * (z2 > 0)
    d1 = (d2 @ w2.T) * (z1 > 0)
    grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
    for q, g in zip(params, grads):
        q -= MLP_LR * g


def _train_callables(fws):
    """{column: zero-argument step} for the frameworks that can run the training step."""
    x, y, init = _mlp_data()
    names = [fw.name for fw in fws]
    steps = {}
    tx, ty = tfn.constant(x), tfn.constant(y)
    params = [tfn.Variable(p) for p in init]
    compiled = tfn.function(tfn_train_step)
    steps["tfn compiled"] = lambda: compiled(params, tx, ty)
    eager_params = [tfn.Variable(p) for p in init]
    steps["tfn eager"] = lambda: tfn_train_step(eager_params, tx, ty)
    np_params = [p.copy() for p in init]
    steps["NumPy"] = lambda: _numpy_train_step(np_params, x, y)
    if "JAX jit" in names:
        steps["JAX jit"] = _jax_train_step(init, x, y)
    if "TF function" in names:
        steps["TF function"] = _tf_train_step(init, x, y)
    return steps


def _jax_train_step(init, x, y):
    import jax  # (optional dependency)
    import jax.numpy as jnp

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = jax.nn.relu(jnp.dot(x, w1) + b1)
        h = jax.nn.relu(jnp.dot(h, w2) + b2)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(jnp.dot(h, w3) + b3), axis=1))

    @jax.jit
    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, [p - MLP_LR * g for p, g in zip(params, grads)]

    state = {"params": [jnp.asarray(p) for p in init]}
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def run():
        value, state["params"] = step(state["params"], jx, jy)
        return value.block_until_ready()
    return run


def _tf_train_step(init, x, y):
    import tensorflow as tf  # (optional dependency)
    params = [tf.Variable(p) for p in init]
    tx, ty = tf.constant(x), tf.constant(y)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            w1, b1, w2, b2, w3, b3 = params
            h = tf.nn.relu(tf.matmul(tx, w1) + b1)
            h = tf.nn.relu(tf.matmul(h, w2) + b2)
            logits = tf.matmul(h, w3) + b3
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(ty, logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(MLP_LR * g)
        return loss
    return lambda: step().numpy()


def _first_step_seconds(reps):
    """Median seconds of the first call (trace + compile + run, cold cache) of a new compiled training step, and
    median seconds from its start until its optimised code is in place (tiered compilation)."""
    x, y, init = _mlp_data()
    tx, ty = tfn.constant(x), tfn.constant(y)
    samples, ready = [], []
    for _ in range(reps):
        _fresh_cache()
        params = [tfn.Variable(p) for p in init]
        f = tfn.function(tfn_train_step)
        t = perf()
        f(params, tx, ty)
        samples.append(perf() - t)
        tfn.config.wait_for_optimized_code()
        ready.append(perf() - t)
    return statistics.median(samples), statistics.median(ready)


def _other_first_steps(names, reps):
    """{column: median seconds of the first call of a new step} for JAX (a new jax.jit function, its caches cleared:
    trace + XLA compile + run) and TF (a new tf.function: trace + graph optimisation + run), those in `names`;
    their inputs and variables are made before the clock starts, as tfn's are."""
    x, y, init = _mlp_data()
    makers = {"JAX jit": _jax_train_step, "TF function": _tf_train_step}
    out = {}
    for name, make in makers.items():
        if name not in names:
            continue
        samples = []
        try:
            for _ in range(reps):
                if name == "JAX jit":
                    import jax  # (optional dependency)
                    jax.clear_caches()
                step = make(init, x, y)
                time.sleep(SETTLE_S)
                t = perf()
                step()
                samples.append(perf() - t)
            out[name] = statistics.median(samples)
        except Exception as e:  # a framework failing must not stop the suite
            out[name] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    return out


_RSS_CHILD = r"""
import json, resource, sys
sys.path.insert(0, {bench!r})


def peak_mib():  # VmHWM: this process's own peak (ru_maxrss would report the bench's peak, copied at fork)
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


which = {which!r}
if which == "JAX jit":
    import run
    x, y, init = run._mlp_data()
    jax_step = run._jax_train_step(init, x, y)
    jax_step()

    def step():
        jax_step()
else:
    import tfn
    import run
    x, y, init = run._mlp_data()
    params, tx, ty = [tfn.Variable(p) for p in init], tfn.constant(x), tfn.constant(y)
    train = tfn.function(run.tfn_train_step) if which == "tfn compiled" else run.tfn_train_step

    def step():
        train(params, tx, ty)
    step()
    tfn.config.wait_for_optimized_code()
before = peak_mib()
for _ in range(20):
    step()
after = peak_mib()
print(json.dumps({{"before": before, "after": after}}))
"""


def training_peak_rss(which):
    """(peak RSS MiB after the first step, growth over 20 more steps) of the training step in a new process:
    which is "tfn compiled", "tfn eager" or "JAX jit"."""
    script = os.path.join(_CACHE_ROOT, f"rss_{which.replace(' ', '_')}.py")
    with open(script, "w") as f:
        f.write(_RSS_CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), which=which))
    env = dict(os.environ, TFN_CACHE_DIR=tempfile.mkdtemp(dir=_CACHE_ROOT))
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["after"], r["after"] - r["before"]


def case_training(fws, cfg):
    """(h) one SGD training step of an MLP 784-256-256-10 (ReLU, softmax cross-entropy) at batch 128."""
    times = {}
    for name, step in _train_callables(fws).items():
        time.sleep(SETTLE_S)
        try:
            step()
            times[name] = median_time(step, cfg)
        except Exception as e:  # a framework failing must not stop the suite
            times[name] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    tfn_t = times["tfn compiled"]
    ratios = {k: tfn_t / times[k] for k in ("JAX jit", "TF function") if isinstance(times.get(k), float)}
    needs = {"JAX jit": 1.0, "TF function": 0.5}
    met = all(r <= needs[k] for k, r in ratios.items()) if ratios else None
    rows = [row("(h) MLP training step, batch 128", "ms", times, "tfn <= 1.0x JAX, <= 0.5x TF", met,
                _speedup(times), "speedup over NumPy's hand-written backward pass"
                + "".join(f"; tfn / {k} {r:.2f}x" for k, r in ratios.items()))]
    tfn_first, tfn_ready = _first_step_seconds(cfg.first_reps)
    first = {"tfn compiled": tfn_first, **_other_first_steps([fw.name for fw in fws], cfg.first_reps)}
    jax_first = first.get("JAX jit")
    vs_jax = first["tfn compiled"] / jax_first if isinstance(jax_first, float) else None
    rows.append(row("(h) first training step (trace+compile)", "ms", first, "<= 1.5x JAX's first call",
                    None if vs_jax is None else vs_jax <= 1.5, _speedup(first, over="JAX jit"),
                    "speedup = JAX / tfn" + ("" if vs_jax is None else f"; tfn / JAX {vs_jax:.2f}x")
                    + f"; tfn's optimised code in place {tfn_ready * 1e3:.0f} ms after the call started"
                    + ("" if tfn.config.get_tiered_compilation() else " (tiered compilation off)")))
    rss = {name: training_peak_rss(name) for name in ("tfn compiled", "tfn eager")}
    if "JAX jit" in [fw.name for fw in fws]:
        try:
            rss["JAX jit"] = training_peak_rss("JAX jit")
        except subprocess.CalledProcessError as e:  # a framework failing must not stop the suite
            print(f"(h) JAX's peak RSS: not measured ({e})", flush=True)
    note = "; ".join(f"{k}: +{v[1]:.1f} MiB over 20 more steps" for k, v in rss.items())
    rows.append(row("(h) peak RSS, training step process", "MiB", {k: v[0] for k, v in rss.items()},
                    note=note + "; each in a new process of its own (VmHWM)"))
    return rows


# ---- first calls and tracing ------------------------------------------------------------------------------------

def _fresh_cache():
    """Point TFN_CACHE_DIR at a new empty folder, so the next compile cannot hit an artifact."""
    os.environ["TFN_CACHE_DIR"] = tempfile.mkdtemp(dir=_CACHE_ROOT)


def first_call_seconds(fn, args, reps, ready=None):
    """Median seconds of the first call (trace + compile + run) of a new tfn.function of fn, cold cache; `ready`, a
    list, gets the median seconds until its optimised code was in place (tiered compilation)."""
    samples, in_place = [], []
    for _ in range(reps):
        _fresh_cache()
        f = tfn.function(fn)
        t = perf()
        f(*args)
        samples.append(perf() - t)
        tfn.config.wait_for_optimized_code()
        in_place.append(perf() - t)
    if ready is not None:
        ready.append(statistics.median(in_place))
    return statistics.median(samples)


_CHILD = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
import tfn
t1 = time.perf_counter()
x, w, b = tfn.ones([3, 2]), tfn.ones([2, 2]), tfn.ones([2])
t2 = time.perf_counter()
@tfn.function
def dense(x, w, b):
    return tfn.tanh(tfn.matmul(x, w) + b)
dense(x, w, b)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t3 - t2}))
"""


def new_process_first_call(reps):
    """Medians (import tfn, first call beyond import) in new processes sharing a warm artifact cache."""
    env = dict(os.environ, TFN_CACHE_DIR=tempfile.mkdtemp(dir=_CACHE_ROOT))
    script = os.path.join(_CACHE_ROOT, "child.py")  # a file, as users' functions are: AutoGraph reads the source
    with open(script, "w") as f:
        f.write(_CHILD)
    runs = []
    for _ in range(reps + 1):  # the first run compiles and fills the cache
        out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    warm = runs[1:]
    return (statistics.median(r["import"] for r in warm), statistics.median(r["first"] for r in warm),
            runs[0]["first"])


def case_first_call(fws, cfg):
    """(e) first call of a small function and of a 1,000-op one; first call in a new process, warm cache."""
    args = (tfn.ones([3, 2]), tfn.ones([2, 2]), tfn.ones([2]))
    small = first_call_seconds(dense, args, cfg.first_reps)
    rows = [row("(e) first call, small fn (3 ops)", "ms", {"tfn compiled": small}, "<= 60 ms", small <= 0.060,
                note="tanh(matmul(x, w) + b) on 3x2; trace + compile + run, empty cache")]
    if cfg.big_compile:
        ready = []
        big = first_call_seconds(arith_chain(1000)(tfn), (tfn.constant(rand(1000)),), 1, ready)
        rows.append(row("(e) first call, 1,000-op fn", "ms", {"tfn compiled": big}, "", None,
                        note=f"arith chain (*, +, -, /) on 1,000 f32; 1 sample; optimised code in place after "
                        f"{ready[0] * 1e3:.0f} ms"))
    else:
        rows.append(row("(e) first call, 1,000-op fn", "ms", {}, note="skipped with --quick (takes ~2 s)"))
    imp, first, cold = new_process_first_call(cfg.first_reps)
    rows.append(row("(e) new process, warm cache", "ms", {"tfn compiled": first}, "<= 10 ms beyond import",
                    first <= 0.010, note=f"import tfn {imp * 1e3:.0f} ms (MLIR loads at the first cache miss); "
                    f"import + first call {(imp + first) * 1e3:.0f} ms; cold-cache process {cold * 1e3:.0f} ms"))
    return rows


_SAVED_MLP = r"""
import sys
import numpy as np
import {fw} as tf
rng = np.random.default_rng(1)
class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        self.w1 = tf.Variable(rng.standard_normal((784, 256), dtype=np.float32) * 0.05)
        self.b1 = tf.Variable(np.zeros(256, np.float32))
        self.w2 = tf.Variable(rng.standard_normal((256, 256), dtype=np.float32) * 0.05)
        self.b2 = tf.Variable(np.zeros(256, np.float32))
        self.w3 = tf.Variable(rng.standard_normal((256, 10), dtype=np.float32) * 0.05)
        self.b3 = tf.Variable(np.zeros(10, np.float32))
    @tf.function(input_signature=[tf.TensorSpec([{batch}, 784], tf.float32)])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        h = tf.nn.relu(tf.matmul(h, self.w2) + self.b2)
        return tf.matmul(h, self.w3) + self.b3
m = MLP()
tf.saved_model.save(m, sys.argv[1])
print(float(tf.reduce_sum(m(tf.ones([128, 784])))))
"""

_LOAD_SAVED = r"""
import json, sys, time
t0 = time.perf_counter()
import {fw} as tf
t1 = time.perf_counter()
loaded = tf.saved_model.load(sys.argv[1])
y = loaded(tf.ones([128, 784]))
total = float(tf.reduce_sum(y))
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "sum": total}}))
"""


def saved_model_load_seconds(fw, batch, reps):
    """(median seconds of import, of load + first call) of the saved MLP (signature batch `batch`) in new processes
    of framework fw ('tfn' or 'tensorflow'), and its output's sum; None when fw cannot save it."""
    work = tempfile.mkdtemp(dir=_CACHE_ROOT)
    env = dict(os.environ, TFN_CACHE_DIR=os.path.join(work, "cache"), TF_CPP_MIN_LOG_LEVEL="3")
    save, load = os.path.join(work, "save.py"), os.path.join(work, "load.py")
    with open(save, "w") as f:
        f.write(_SAVED_MLP.format(fw=fw, batch=batch))
    with open(load, "w") as f:
        f.write(_LOAD_SAVED.format(fw=fw))
    export_dir = os.path.join(work, "saved")
    out = subprocess.run([sys.executable, save, export_dir], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    runs = []
    for _ in range(reps + 1):  # the first run may fill the artifact cache's small memos (tfn) or OS caches
        out = subprocess.run([sys.executable, load, export_dir], env=env, capture_output=True, text=True,
                             check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    warm = runs[1:]
    return (statistics.median(r["import"] for r in warm), statistics.median(r["load"] for r in warm),
            warm[0]["sum"])


def case_saved_model(fws, cfg):
    """(l) load + first call of a saved MLP 784-256-256-10 (batch 128) in a new process, vs tf.saved_model.load."""
    rows = []
    for batch, label in (("128", "batch 128"), ("None", "batch None")):
        ours = saved_model_load_seconds("tfn", batch, cfg.first_reps)
        theirs = saved_model_load_seconds("tensorflow", batch, cfg.first_reps) if any(
            fw.name == "TF function" for fw in fws) else None
        values = {"tfn compiled": ours[1]}
        note = f"signature {label}; import tfn {ours[0] * 1e3:.0f} ms"
        ratio = None
        if theirs is not None:
            values["TF function"] = theirs[1]
            ratio = theirs[1] / ours[1]
            note += f", import tensorflow {theirs[0] * 1e3:.0f} ms; same output: {abs(ours[2] - theirs[2]) < 1e-2}"
        met = ours[1] <= 0.020 and (theirs is None or ours[1] <= 0.1 * theirs[1])
        rows.append(row(f"(l) saved MLP, {label}: load + first call", "ms", values, "<= 20 ms and <= 0.1x TF", met,
                        ratio=ratio, note=note))
    return rows


def trace_seconds(n, reps):
    """(seconds to trace an n-op arithmetic chain via get_concrete_function, seconds to build the MLIR of that
    recorded trace, which a compile does on a cache miss): the fastest of reps of each.

    Tracing is deterministic CPU work, so the minimum is the figure least disturbed by other processes (a median
    of three 10,000-op samples still moved the 10,000 / 1,000 ratio by 20% on a busy machine)."""
    x = tfn.constant(rand(1000))
    samples, builds = [], []
    for _ in range(reps):
        f = tfn.function(arith_chain(n)(tfn))
        gc.collect()
        t = perf()
        c = f.get_concrete_function(x)
        samples.append(perf() - t)
        t = perf()
        c.graph.module  # noqa: B018  (builds the recorded trace's IR)
        builds.append(perf() - t)
    return min(samples), min(builds)


def case_trace(fws, cfg):
    """(f) trace time for 100, 1,000 and 10,000 ops, and the ratio 10,000 / 1,000."""
    both = {n: trace_seconds(n, reps) for n, reps in cfg.trace_reps.items()}
    t = {n: s for n, (s, _) in both.items()}
    rows = [row(f"(f) trace {n:,} ops", "ms", {"tfn compiled": s}, note=f"{s / n * 1e6:.0f} us per op; its IR "
                f"built from the record on a cache miss: {b / n * 1e6:.0f} us per op more")
            for n, (s, b) in both.items()]
    r = t[10000] / t[1000]
    rows.append(row("(f) trace 10,000 / 1,000", "x", {"tfn compiled": r}, "<= 12x", r <= 12))
    return rows


def _pipeline_consumer(ns, data):
    """A compiled function summing the batches of from_tensor_slices(x).map(f).batch(256), and its dataset."""
    ds = ns.data.Dataset.from_tensor_slices(data).map(lambda v: v * 2.0 + 1.0).batch(256)

    def consume(d):
        s = ns.constant(0.0)
        for b in d:
            s += ns.reduce_sum(b)
        return s
    return ns.function(consume), ds


def _numpy_batches(x):
    s = np.float32(0.0)
    for i in range(0, len(x), 256):
        s += np.sum(x[i:i + 256] * np.float32(2.0) + np.float32(1.0))
    return s


def case_data(fws, cfg):
    """(i) a dataset loop: 1,000,000 elements of from_tensor_slices(x).map(f).batch(256) in a compiled function."""
    x = rand(1_000_000)
    t = {}
    fn, ds = _pipeline_consumer(tfn, tfn.constant(x))
    t["tfn compiled"] = median_time(lambda: fn(ds), cfg)
    t["NumPy"] = median_time(lambda: _numpy_batches(x), cfg)
    tf_fw = next((fw for fw in fws if fw.name == "TF function"), None)
    if tf_fw is not None:
        time.sleep(SETTLE_S)
        tf_fn, tf_ds = _pipeline_consumer(tf_fw.ns, x)
        t["TF function"] = median_time(lambda: tf_fn(tf_ds), cfg)
    rate = 1e6 / t["tfn compiled"] / 1e6
    s = _speedup(t, over="TF function")
    met = None if s is None else s >= 2.0
    note = f"{rate:.1f} M elements/s" + ("" if tf_fw is not None else "; TensorFlow not installed")
    return [row("(i) dataset map+batch(256), 1M f32", "ms", t, "tfn >= 2x TF tf.data", met, s, note)]


def _fit_model():
    """A compiled Keras MLP 64-64-10 (ReLU, sparse softmax cross-entropy from logits, SGD), and 12,800 rows."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12_800, 64)).astype(np.float32)
    y = rng.integers(0, 10, 12_800).astype(np.int32)
    tfn.random.set_seed(0)
    model = tfn.keras.Sequential([tfn.keras.Input(shape=(64,)), tfn.keras.layers.Dense(64, activation="relu"),
                                  tfn.keras.layers.Dense(10)])
    model.compile(optimizer=tfn.keras.optimizers.SGD(0.01),
                  loss=tfn.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model, x, y


def case_fit_data(fws, cfg):
    """(j) one Model.fit epoch of a small MLP fed by Dataset.from_tensor_slices((x, y)).batch(128) vs by arrays."""
    model, x, y = _fit_model()
    ds = tfn.data.Dataset.from_tensor_slices((x, y)).batch(128)
    feeds = {"arrays": lambda: model.fit(x, y, batch_size=128, shuffle=False, verbose=0),
             "dataset": lambda: model.fit(ds, verbose=0)}
    for feed in feeds.values():  # compiles the train step (one trace serves both: same batch specs)
        feed()
    samples = {name: [] for name in feeds}
    for _ in range(max(3, cfg.repeats)):  # interleaved: a load change on a shared machine hits both alike
        for name, feed in feeds.items():
            t = perf()
            feed()
            samples[name].append(perf() - t)
    t_arrays, t_ds = (statistics.median(samples[n]) for n in ("arrays", "dataset"))
    cost = t_ds / t_arrays
    note = f"dataset / arrays = {cost:.3f}; 100 steps of batch 128"
    return [row("(j) fit epoch, MLP 64-64-10, arrays", "ms", {"tfn compiled": t_arrays}),
            row("(j) fit epoch, same, from a dataset", "ms", {"tfn compiled": t_ds},
                "dataset feeding costs <= 5% over arrays", cost <= 1.05, note=note)]


# ---- the digits CNN (issue 15) -------------------------------------------------------------------------------

DIGITS_BATCH, DIGITS_LR, DIGITS_DROPOUT = 32, 2e-3, 0.25


def _digits_data():
    """(x, y): the 1,348-image training split of examples/train_digits.py (8x8x1 in [0, 1], int32 labels).

    Without scikit-learn: random images and labels of the same shapes (the epoch time does not depend on them)."""
    try:
        from sklearn.datasets import load_digits  # optional dependency (the `examples` extra)
    except ImportError:
        rng = np.random.default_rng(0)
        return rng.random((1348, 8, 8, 1), dtype=np.float32), rng.integers(0, 10, 1348).astype(np.int32)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    order = np.random.default_rng(0).permutation(len(x))
    n_test = len(x) // 4
    return x[order][n_test:], digits.target.astype(np.int32)[order][n_test:]


def _digits_keras_model(keras, **compile_options):
    """The CNN of examples/train_digits.py in keras (tfn.keras or tf.keras), compiled with Adam, no metrics."""
    layers = keras.layers
    model = keras.Sequential([
        keras.Input(shape=(8, 8, 1)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Flatten(),
        layers.Dropout(DIGITS_DROPOUT),
        layers.Dense(10),
    ])
    model.compile(optimizer=keras.optimizers.Adam(DIGITS_LR),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), **compile_options)
    return model


def _keras_epoch(keras, x, y, **compile_options):
    """A zero-argument callable running one shuffled fit epoch (batch 32, verbose=0) of the CNN in keras."""
    model = _digits_keras_model(keras, **compile_options)
    return lambda: model.fit(x, y, batch_size=DIGITS_BATCH, epochs=1, verbose=0)


def _jax_digits_epoch(x, y):
    """One epoch of the same CNN in plain jax.numpy: jax.jit of value_and_grad plus Adam, shuffled batches of 32."""
    import jax  # optional dependency
    import jax.numpy as jnp

    def conv(h, w, b):
        return jax.nn.relu(jax.lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                                        dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)

    def loss(params, xb, yb, key):
        w1, b1, w2, b2, w3, b3 = params
        h = conv(xb, w1, b1)
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = conv(h, w2, b2).reshape(xb.shape[0], -1)
        keep = jax.random.bernoulli(key, 1.0 - DIGITS_DROPOUT, h.shape)
        h = jnp.where(keep, h / (1.0 - DIGITS_DROPOUT), 0.0)
        logits = h @ w3 + b3
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), yb[:, None], axis=1))

    @jax.jit
    def step(params, m, v, t, xb, yb, key):
        value, grads = jax.value_and_grad(loss)(params, xb, yb, key)
        t = t + 1
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        lr = DIGITS_LR * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        params = [p - lr * a / (jnp.sqrt(b) + 1e-7) for p, a, b in zip(params, m, v)]
        return value, params, m, v, t

    rng = np.random.default_rng(0)
    shapes = [(3, 3, 1, 32), (32,), (3, 3, 32, 64), (64,), (4 * 4 * 64, 10), (10,)]
    params = [jnp.asarray(rng.standard_normal(s, dtype=np.float32) * 0.05) for s in shapes]
    state = {"params": params, "m": [jnp.zeros_like(p) for p in params], "v": [jnp.zeros_like(p) for p in params],
             "t": jnp.float32(0), "key": jax.random.PRNGKey(0)}

    def epoch():
        order = rng.permutation(len(x))
        value = None
        for i in range(0, len(x), DIGITS_BATCH):
            idx = order[i:i + DIGITS_BATCH]
            state["key"], key = jax.random.split(state["key"])
            value, state["params"], state["m"], state["v"], state["t"] = step(
                state["params"], state["m"], state["v"], state["t"], x[idx], y[idx], key)
        return value.block_until_ready()
    return epoch


def _digits_epochs(fws, x, y):
    """{column: zero-argument epoch} for tfn and, when installed, tf.keras (jit_compile off, on) and JAX."""
    names = [fw.name for fw in fws]
    tfn.random.set_seed(0)
    epochs = {"tfn compiled": _keras_epoch(tfn.keras, x, y)}
    if "TF function" in names:
        import tensorflow as tf  # optional dependency
        tf.random.set_seed(0)
        epochs["tf.keras"] = _keras_epoch(tf.keras, x, y, jit_compile=False)
        epochs["tf.keras XLA"] = _keras_epoch(tf.keras, x, y, jit_compile=True)
    if "JAX jit" in names:
        epochs["JAX jit"] = _jax_digits_epoch(x, y)
    return epochs


def _ratio_met(times, other, need):
    """(tfn time / other's time, whether it is <= need), or (None, None) when other is not a number."""
    a, b = times.get("tfn compiled"), times.get(other)
    if not (isinstance(a, float) and isinstance(b, float)):
        return None, None
    return a / b, a / b <= need


def case_digits(fws, cfg):
    """(k) the digits CNN of examples/train_digits.py: seconds per fit epoch, tfn vs tf.keras and JAX."""
    x, y = _digits_data()
    times = {}
    for name, epoch in _digits_epochs(fws, x, y).items():
        time.sleep(SETTLE_S)
        try:
            epoch()  # compiles the train step (and the last, smaller batch's)
            times[name] = median_time(epoch, cfg)
        except Exception as e:  # a framework failing must not stop the suite
            times[name] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    vs_tf, ok_tf = _ratio_met(times, "tf.keras", 0.5)
    vs_xla, _ = _ratio_met(times, "tf.keras XLA", 0.5)
    vs_jax, ok_jax = _ratio_met(times, "JAX jit", 1.0)
    parts = [f"tfn / {k} {r:.2f}x" for k, r in (("tf.keras", vs_tf), ("tf.keras XLA", vs_xla), ("JAX", vs_jax))
             if r is not None]
    met = None if ok_tf is None and ok_jax is None else ok_tf is not False and ok_jax is not False
    note = f"{len(x)} images, {-(-len(x) // DIGITS_BATCH)} steps of batch {DIGITS_BATCH}, Adam"
    return [row("(k) digits CNN, one fit epoch", "ms", times, "tfn <= 0.5x tf.keras, <= 1.0x JAX", met,
                note="; ".join([note, *parts]))]


def _torch_cuda():
    """PyTorch when installed and it sees a GPU, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def case_gpu(fws, cfg):
    """(m) on a CUDA GPU: elementwise bandwidth vs the device's copy bandwidth, matmul TFLOP/s, PyTorch beside."""
    from tfn.runtime import cuda_driver, devices
    state = cuda_driver.probe()
    if not state.gpus:
        print(f"(m) GPU: no GPU: skipped ({state.reason})", flush=True)
        return [row("(m) GPU", "", {}, note=f"no GPU: skipped ({state.reason})")]
    devices.set_gpu_emulation(False)
    gpu = devices.find("GPU", 0)
    cuda = cuda_driver.runtime()
    n = (1 << 26) if not cfg.quick else (1 << 24)  # float32 elements: 256 MiB (64 MiB with --quick)
    x = rand(n)
    tfn.config.experimental.reset_device_copy_stats()
    t0 = perf()
    xd = devices.to_device(gpu, x)
    h2d_gbs = x.nbytes / (perf() - t0) / 1e9
    yd = devices.to_device(gpu, np.empty_like(x))

    def device_copy():
        cuda.copy(yd.ptr, xd.ptr, x.nbytes)  # device to device, synchronised
    copy_gbs = 2 * x.nbytes / median_time(device_copy, cfg) / 1e9
    scale = tfn.function(lambda v: v * 1.5 + 0.5, jit_device="GPU:0")
    xt = scale(x)  # compiles; its input copied once, then every call reads the device tensor where it is
    tfn.config.experimental.reset_device_copy_stats()
    ew_gbs = 2 * x.nbytes / median_time(lambda: scale(xt), cfg) / 1e9
    stats = tfn.config.experimental.get_device_copy_stats()
    rows = [row("(m) GPU elementwise v*1.5+0.5", "GB/s", {"tfn compiled": ew_gbs}, ">= 80% of device copy",
                ew_gbs >= 0.8 * copy_gbs, ew_gbs / copy_gbs,
                f"{gpu.description}; {n:,} f32; device copy {copy_gbs:.0f} GB/s, host->device {h2d_gbs:.1f} GB/s; "
                f"host<->device copies while timing: {stats['host_to_device']} in, {stats['device_to_host']} out")]
    m = 4096 if not cfg.quick else 2048
    a, b = rand(m, m), rand(m, m)
    mm = tfn.function(lambda p, q: tfn.matmul(p, q), jit_device="GPU:0")
    ad, bd = mm(a, np.eye(m, dtype=np.float32)), mm(b, np.eye(m, dtype=np.float32))  # on the device
    values = {"tfn compiled": 2 * m ** 3 / median_time(lambda: mm(ad, bd), cfg) / 1e12}
    torch = _torch_cuda()
    if torch is not None:
        xs, at, bt = (torch.from_numpy(v).cuda() for v in (x, a, b))
        torch_ew = 2 * x.nbytes / median_time(lambda: (xs * 1.5 + 0.5, torch.cuda.synchronize()), cfg) / 1e9
        rows[0]["values"]["PyTorch"] = torch_ew
        values["PyTorch"] = 2 * m ** 3 / median_time(lambda: (at @ bt, torch.cuda.synchronize()), cfg) / 1e12
    rows.append(row(f"(m) GPU matmul {m}^3 f32", "TFLOP/s", values, "", None,
                    _speedup(values, over="tfn compiled", of="PyTorch") if torch is not None else None,
                    "speedup = tfn / PyTorch" if torch is not None else "PyTorch not installed"))
    return rows


# ---- output -----------------------------------------------------------------------------------------------------

SCALE = {"us": 1e6, "ms": 1e3}
ORDER = ["tfn compiled", "tfn eager", "NumPy", "NumPy 1 thread", "TF function", "tf.keras", "tf.keras XLA", "JAX jit",
         "PyTorch"]


def fmt(v, unit):
    """A cell: seconds scaled to unit (rates and ratios as they are) with about three significant digits."""
    if not isinstance(v, float):
        return str(v)
    v *= SCALE.get(unit, 1.0)
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def table(rows):
    """The rows as a Markdown table (readable as plain text too)."""
    cols = [c for c in ORDER if any(c in r["values"] for r in rows)]
    head = ["case", "unit", *cols, "speedup", "target", "met", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.3g}x"
        cells = [r["case"], r["unit"], *(fmt(r["values"].get(c, ""), r["unit"]) for c in cols), ratio,
                 r["target"], met, r["note"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine():
    """One paragraph describing where the figures come from."""
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor())
    mem = next((int(line.split()[1]) // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    get, _ = _blas_threads()
    blas = f"OpenBLAS threads {get()}" if get else "BLAS threads unknown"
    env = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    target = tfn.config.get_target()
    others = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "XLA_FLAGS", "ONEDNN_MAX_CPU_ISA") if k in os.environ}
    return (f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} CPUs ({model}); {mem} MiB RAM; "
            f"tfn target {target.isa} (TFN_TARGET_FEATURES={os.environ.get('TFN_TARGET_FEATURES', 'native')}: "
            f"{target.describe()}){'; ' + str(others) if others else ''}; "
            f"load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}; "
            f"NumPy {np.__version__} ({blas}; thread env {env or 'unset'})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, skip 1024^3 and 1,000-op compile")
    parser.add_argument("--only", default="", metavar="LETTERS", help="run only these cases, e.g. --only bd")
    parser.add_argument("--target", default="native", choices=sorted(TARGETS),
                        help="instruction set for tfn's code (TFN_TARGET_FEATURES), OpenBLAS and XLA")
    args = parser.parse_args(argv)
    cfg = Config(args.quick)
    fws = _frameworks()
    # Steady state: in a new cache the call trampoline compiles in the background (runtime/fastcall.py).
    from tfn.runtime import fastcall
    fastcall.wait()
    print(machine())
    print("frameworks: " + ", ".join(fw.name for fw in fws) + "; speedup = other time / tfn compiled time "
          "(NumPy; NumPy 1 thread for matmul)\n", flush=True)
    rows, start = [], perf()
    for case in (case_overhead, case_chains, case_matmul, case_conv, case_reductions, case_first_call,
                 case_trace, case_training, case_data, case_fit_data, case_digits, case_saved_model,
                 case_gpu, case_sort):
        letter = case.__doc__[1]
        if args.only and letter not in args.only:
            continue
        t = perf()
        rows += case(fws, cfg)
        print(f"  {case.__doc__.split(' ', 1)[0]} done in {perf() - t:.1f} s", file=sys.stderr, flush=True)
    print(table(rows))
    print(f"\ntotal {perf() - start:.0f} s; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
