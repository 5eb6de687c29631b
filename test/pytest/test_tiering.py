"""Tiered compilation (runtime/tiering.py): quick code first, the optimised code built in a child process, swapped in.

Every test makes any non-tiny function tiered (MIN_BYTES = 0) and compares the quick and the optimised Executable
of one trace called directly on the same inputs: the tier a call through the function runs depends on when the
child finishes, the Executables compared here do not."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tfn
from tfn.dialects.errors import CompileError
from tfn.passes import target
from tfn.runtime import cache, tiering

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def tiered(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiering, "MIN_BYTES", 0)
    tfn.config.set_tiered_compilation(True)
    yield tmp_path
    tfn.config.set_tiered_compilation(None)
    try:
        tiering.wait(60)
    except CompileError:
        pass


def _tiers(concrete):
    """(quick Executable, optimised Executable) of a compiled trace that started tiered."""
    quick = concrete._executable
    assert quick.upgrade is not None, "not tiered"
    assert tfn.config.wait_for_optimized_code() is True
    assert quick.upgrade.error is None and quick.upgrade.executable is not None
    return quick, quick.upgrade.executable


def _build_files(folder):
    """Files of tiered builds left in the cache's scratch folder (the C trampoline's own build may be there too)."""
    return [p.name for p in (folder / "tmp").rglob("*") if p.name in ("module.mlirbc", "a.o", "a.o.tmp", "stderr")]


def _stored(folder):
    return sorted(p.name for p in folder.glob("*.so") if not p.name.startswith("fastcall-"))


def _mlp_step(params, x, y):
    with tfn.GradientTape() as tape:
        h = tfn.maximum(tfn.matmul(x, params[0]) + params[1], 0.0)
        logits = tfn.matmul(h, params[2]) + params[3]
        m = tfn.reduce_max(logits, axis=1, keepdims=True)
        log_probs = logits - m - tfn.math.log(tfn.reduce_sum(tfn.exp(logits - m), axis=1, keepdims=True))
        loss = -tfn.reduce_mean(tfn.reduce_sum(y * log_probs, axis=1))
    for p, g in zip(params, tape.gradient(loss, params)):
        p.assign_sub(0.1 * g)
    return loss


def test_a_training_step_gives_identical_results_in_both_tiers(tiered):
    x = tfn.constant(RNG.standard_normal((32, 64), dtype=np.float32))
    y = tfn.constant(np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 32)])
    params = [tfn.Variable(RNG.standard_normal((64, 48), dtype=np.float32) * 0.1),
              tfn.Variable(np.zeros(48, np.float32)),
              tfn.Variable(RNG.standard_normal((48, 10), dtype=np.float32) * 0.1),
              tfn.Variable(np.zeros(10, np.float32))]
    step = tfn.function(_mlp_step)
    first = float(step(params, x, y))
    concrete = step.get_concrete_function(params, x, y)
    quick, optimised = _tiers(concrete)
    arrays = [x.numpy(), y.numpy(), *[read() for read in concrete._capture_sources]]
    for a, b in zip(quick(arrays), optimised(arrays)):  # the loss and every variable's new value
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert concrete._executable is optimised  # swapped in: later calls run the optimised code
    assert float(step(params, x, y)) < first
    stored = _stored(tiered)  # the optimised code is stored, the quick code is not
    assert os.path.basename(optimised.source) in stored and os.path.basename(quick.source) not in stored


def test_the_fast_path_runs_the_optimised_code_after_the_swap():
    f = tfn.function(lambda a, b: tfn.tanh(tfn.matmul(a, b)) * 2.0 + 1.0)
    a, b = tfn.constant(RNG.standard_normal((40, 30), dtype=np.float32)), tfn.constant(np.ones((30, 20), np.float32))
    before = f(a, b).numpy()
    concrete = f.get_concrete_function(a, b)
    quick, optimised = _tiers(concrete)
    assert "_run_leaves" in concrete.__dict__  # the fast runner, rebuilt around the optimised plan
    assert np.array_equal(f(a, b).numpy(), before)
    assert np.array_equal(quick([a.numpy(), b.numpy()])[0], optimised([a.numpy(), b.numpy()])[0])


def test_run_time_errors_are_the_same_in_both_tiers():
    f = tfn.function(lambda p, i: tfn.gather(p, i) * 2.0)
    params, good = tfn.constant(np.arange(2000, dtype=np.float32)), tfn.constant(np.arange(100, dtype=np.int32))
    f(params, good)
    quick, optimised = _tiers(f.get_concrete_function(params, good))
    bad = np.arange(100, dtype=np.int32)
    bad[7] = 5000
    messages = []
    for exe in (quick, optimised):
        with pytest.raises(tfn.errors.InvalidArgumentError) as raised:
            exe([params.numpy(), bad])
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "5000" in messages[0]
    assert np.array_equal(quick([params.numpy(), good.numpy()])[0], optimised([params.numpy(), good.numpy()])[0])


def test_py_function_callbacks_run_in_both_tiers():
    seen = []

    def note(v):
        seen.append(float(v.numpy().sum()))
        return v * 3.0

    f = tfn.function(lambda x: tfn.py_function(note, [tfn.exp(x) + 1.0], tfn.float32) - x)
    x = tfn.constant(RNG.standard_normal(3000).astype(np.float32))
    f(x)
    quick, optimised = _tiers(f.get_concrete_function(x))
    a, b = quick([x.numpy()])[0], optimised([x.numpy()])[0]
    assert np.array_equal(a, b) and len(seen) == 3 and seen[1] == seen[2]


def test_datasets_give_the_same_elements_with_tiering_on_and_off():
    rows = RNG.standard_normal((40, 3000)).astype(np.float32)

    def elements():
        ds = tfn.data.Dataset.from_tensor_slices(rows).map(lambda v: tfn.exp(v) * 0.5 + 1.0).batch(8)
        return [e.numpy() for e in ds]

    tiered_run = elements()
    assert tiering.pending()  # the map function started on quick code
    tfn.config.wait_for_optimized_code()
    tfn.config.set_tiered_compilation(False)
    untiered_run = elements()
    assert len(tiered_run) == len(untiered_run) == 5
    assert all(np.array_equal(a, b) for a, b in zip(tiered_run, untiered_run))


def test_a_new_process_loads_the_optimised_code_from_the_cache(tiered):
    fn = lambda a: tfn.reduce_sum(tfn.sigmoid(a) * a, axis=0)  # noqa: E731
    x = tfn.constant(RNG.standard_normal((50, 40), dtype=np.float32))
    tfn.function(fn)(x)
    tfn.config.wait_for_optimized_code()
    again = tfn.function(fn)  # the same IR: its key finds the stored optimised code, nothing is tiered
    again(x)
    assert again.get_concrete_function(x)._executable.upgrade is None
    assert len(_stored(tiered)) == 1


def test_avx2_code_is_tiered_and_stored_under_its_own_key(tiered, monkeypatch):
    fn = lambda a: tfn.reduce_sum(tfn.exp(a) * a, axis=1)  # noqa: E731
    x = tfn.constant(RNG.standard_normal((64, 64), dtype=np.float32))
    results = []
    for level in ("avx2", "native"):
        monkeypatch.setenv("TFN_TARGET_FEATURES", level)
        f = tfn.function(fn)
        f(x)
        quick, optimised = _tiers(f.get_concrete_function(x))
        results.append((quick([x.numpy()])[0], optimised([x.numpy()])[0]))
    for a, b in results:
        assert np.array_equal(a, b)
    assert len(_stored(tiered)) == 2  # one optimised artifact per target


def test_tiering_off_builds_the_optimised_code_at_once(monkeypatch):
    tfn.config.set_tiered_compilation(False)
    assert not tfn.config.get_tiered_compilation()
    f = tfn.function(lambda a: tfn.exp(a) + 1.0)
    x = tfn.constant(np.ones(5000, np.float32))
    f(x)
    assert f.get_concrete_function(x)._executable.upgrade is None
    tfn.config.set_tiered_compilation(None)
    monkeypatch.setenv(tiering.ENV, "0")
    assert not tiering.enabled()
    monkeypatch.setenv(tiering.ENV, "1")
    assert tiering.enabled()


def test_small_modules_are_not_tiered(monkeypatch):
    monkeypatch.setattr(tiering, "MIN_BYTES", 1 << 30)
    f = tfn.function(lambda a: tfn.exp(a) + 1.0)
    x = tfn.constant(np.ones(5000, np.float32))
    f(x)
    assert f.get_concrete_function(x)._executable.upgrade is None


def test_a_failed_optimised_build_keeps_the_quick_code_and_is_reported_on_wait(tiered, tmp_path_factory,
                                                                               monkeypatch):
    broken = tmp_path_factory.mktemp("worker") / "worker.py"
    broken.write_text("import os, sys\nsys.stderr.write('LLVM went away')\nos.kill(os.getpid(), 9)\n")
    monkeypatch.setattr(tiering, "_WORKER", str(broken))
    f = tfn.function(lambda a: tfn.exp(a) * 2.0)
    x = tfn.constant(np.ones(5000, np.float32))
    expected = np.exp(np.ones(5000, np.float32)) * 2.0
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-6)
    with pytest.raises(tfn.errors.InternalError, match=r"optimised build of .* failed \(exit status -9\)"):
        tfn.config.wait_for_optimized_code()
    assert tfn.config.wait_for_optimized_code() is True  # reported once
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-6)  # the quick code keeps running
    assert _stored(tiered) == []
    assert _build_files(tiered) == []  # its scratch folder is gone


def test_exit_during_an_optimised_build_kills_it_and_leaves_no_files(tiered, tmp_path_factory):
    slow = tmp_path_factory.mktemp("worker") / "worker.py"  # a build that would outlast the process by far
    slow.write_text("import time\ntime.sleep(600)\n")
    code = textwrap.dedent(f"""
        import numpy as np, tfn
        from tfn.runtime import tiering
        tiering.MIN_BYTES, tiering._WORKER = 0, {str(slow)!r}
        f = tfn.function(lambda a: tfn.exp(a) * 2.0)
        x = tfn.constant(np.ones(5000, np.float32))
        f(x)
        print(f.get_concrete_function(x)._executable.upgrade._proc.pid)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TFN_CACHE_DIR=str(tiered), TFN_TIERED_COMPILATION="1"))
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[-1])
    assert not os.path.exists(f"/proc/{pid}")  # killed and reaped at exit
    assert _stored(tiered) == []
    assert _build_files(tiered) == []


def test_a_killed_parent_leaves_no_half_built_files(tiered):
    """The child watches its parent: SIGKILLed (no atexit), the parent's build folder is removed by the child."""
    code = textwrap.dedent("""
        import os, numpy as np, tfn
        from tfn.runtime import tiering
        tiering.MIN_BYTES = 0
        f = tfn.function(lambda a: tfn.exp(a) * 2.0)
        x = tfn.constant(np.ones(5000, np.float32))
        f(x)
        print(f.get_concrete_function(x)._executable.upgrade._proc.pid, flush=True)
        os.kill(os.getpid(), 9)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TFN_CACHE_DIR=str(tiered), TFN_TIERED_COMPILATION="1"))
    pid = int(out.stdout.split()[-1])
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # not ours: wait until the orphan has gone (a hang guard, not a timing)
        for _ in range(2400):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.05)
    assert _build_files(tiered) == []
    assert _stored(tiered) == []


def test_the_quick_code_is_not_stored(tiered):
    f = tfn.function(lambda a: tfn.exp(a) * 2.0)
    x = tfn.constant(np.ones(5000, np.float32))
    f(x)
    upgrade = f.get_concrete_function(x)._executable.upgrade
    upgrade.wait()
    assert _stored(tiered) == [os.path.basename(upgrade.executable.source)]
    assert cache.lookup(upgrade._key) is not None


def test_calls_from_threads_across_the_swap_all_give_the_same_results():
    import threading

    f = tfn.function(lambda a, b: tfn.nn.relu(tfn.matmul(a, b)) + 0.5)
    a, b = tfn.constant(RNG.standard_normal((48, 64), dtype=np.float32)), tfn.constant(np.ones((64, 32), np.float32))
    expected = f(a, b).numpy()
    upgrade = f.get_concrete_function(a, b)._executable.upgrade
    bad, calls = [], [0]

    def caller():
        while True:
            done = upgrade.done()  # once done (and a few calls after), stop: the swap happened meanwhile
            if not np.array_equal(f(a, b).numpy(), expected):
                bad.append(1)
            calls[0] += 1
            if done:
                return

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tfn.config.wait_for_optimized_code() is True
    assert not bad and calls[0] >= 3
    assert f.get_concrete_function(a, b)._executable is upgrade.executable


def _calls_async_runtime(path):
    with open(path, "rb") as f:
        return b"mlirAsyncRuntimeExecute" in f.read()


def test_the_optimised_tier_splits_smaller_products_over_the_workers(tiered, monkeypatch, cores):
    """A 128 x 256 x 256 product (2^24 flops) runs on the calling thread in the quick tier and in builds made at
    once (under tfn-pack-matmul's default min-parallel-flops), but is split over the workers in the optimised tier
    of tfn-pipeline, which the child lowers again from the traced module (tiering.optimised_pipeline): the same
    floats either way (the k loops are not cut). Two cores faked, so that the target has a worker thread."""
    cores(2)
    text = tiering.optimised_pipeline("tfn-pipeline", target.current())
    assert f"min-parallel-flops={tiering.OPTIMISED_MIN_PARALLEL_FLOPS} " in text
    assert f"min-epilogue-elements={tiering.OPTIMISED_MIN_EPILOGUE_ELEMENTS}" in text
    assert tiering.optimised_pipeline("tfn-lower-to-linalg", target.current()) is None
    a = RNG.standard_normal((128, 256), dtype=np.float32)
    b = RNG.standard_normal((256, 256), dtype=np.float32)
    f = tfn.function(lambda a, b: tfn.matmul(a, b) * 2.0)
    first = f(a, b).numpy()
    quick, optimised = _tiers(f.get_concrete_function(a, b))
    assert _calls_async_runtime(optimised.source)
    assert np.array_equal(quick([a, b])[0], optimised([a, b])[0]) and np.array_equal(first, f(a, b).numpy())
    np.testing.assert_allclose(first, 2.0 * (a @ b), rtol=1e-4, atol=1e-3)

    tfn.config.set_tiered_compilation(False)  # built at once: the usual threshold, one thread
    monkeypatch.setenv("TFN_CACHE_DIR", str(tiered / "at-once"))
    g = tfn.function(lambda a, b: tfn.matmul(a, b) * 2.0)
    assert np.array_equal(g(a, b).numpy(), first)
    assert not _calls_async_runtime(g.get_concrete_function(a, b)._executable.source)


def test_a_child_that_cannot_lower_again_builds_the_quick_tiers_module(tmp_path):
    """optimize_worker.py --relower with a file it cannot use says so on stderr and builds the module it was given."""
    from mlir import ir

    module = tmp_path / "m.mlirbc"
    with ir.Context(), open(module, "wb") as out:
        ir.Module.parse("llvm.func @quick_tier() { llvm.return }").operation.write_bytecode(out)
    bad = tmp_path / "relower.json"
    bad.write_text("{not json")
    worker = subprocess.Popen([sys.executable, "-P", tiering._WORKER, str(module), str(tmp_path / "a.o"), "3", "", "",
                               "--relower", str(bad)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    said = worker.stdout.readline()
    worker.stdin.write(b"collected")
    worker.stdin.close()
    worker.wait(60)
    assert said == b"done\n" and b"quick_tier" in (tmp_path / "a.o").read_bytes()
    assert b"was not lowered again" in worker.stderr.read()


def test_a_training_step_with_split_products_gives_identical_results_in_both_tiers(tiered, cores):
    """An MLP 64-256-256-10 step at batch 128: its forward 128 x 256 x 256 product and the backward pass's two (the
    hidden layer's input gradient, the weights' gradient) run on the calling thread in the quick tier, split over
    the workers in the optimised tier: the loss and every variable's new value are the same floats."""
    cores(2)
    rng = np.random.default_rng(3)
    x = tfn.constant(rng.standard_normal((128, 64), dtype=np.float32))
    y = tfn.constant(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])
    shapes = [(64, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
    params = [tfn.Variable(rng.standard_normal(s, dtype=np.float32) * 0.05) for s in shapes]

    def step(params, x, y):
        with tfn.GradientTape() as tape:
            h = tfn.maximum(tfn.matmul(x, params[0]) + params[1], 0.0)
            h = tfn.maximum(tfn.matmul(h, params[2]) + params[3], 0.0)
            logits = tfn.matmul(h, params[4]) + params[5]
            loss = tfn.reduce_mean(tfn.nn.softmax_cross_entropy_with_logits(y, logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.1 * g)
        return loss

    f = tfn.function(step)
    f(params, x, y)
    concrete = f.get_concrete_function(params, x, y)
    quick, optimised = _tiers(concrete)
    assert _calls_async_runtime(optimised.source)
    arrays = [x.numpy(), y.numpy(), *[read() for read in concrete._capture_sources]]
    for a, b in zip(quick(arrays), optimised(arrays)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
