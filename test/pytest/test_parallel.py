"""Multi-threaded kernels (tfn-parallelize + the async runtime): results equal NumPy, no leak, no crash at exit."""
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from opcheck import assert_close

import tfn
from tfn.passes import target

RNG = np.random.default_rng(5)


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_big_elementwise_reduction_and_matmul_run_on_two_workers_and_match_numpy(cores):
    """Odd sizes (uneven halves), broadcasts, reductions, matmul and batch matmul; small ops stay single-threaded."""
    cores(2)
    x = RNG.random(600_001, dtype=np.float32)
    m = RNG.random((2049, 300), dtype=np.float32)
    row = RNG.random(300, dtype=np.float32)
    a, b = RNG.random((512, 256), dtype=np.float32) - 0.5, RNG.random((256, 256), dtype=np.float32) - 0.5
    ba, bb = RNG.random((4, 256, 96), dtype=np.float32), RNG.random((4, 96, 256), dtype=np.float32)
    small = RNG.random(1000, dtype=np.float32)

    @tfn.function
    def f(x, m, row, a, b, ba, bb, small):
        y = tfn.tanh(x * 3.0 - 1.0) / 4.0 + tfn.exp(-x)
        return (y, m * row + 1.0, tfn.reduce_sum(m, axis=0), tfn.matmul(a, b), tfn.matmul(ba, bb), small * 2.0)

    got = [t.numpy() for t in f(x, m, row, a, b, ba, bb, small)]
    assert_close(got[0], np.tanh(x * 3.0 - 1.0) / 4.0 + np.exp(-x))
    np.testing.assert_array_equal(got[1], m * row + np.float32(1.0))
    assert_close(got[2], m.sum(axis=0))  # leading axis: trailing ones are vector loops
    assert_close(got[3], a @ b)
    assert_close(got[4], ba @ bb)
    np.testing.assert_array_equal(got[5], small * np.float32(2.0))
    concrete = f.get_concrete_function(x, m, row, a, b, ba, bb, small)
    assert concrete.ir("bufferized").count("scf.forall") >= 5
    assert "mlirAsyncRuntimeExecute" in concrete.ir("llvm")


@pytest.mark.parametrize("level", ["avx512", "avx2"])
def test_tasks_taken_dynamically_match_numpy_on_odd_sizes_from_several_threads(monkeypatch, level):
    """The caller and the worker threads take a kernel's tasks from a shared counter (tfn-async-parallel): a matmul
    with odd K and N cut into row blocks (8 with 2 cores, 16 with 16) and an elementwise chain of an odd length cut
    into uneven parts give NumPy's results, also when four Python threads call the function at once (each call its
    own counter)."""
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)
    a, b = RNG.random((384, 301), dtype=np.float32) - 0.5, RNG.random((301, 515), dtype=np.float32) - 0.5
    x = RNG.random(1_000_003, dtype=np.float32)
    f = tfn.function(lambda a, b, x: (tfn.matmul(a, b), x * 3.0 - tfn.exp(x)))
    want = (a @ b, x * np.float32(3.0) - np.exp(x))
    concrete = f.get_concrete_function(a, b, x)
    bufferized = concrete.ir("bufferized")
    counts = re.findall(r"\) in \((\d+)\)", bufferized)  # the two scf.forall loops' task counts
    assert len(counts) == 2 and int(counts[0]) >= min(2, target.current().cores) and int(counts[1]) >= 2, counts
    llvm_ir = concrete.ir("llvm")
    assert "_take" in llvm_ir and "tfn_release_blocks" in llvm_ir and "async_dispatch_fn" not in llvm_ir
    failures = []

    def calls():
        try:
            for _ in range(10):
                for got, expected in zip(f(a, b, x), want):
                    assert_close(got.numpy(), expected)
        except Exception as e:  # reported by the main thread
            failures.append(e)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def test_small_functions_are_not_parallelized():
    f = tfn.function(lambda x: tfn.exp(x) * 2.0 + 1.0)
    x = RNG.random((100, 100), dtype=np.float32)
    assert_close(f(x).numpy(), np.exp(x) * 2.0 + 1.0)
    assert "scf.forall" not in f.get_concrete_function(x).ir("bufferized")
    assert "mlirAsyncRuntime" not in f.get_concrete_function(x).ir("llvm")


def test_many_parallel_calls_do_not_leak():
    f = tfn.function(lambda x: x * 0.5 + 1.0)
    x = tfn.constant(RNG.random(1 << 19, dtype=np.float32))
    for _ in range(300):  # warm up: allocator arenas of both threads fill first
        f(x)
    before = _rss_kb()
    for _ in range(3000):
        y = f(x)
    del y
    assert _rss_kb() - before < 8_000, "RSS grew by more than 8 MB over 3,000 calls"


_CHILD = """
import time
import numpy as np, tfn
from tfn.runtime import async_runtime
f = tfn.function(lambda x: tfn.tanh(x) + 1.0)
x = tfn.constant(np.ones(1 << 19, np.float32))
for _ in range(200):
    y = f(x)
print(float(y.numpy()[0]))
for _ in range(100):  # a pool thread may still be finishing a task the caller did not wait for (no block left)
    if async_runtime.load().tfn_async_live_objects() == 0:
        break
    time.sleep(0.01)
print(async_runtime.load().tfn_async_live_objects())
"""


def test_process_exits_cleanly_after_parallel_calls(tmp_path):
    """Every token and group of the async runtime is freed once the calls are done (tfn's runtime counts them), and
    the process exits cleanly."""
    env = dict(os.environ, TFN_CACHE_DIR=str(tmp_path))
    for _ in range(2):  # a cold cache (compile in-process), then a warm one (the .so loaded by a new process)
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        result, live = out.stdout.split()
        assert abs(float(result) - (np.tanh(1.0) + 1.0)) < 1e-6 and live == "0", out.stdout
