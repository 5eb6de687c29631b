"""The target description, machine facts as pass options, and code generated for a lower level (TFN_TARGET_FEATURES)."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from mlir import ir
from opcheck import assert_close

import tfn
from tfn.passes import registry, target
from tfn.runtime import toolchain

RNG = np.random.default_rng(11)


def _host():
    return target.target_for("native")


def _needs(level):
    """Skip when this machine cannot run code for `level` (the levels below its own are what these tests use)."""
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")


def test_host_target_is_detected_once():
    assert tfn.config.get_target() is target.current()  # detected once, the same object on each call
    t = _host()
    assert t is target.target_for("native") and t.isa == target.target_for(t.isa).isa
    assert t.cores == len(os.sched_getaffinity(0))
    assert t.vector_bits in (128, 256, 512) and t.vector_registers in (16, 32)
    assert t.llvm_features == ()  # the host's own level: LLVM generates code for the host CPU as it is
    assert f"{t.cores} cores" in t.describe() and t.isa in t.describe()


def test_avx512_host_detects_512_bit_vectors():
    with open("/proc/cpuinfo") as f:
        flags = next((line for line in f if line.startswith("flags")), "").split()
    if "avx512f" not in flags:
        pytest.skip("no AVX-512 on this machine")
    assert (_host().isa, _host().vector_bits, _host().vector_registers) == ("avx512", 512, 32)


def test_lower_levels_and_bad_names(monkeypatch):
    _needs("avx2")
    monkeypatch.setenv("TFN_TARGET_FEATURES", "avx2")
    t = tfn.config.get_target()
    assert (t.isa, t.vector_bits, t.vector_registers, t.cores) == ("avx2", 256, 16, _host().cores)
    if _host().isa == "avx512":
        assert t.llvm_features[-1] == "-avx512f" and "+avx2" in t.llvm_features
    for bad in ("avx1024", "neon" if _host().arch == "x86_64" else "avx2"):
        monkeypatch.setenv("TFN_TARGET_FEATURES", bad)
        with pytest.raises(ValueError, match=f"TFN_TARGET_FEATURES='{bad}'.*supports native"):
            tfn.config.get_target()


def test_pipeline_text_names_every_option_of_the_target():
    _needs("avx2")
    host, avx2 = _host(), target.target_for("avx2")
    text = registry.pipeline_text("tfn-pipeline", host)
    assert f"tfn-parallelize{{workers={host.cores} tasks-per-worker=4}}" in text
    assert (f"tfn-pack-matmul{{vector-bits={host.vector_bits} vector-registers={host.vector_registers} "
            f"workers={host.cores} tasks-per-worker=4 min-parallel-flops={2 * 256 ** 3} "
            f"min-epilogue-elements={1 << 16}}}") in text
    assert f"tfn-vectorize-elementwise{{lanes={host.vector_bits // 8} vector-bits={host.vector_bits}}}" in text
    assert "tfn-lower-to-linalg" not in text  # named pipelines are spelled out
    assert "tfn-pack-matmul{vector-bits=256 vector-registers=16" in registry.pipeline_text("tfn-pipeline", avx2)
    if host.isa != "avx2":
        assert registry.pipeline_text("tfn-pipeline", avx2) != text and avx2.cache_key() != host.cache_key()


def test_unknown_option_and_bad_value_are_errors():
    with ir.Context():
        with pytest.raises(ValueError, match="no such option bogus\n\nfailed to add `tfn-to-linalg` with options "
                                             "`bogus=1`"):
            registry.pass_manager("builtin.module(tfn-to-linalg{bogus=1})")
        with pytest.raises(ValueError, match="--lanes option: '48' is not a power of two"):
            registry.pass_manager("tfn-vectorize-elementwise{lanes=48}")
        with pytest.raises(ValueError, match="no such option lanes"):
            registry.pass_manager("tfn-bufferize{lanes=16}")  # a named pipeline takes no options


def _kernels(a, b, x, w, v, r, ba, bb, rgb, rgb_w, narrow, narrow_w):
    """A matmul, a convolution, a 50-op elementwise chain with exp/tanh, reductions, a batch matmul, a convolution
    of a 3-channel (RGB) image and one to 8 filters (panels of one vector)."""
    y = v
    for i in range(25):
        y = tfn.tanh(y * 0.5 + 0.1) if i % 2 else tfn.exp(y * 0.01) - 1.0
    return (tfn.matmul(a, b), tfn.nn.conv2d(x, w, strides=1, padding="VALID"), y,
            tfn.reduce_sum(r, axis=-1), tfn.reduce_max(r), tfn.matmul(ba, bb),
            tfn.nn.conv2d(rgb, rgb_w, strides=1, padding="VALID"), tfn.nn.conv2d(narrow, narrow_w, 2, "SAME"))


def _conv(x, w, stride=1, pads=(0, 0)):
    """VALID convolution of x padded by pads (before, after) in height and width (TF's SAME pads: _conv(x, w, 2,
    (0, 1)) for a 3 x 3 filter at stride 2 on an even size)."""
    x = np.pad(x, [(0, 0), pads, pads, (0, 0)])
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    patches = np.stack([x[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride, :]
                        for i in range(kh) for j in range(kw)], axis=3)
    return patches.reshape(n, oh, ow, kh * kw * c) @ w.reshape(kh * kw * c, f)


def _reference(a, b, x, w, v, r, ba, bb, rgb, rgb_w, narrow, narrow_w):
    y = v.astype(np.float64)
    for i in range(25):
        y = np.tanh(y * 0.5 + 0.1) if i % 2 else np.exp(y * 0.01) - 1.0
    return (a @ b, _conv(x, w), y, r.astype(np.float64).sum(axis=-1), r.max(), ba @ bb, _conv(rgb, rgb_w),
            _conv(narrow, narrow_w, 2, (0, 1)))


def _arrays():
    shapes = ((260, 256), (256, 256), (1, 20, 24, 8), (3, 3, 8, 40), (5, 3000), (6, 5000), (4, 64, 96), (4, 96, 80),
              (1, 34, 34, 3), (3, 3, 3, 16), (2, 40, 40, 16), (3, 3, 16, 8))
    return [(RNG.random(s, dtype=np.float32) - 0.5) for s in shapes]


def _registers(so):
    """{function: set of the x86 vector register kinds ("xmm", "ymm", "zmm") its code uses} in a shared object; None
    when no disassembler is at hand. The packed `_mlir_<name>` wrappers are left out: the ExecutionEngine adds them
    in LLVM IR, where they get the host's features (a few moves of arguments and results)."""
    objdump = os.path.join(toolchain.LLVM_BIN, "llvm-objdump")
    if not os.access(objdump, os.X_OK):
        objdump = shutil.which("objdump")
    if objdump is None:
        return None
    found, name = {}, None
    for line in subprocess.run([objdump, "-d", so], capture_output=True, text=True, check=True).stdout.splitlines():
        if line.endswith(">:"):
            name = line.split("<", 1)[1][:-2]
        elif name and not (name.startswith("_mlir_") and not name.startswith("_mlir_ciface_")):
            found.setdefault(name, set()).update(r for r in ("xmm", "ymm", "zmm") if f"%{r}" in line)
    return found


@pytest.mark.parametrize("level", ["avx512", "avx2", "sse"])
def test_kernels_generated_for_each_level_match_numpy(monkeypatch, level):
    """Code for AVX-512, AVX2 or SSE (on a host that runs it): the schedules follow the level's vectors, and the
    kernels use its widest registers and none wider (checked in the shared object when a disassembler is at hand)."""
    _needs(level)
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    arrays = _arrays()
    f = tfn.function(_kernels)
    for got, want in zip(f(*arrays), _reference(*arrays)):
        assert_close(got.numpy(), np.asarray(want, np.float32))
    concrete = f.get_concrete_function(*arrays)
    lanes = target.current().vector_bits // 8
    assert f"vector<{lanes}xf32>" in concrete.ir("bufferized")
    tfn.config.wait_for_optimized_code()  # the registers of the code the cache keeps (tiered compilation)
    found = _registers(concrete._executable.source)
    if found is None or _host().arch != "x86_64":
        return
    widest = {"avx512": "zmm", "avx2": "ymm", "sse": "xmm"}[level]
    assert widest in found[concrete.graph.symbol]
    allowed = {"avx512": {"xmm", "ymm", "zmm"}, "avx2": {"xmm", "ymm"}, "sse": {"xmm"}}[level]
    assert not [name for name, regs in found.items() if regs - allowed]


def test_avx2_and_avx512_code_agree(monkeypatch):
    """The same kernels compiled for AVX2 and for AVX-512 (different register tiles, panels and vector widths) give
    the same results to float32 rounding, and their IR uses each level's vectors."""
    _needs("avx512")
    arrays = _arrays()
    results, irs = {}, {}
    for level in ("avx2", "avx512"):
        monkeypatch.setenv("TFN_TARGET_FEATURES", level)
        f = tfn.function(_kernels)
        results[level] = [t.numpy() for t in f(*arrays)]
        irs[level] = f.get_concrete_function(*arrays).ir("bufferized")
    for got, want in zip(results["avx2"], results["avx512"]):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    # register tiles MR x 1 panel x NR: 8 x 32 (AVX-512), 6 x 16 (AVX2; the 260-row matmul, big enough to be split
    # over the workers, has its last 2 rows in a tail tile of their own), and panels of one vector for the
    # convolution to 8 filters; elementwise chains four registers wide
    assert "vector<8x1x32xf32>" in irs["avx512"] and "vector<8x1x16xf32>" in irs["avx512"]
    assert "vector<6x1x16xf32>" in irs["avx2"] and "vector<6x1x8xf32>" in irs["avx2"]
    assert "vector<2x4xf32>, vector<1x4x16xf32>" in irs["avx2"]
    assert "x1x32xf32>" not in irs["avx2"]
    assert "vector<64xf32>" in irs["avx512"] and "vector<64xf32>" not in irs["avx2"]


def test_a_cache_entry_built_for_one_target_is_not_loaded_for_another(monkeypatch, tmp_path):
    _needs("avx2")
    if _host().isa == "avx2":
        pytest.skip("avx2 is this machine's own level")
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    x = RNG.random((4, 4096), dtype=np.float32)
    paths = []
    for level in ("native", "avx2", "native"):
        monkeypatch.setenv("TFN_TARGET_FEATURES", level)
        f = tfn.function(lambda x: tfn.exp(tfn.tanh(x)) * 2.0)
        assert_close(f(x).numpy(), np.exp(np.tanh(x)) * 2.0)
        paths.append(f.get_concrete_function(x)._executable.source)
    assert paths[0] != paths[1] and paths[0] == paths[2]  # a second native compile hits the first's entry
    assert len([p for p in os.listdir(tmp_path) if p.endswith(".so")]) == 2


def _depthwise(x, w, x2, w2):
    return (tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
            tfn.nn.depthwise_conv2d(x2, w2, [1, 2, 2, 1], "VALID"))


def test_depthwise_is_vectorised_on_many_workers(cores):
    """With 16 workers (the host's core count faked), a depthwise convolution's 28 output rows are cut into tasks
    that divide them: 16 uneven tasks have dynamic sizes, which tfn-vectorize-depthwise cannot take (it left them to
    LLVM's scalar loops on a 16-core machine)."""
    cores(16)
    x, w = RNG.random((2, 30, 30, 64), dtype=np.float32) - 0.5, RNG.random((3, 3, 64, 1), dtype=np.float32) - 0.5
    f = tfn.function(lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID"))
    assert_close(f(x, w).numpy(), tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID").numpy())
    bufferized = f.get_concrete_function(x, w).ir("bufferized")
    assert "vector.fma" in bufferized and re.findall(r"scf.forall \(%\w+\) in \((\d+)\)", bufferized) == ["14"]


@pytest.mark.parametrize("level", ["avx512", "avx2"])
def test_matmul_on_many_workers_splits_panels_and_rows(monkeypatch, cores, level):
    """With 16 workers, a product cut into more tasks (64) than it has panels is split two ways: groups of panels
    times blocks of rows, each task packing the panels it reads (a split of the rows alone packed all of B on the
    calling thread first). 768 x 1024 @ 1024 x 512: 4 row blocks x 16 panels of 32 (AVX-512), 2 x 32 panels of 16
    (AVX2, whose 6-row tiles divide 384 rows)."""
    _needs(level)
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    cores(16)
    a, b = RNG.random((768, 1024), dtype=np.float32) - 0.5, RNG.random((1024, 512), dtype=np.float32) - 0.5
    f = tfn.function(lambda a, b: tfn.matmul(a, b))
    # (float32 sums of 1,024 products: compared with the float64 product, to their rounding)
    np.testing.assert_allclose(f(a, b).numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=5e-5)
    bufferized = f.get_concrete_function(a, b).ir("bufferized")
    grid = {"avx512": ("4", "16"), "avx2": ("2", "32")}[level]
    assert re.findall(r"scf.forall \(%\w+, %\w+\) in \((\d+), (\d+)\)", bufferized) == [grid]
    # the packed B is written inside the tasks: no pack loop nest before the forall
    assert "scf.for" not in bufferized[:bufferized.index("scf.forall")]


@pytest.mark.parametrize("level", ["avx512", "avx2"])
def test_depthwise_code_for_each_level(monkeypatch, level):
    """Depthwise convolutions (64 channels, multiplier 1; 24 channels, multiplier 2, stride 2) compiled for AVX2 or
    AVX-512 equal the NumPy kernel, and the channel loop is vectorised with the level's widest registers."""
    _needs(level)
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    arrays = [RNG.random(s, dtype=np.float32) - 0.5 for s in ((2, 30, 30, 64), (3, 3, 64, 1), (1, 21, 21, 24),
                                                               (3, 3, 24, 2))]
    f = tfn.function(_depthwise)
    got = f(*arrays)
    for g, want in zip(got, _depthwise(*[tfn.constant(a) for a in arrays])):
        assert_close(g.numpy(), want.numpy())
    concrete = f.get_concrete_function(*arrays)
    # multiplier 1: tfn-vectorize-depthwise's FMAs on two vectors' worth of channels; multiplier 2: LLVM's loops
    lanes = 2 * target.current().vector_bits // 32
    fmas = [line for line in concrete.ir("bufferized").splitlines() if "vector.fma" in line]
    assert fmas and all(re.search(rf"[<x]{lanes}xf32>", line) for line in fmas)
    tfn.config.wait_for_optimized_code()  # the registers of the code the cache keeps (tiered compilation)
    found = _registers(concrete._executable.source)
    if found is None or _host().arch != "x86_64":
        return
    used = set().union(*found.values())
    widest = {"avx512": "zmm", "avx2": "ymm"}[level]
    assert widest in used and (level == "avx512" or "zmm" not in used)


def test_depthwise_avx2_and_avx512_code_agree(monkeypatch):
    _needs("avx512")
    arrays = [RNG.random(s, dtype=np.float32) - 0.5 for s in ((2, 17, 19, 40), (5, 5, 40, 1), (1, 16, 16, 12),
                                                               (3, 3, 12, 3))]
    results = {}
    for level in ("avx2", "avx512"):
        monkeypatch.setenv("TFN_TARGET_FEATURES", level)
        results[level] = [t.numpy() for t in tfn.function(_depthwise)(*arrays)]
    for got, want in zip(results["avx2"], results["avx512"]):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
