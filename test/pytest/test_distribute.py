"""tfn.distribute over MPI: jobs of 2 processes (`mpiexec -n 2`) against one process, failures, mismatches."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason='needs the distribute extra: pip install -e ".[test,distribute]"')

PROGRAMS = os.path.join(os.path.dirname(__file__), "distribute", "programs.py")
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
HANG_GUARD = 240  # seconds: a job that has not ended by then hangs (the failure this file checks against)


def _run(args, n=None, env=None):
    cmd = ([MPIEXEC, "-n", str(n)] if n else []) + [sys.executable, PROGRAMS, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD,
                          env=None if env is None else dict(os.environ, **env))


def _job(tmp_path, mode, env=None, name=None):
    out = str(tmp_path / (name or mode))
    proc = _run([mode, out], n=2, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, [np.load(f"{out}.{r}.npz", allow_pickle=True) for r in (0, 1)]


def _shared_sums(tmp_path, name):
    """(all-reduces that tried shared memory, those it did) of each replica of a train job."""
    return [tuple(np.load(str(tmp_path / f"{name}.{r}.shared.npy"))) for r in (0, 1)]


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_fit_on_two_replicas_equals_one_process_on_the_global_batch(tmp_path, kind):
    proc, ranks = _job(tmp_path, kind)
    single = str(tmp_path / "single")
    one = _run([kind, single])
    assert one.returncode == 0, one.stderr[-3000:]
    alone = np.load(f"{single}.0.npz")
    for name in alone.files:
        assert np.array_equal(ranks[0][name], ranks[1][name]), f"{name} differs between the replicas"
        np.testing.assert_allclose(ranks[0][name], alone[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # the gradients' all-reduce is an op of the compiled train step
    assert proc.stdout.count('"tfn.all_reduce"') == 1, proc.stdout[-3000:]
    # ... summed through shared memory (both replicas run on this machine), at every step
    for tried, done in _shared_sums(tmp_path, kind):
        assert tried == done > 0, (tried, done)


def test_the_shared_memory_sums_and_mpis_give_the_same_bits(tmp_path):
    _, shared = _job(tmp_path, "mlp")
    _, mpi = _job(tmp_path, "mlp", env={"TFN_SHARED_ALLREDUCE": "0"}, name="mpi")
    assert _shared_sums(tmp_path, "mpi") == [(0, 0), (0, 0)]
    for name in shared[0].files:
        for r in (0, 1):
            assert shared[r][name].tobytes() == mpi[r][name].tobytes(), name


def test_custom_loop_run_reduce_replica_context_and_dataset(tmp_path):
    _, (r0, r1) = _job(tmp_path, "custom")
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    total = x0 + (x0 + 1)
    for r in (r0, r1):
        assert int(r["n"]) == 2
        np.testing.assert_array_equal(r["v"], [10.0, 10.0, 10.0])  # replica 0's initial value
        for key in ("eager_sum", "compiled_sum", "reduce_sum"):
            np.testing.assert_array_equal(r[key], total, err_msg=key)
        for key in ("eager_mean", "compiled_mean"):
            np.testing.assert_array_equal(r[key], total, err_msg=key)  # mean of 2x and 2(x + 1)
        np.testing.assert_array_equal(r["reduce_mean0"], total.sum(0) / 4)
        np.testing.assert_array_equal(r["reread_sum3"], 3 * total)
        np.testing.assert_array_equal(r["reread_sum"], total)
    for k, r in enumerate((r0, r1)):  # tensors the function reads after its in-place all-reduces are untouched
        np.testing.assert_array_equal(r["reread_x"], x0 + k)
        np.testing.assert_array_equal(r["reread_y"], 3 * (x0 + k))
    sent = [np.array([-0.0, np.nan, 1.5 * (k + 1)], np.float32) for k in (0, 1)]
    for r in (r0, r1):
        for how in ("compiled", "eager"):
            assert r[f"{how}_bcast"].tobytes() == sent[1].tobytes(), how  # replica 1's bits, -0.0 and NaN kept
            assert r[f"{how}_gather"].tobytes() == np.stack(sent).tobytes(), how
    rows = np.arange(20, dtype=np.float32).reshape(10, 2)
    assert r0["shards"].tolist() == [rows[0:2].tolist(), rows[5:7].tolist()]
    assert r1["shards"].tolist() == [rows[2:5].tolist(), rows[7:10].tolist()]


def test_a_collective_of_constants_is_exchanged_at_every_call_not_folded_by_the_compiler(tmp_path):
    # Folded at compile time, the sum of 2 replicas' constants would be cached with the code (keyed by the IR,
    # which holds only this replica's constant) and returned again in a job of another size.
    cache = dict(os.environ, TFN_CACHE_DIR=str(tmp_path / "cache"))
    out = str(tmp_path / "c")
    cmd = [sys.executable, PROGRAMS, "constant", out]
    proc = subprocess.run([MPIEXEC, "-n", "2"] + cmd, capture_output=True, text=True, timeout=HANG_GUARD, env=cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        np.testing.assert_array_equal(np.load(f"{out}.{rank}.npy"), [3.0])
    alone = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD, env=cache)  # replica 0's IR
    assert alone.returncode == 0, alone.stderr[-3000:]
    np.testing.assert_array_equal(np.load(f"{out}.0.npy"), [1.0])


def test_mismatched_shapes_are_reported_by_every_replica(tmp_path):
    out = str(tmp_path / "m")
    proc = _run(["mismatch", out], n=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank, shape in ((0, "float32[3]"), (1, "float32[4]")):
        with open(f"{out}.{rank}.txt") as f:
            text = f.read()
        for how in ("compiled", "eager"):
            line = [t for t in text.splitlines() if t.startswith(f"{how}:")]
            assert line and "the replicas disagree on the dtype or shape" in line[0] and shape in line[0], text
        assert "programs.py:" in text  # the compiled op's message names the user's line


def test_a_replica_that_raises_stops_the_job_with_its_error(tmp_path):
    proc = _run(["raise", str(tmp_path / "f")], n=2)
    assert proc.returncode != 0
    assert "RuntimeError: replica 1 cannot read its data" in proc.stderr
    assert "aborting the job" in proc.stderr
    assert "not expected" not in proc.stdout


def test_a_replica_that_dies_stops_the_job(tmp_path):
    proc = _run(["die", str(tmp_path / "f")], n=2)
    assert proc.returncode != 0
    assert "not expected" not in proc.stdout


def test_a_replica_that_hangs_is_stopped_by_the_watchdog_of_the_others(tmp_path):
    proc = _run(["hang", str(tmp_path / "f")], n=2)
    assert proc.returncode != 0
    assert "replica 0 waited more than 5 s in" in proc.stderr and "aborting the job" in proc.stderr, proc.stderr
    assert "not expected" not in proc.stdout


def test_without_mpi_the_strategy_says_how_to_install_it():
    code = ("import sys; sys.modules['mpi4py'] = None\nimport tfn\n"
            "try:\n    tfn.distribute.MultiWorkerMirroredStrategy()\n"
            "except tfn.errors.FailedPreconditionError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert 'pip install "tfn[distribute]"' in proc.stdout, proc.stdout + proc.stderr


def test_buckets_fuse_small_tensors():
    from tfn.distribute.buckets import plan

    f32 = np.dtype(np.float32)
    specs = [((10,), f32), ((10, 10), f32), ((3,), np.dtype(np.int32)), ((1000,), f32), ((5,), f32)]
    assert plan(specs, bucket_bytes=1 << 20) == [[0, 1], [2], [3, 4]]
    assert plan(specs, bucket_bytes=440) == [[0, 1], [3], [2], [4]]  # 40 + 400 bytes fit; 4000 is alone
    # a large tensor is a message of its own (no copy into a bucket); the small ones around it still share one
    assert plan(specs, bucket_bytes=1 << 20, alone_bytes=4000) == [[0, 1], [3], [2], [4]]
    assert plan(specs[:2] + specs[3:], bucket_bytes=1 << 20, alone_bytes=400) == [[1], [2], [0, 3]]


def test_one_process_is_a_job_of_one_replica():
    import tfn
    from tfn.ops.collective_ops import all_gather, all_reduce, broadcast

    x = tfn.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    f = tfn.function(lambda x: (all_reduce(x, "max"), broadcast(x), all_gather(x)))
    for out in f(x):
        np.testing.assert_array_equal(out.numpy(), x.numpy())
    strategy = tfn.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    with pytest.raises(ValueError, match="unknown reduce_op"):
        strategy.reduce("PRODUCT", x)
