"""Data-parallel scaling on this machine (issue 19): `python bench/distribute.py [--steps N]`.

Trains the digits CNN (examples/train_digits.py) and an MLP (784-1024-1024-10) with Keras `fit` under
MultiWorkerMirroredStrategy in jobs of 1 and 2 processes (`mpiexec -n 1|2`), each process pinned to its own core
(one thread each), at a fixed batch per replica (weak scaling: the global batch grows with the replicas). Prints
the training throughput (examples/s) and the scaling efficiency, throughput(n) / (n x throughput(1)); target
>= 85 % at 2 processes. Needs the distribute extra (pip install ".[distribute]").
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MODELS = {"digits CNN": ("cnn", 32), "MLP 784-1024-1024-10": ("mlp", 64)}  # name: (kind, batch per replica)
TARGET = 0.85


def worker(kind, per_replica, steps):
    """One replica: fit `steps` global batches twice (the first compiles); rank 0 prints examples/s as JSON."""
    import numpy as np

    import tfn

    strategy = tfn.distribute.MultiWorkerMirroredStrategy()
    n = strategy.num_replicas_in_sync
    rng = np.random.default_rng(0)
    shape = (8, 8, 1) if kind == "cnn" else (784,)
    rows = per_replica * n * steps
    x = rng.standard_normal((rows,) + shape).astype(np.float32)
    y = rng.integers(0, 10, rows).astype(np.int32)
    with strategy.scope():
        layers = tfn.keras.layers
        if kind == "cnn":  # examples/train_digits.py's model
            model = tfn.keras.Sequential([
                tfn.keras.Input(shape=(8, 8, 1)), layers.Conv2D(32, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(), layers.Conv2D(64, 3, padding="same", activation="relu"), layers.Flatten(),
                layers.Dropout(0.25), layers.Dense(10)])
        else:
            model = tfn.keras.Sequential([layers.Dense(1024, activation="relu", input_shape=(784,)),
                                          layers.Dense(1024, activation="relu"), layers.Dense(10)])
        model.compile(optimizer=tfn.keras.optimizers.SGD(0.01),
                      loss=tfn.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=per_replica * n, epochs=1, verbose=0, shuffle=False)  # compiles the step
    times = []
    for _ in range(3):
        strategy.comm.Barrier()
        start = time.perf_counter()
        model.fit(x, y, batch_size=per_replica * n, epochs=1, verbose=0, shuffle=False)
        strategy.comm.Barrier()
        times.append(time.perf_counter() - start)
    if strategy.rank == 0:
        print(json.dumps({"examples_per_s": rows / sorted(times)[1]}), flush=True)


_CACHE = os.environ.get("TFN_CACHE_DIR") or tempfile.mkdtemp(prefix="tfn-bench-dist-")


def _start(n, kind, per_replica, steps, core=0):
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if mpiexec is None:
        sys.exit('mpiexec not found: pip install ".[distribute]"')
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", TFN_CACHE_DIR=_CACHE,
               TFN_BENCH_FIRST_CORE=str(core))
    return subprocess.Popen([mpiexec, "-n", str(n), sys.executable, os.path.abspath(__file__), "--worker", kind,
                             str(per_replica), str(steps)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def _result(proc, n):
    out, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"the job of {n} failed:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])["examples_per_s"]


def run_job(n, kind, per_replica, steps):
    """Examples/s of a job of n processes."""
    return _result(_start(n, kind, per_replica, steps), n)


def run_independent(kind, per_replica, steps):
    """Examples/s of two 1-process jobs at once, on cores 0 and 1: what 2 cores give this machine without any
    communication (on a loaded machine, less than twice one job)."""
    procs = [_start(1, kind, per_replica, steps, core) for core in (0, 1)]
    return sum(_result(p, 1) for p in procs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="global batches per timed epoch")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        rank = int(os.environ.get("PMI_RANK", "0")) + int(os.environ.get("TFN_BENCH_FIRST_CORE", "0"))
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[rank % len(cores)]})  # one core, so tfn's kernels run one thread
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'model':22} {'batch/replica':>13} {'1 process':>11} {'2 processes':>11} {'efficiency':>10} "
          f"{'2 x 1 apart':>11} {'vs apart':>8}  target (efficiency)")
    for name, (kind, per_replica) in MODELS.items():
        one = run_job(1, kind, per_replica, args.steps)
        two = run_job(2, kind, per_replica, args.steps)
        apart = run_independent(kind, per_replica, args.steps)
        eff = two / (2 * one)
        print(f"{name:22} {per_replica:>13} {one:>9.0f}/s {two:>9.0f}/s {eff:>10.0%} {apart:>9.0f}/s "
              f"{two / apart:>8.0%}  >= {TARGET:.0%} {'met' if eff >= TARGET else 'NOT met'}", flush=True)
    print("efficiency = 2 processes / (2 x 1 process); 'vs apart' = 2 processes / two 1-process jobs run at the same "
          "time (the cost of communication alone, with the cores this machine gave both)")


if __name__ == "__main__":
    main()
