"""Data-parallel scaling on this machine (issue 19): `python bench/distribute.py [--steps N] [--rounds R] [--phases]`.

Trains the digits CNN (examples/train_digits.py) and an MLP (784-1024-1024-10) with Keras `fit` under
MultiWorkerMirroredStrategy in jobs of 1 and 2 processes (`mpiexec -n 1|2`), each process pinned to its own core
(one thread each), at a fixed batch per replica (weak scaling: the global batch grows with the replicas). Prints
the training throughput (examples/s) and the scaling efficiency, throughput(2) / (2 x throughput(1)); target
>= 85 % at 2 processes. Needs the distribute extra (pip install ".[distribute]").

What makes the figures comparable:
- Steady state only. One untimed job of each kind first fills the artifact cache (compiled steps and the C call
  trampoline), so no timed job compiles anything or has a compiler running next to it on its core (a cold first
  job used to measure the trampoline's build: a 1-process CNN figure 2.7x too low). Within a job, the first epoch
  is untimed too.
- Interleaved rounds. Each round runs the 1-process job, the 2-process job and two 1-process jobs at once ("apart":
  what the 2 cores give without any communication), in an order that rotates; efficiency is taken per round (the
  jobs of one round saw about the same machine) and the median over rounds is reported with its range.
- The load average is printed before and after each model: on a machine shared with other work the spread is
  wide and the figures measure the other work as much as the step.
- "fastest" (not judged) divides the fastest 2-process epoch of all rounds by twice the fastest 1-process epoch:
  on a shared machine, the figure of its least disturbed moments.
`--phases` prints instead where the time of a 2-process step goes (compute, waiting for the other replica, the
all-reduce exchanges, the update after them, Python between steps), from a timeline of every MPI_Allreduce that
bench/mpi_timeline.c records (built with the mpich wheel's mpicc, preloaded into the replicas).
The MLP at 256 rows per replica is printed as an extra row (marked, not judged against the target): the compute of
a step grows with the batch and the bytes of its all-reduce do not.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# name: (kind, batch per replica, judged against the target)
MODELS = {"digits CNN": ("cnn", 32, True), "MLP 784-1024-1024-10": ("mlp", 64, True),
          "MLP (larger batch)": ("mlp", 256, False)}
TARGET = 0.85
TIMED_EPOCHS = 3


def worker(kind, per_replica, steps):
    """One replica: fit `steps` global batches once untimed, then TIMED_EPOCHS times; rank 0 prints the median
    epoch's examples/s and CPU ms per step as JSON."""
    import numpy as np

    import tfn
    from tfn.runtime import fastcall, shared_allreduce

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
    model.fit(x, y, batch_size=per_replica * n, epochs=1, verbose=0, shuffle=False)  # compiles or loads the step
    fastcall.wait()  # the C call path, as every later call of a warm process uses it (built once per cache)
    tfn.config.wait_for_optimized_code()  # a 1-process step is tiered: time its optimised code, not the quick one
    marks = _mark_steps(model) if os.environ.get("TFN_MPI_TIMELINE") else None
    times, cpu, shared = [], [], []
    for _ in range(TIMED_EPOCHS):
        before = shared_allreduce.seconds()
        strategy.comm.Barrier()
        start, start_cpu = time.perf_counter(), time.process_time()
        model.fit(x, y, batch_size=per_replica * n, epochs=1, verbose=0, shuffle=False)
        strategy.comm.Barrier()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        shared.append([1e3 * (b - a) / steps for a, b in zip(before, shared_allreduce.seconds())])
    if marks is not None:
        with open(f"{os.environ['TFN_MPI_TIMELINE']}.steps.{strategy.rank}", "w") as f:
            json.dump(marks, f)
    if strategy.rank == 0:
        print(json.dumps({"examples_per_s": rows / statistics.median(times), "best_examples_per_s": rows / min(times),
                          "cpu_ms_per_step": 1e3 * statistics.median(cpu) / steps,
                          "shared_ms_per_step": [statistics.median(v) for v in zip(*shared)]}), flush=True)


def _mark_steps(model):
    """Record (start, end) of every later call of the model's compiled train step (time.perf_counter: the same
    clock as the MPI timeline's); returns the list it fills."""
    marks, step = [], model._steps["train_step"]

    def timed(*args):
        start = time.perf_counter()
        out = step(*args)
        marks.append((start, time.perf_counter()))
        return out
    model._steps["train_step"] = timed
    return marks


def phases(kind, per_replica, steps):
    """Where the time of a 2-process step goes: the job runs with bench/mpi_timeline.c preloaded (every
    MPI_Allreduce's entry and exit on each replica), and each step is cut into: compute before the first
    all-reduce (forward and backward pass, and the call's own overhead), per all-reduce the wait for the other
    replica (from this replica's entry to the later of the two entries) and the exchange itself (from then to the
    exit), the work after the last one (the optimizer's update), and the Python between two steps (the next batch).
    Returns {name: [ms per step, rank 0 and 1 (median over the timed steps)]} and the all-reduces' element counts."""
    mpicc = shutil.which("mpicc", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if mpicc is None:
        sys.exit("--phases needs mpicc (the mpich wheel's, and a C compiler)")
    work = tempfile.mkdtemp(prefix="tfn-bench-phases-")
    lib = os.path.join(work, "libmpi_timeline.so")
    subprocess.run([mpicc, "-O2", "-shared", "-fPIC", "-o", lib,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi_timeline.c")], check=True)
    prefix = os.path.join(work, "timeline")
    os.environ["TFN_MPI_TIMELINE"] = prefix
    try:
        _result(_start(2, kind, per_replica, steps, preload=lib), 2)
    finally:
        del os.environ["TFN_MPI_TIMELINE"]
    marks, calls = {}, {}
    for r in (0, 1):
        with open(f"{prefix}.steps.{r}") as f:
            marks[r] = json.load(f)
        with open(f"{prefix}.{r}") as f:
            calls[r] = [tuple(float(v) for v in line.split()) for line in f]
    shutil.rmtree(work, ignore_errors=True)
    per_step = {r: [[c for c in calls[r] if a <= c[0] and c[1] <= b] for a, b in marks[r]] for r in (0, 1)}
    names = ["compute before the first all-reduce", "waiting for the other replica", "all-reduce exchanges",
             "after the last all-reduce", "between steps (Python)", "step (wall)"]
    out = {name: {0: [], 1: []} for name in names}
    for k in range(len(marks[0])):
        mine = {r: per_step[r][k] for r in (0, 1)}
        if not mine[0] or len(mine[0]) != len(mine[1]):
            continue
        for r in (0, 1):
            (a, b), cs, other = marks[r][k], mine[r], mine[1 - r]
            wait = sum(max(0.0, max(c[0], o[0]) - c[0]) for c, o in zip(cs, other))
            exchange = sum(c[1] - max(c[0], o[0]) for c, o in zip(cs, other))
            gap = marks[r][k + 1][0] - b if k + 1 < len(marks[r]) else None
            for name, v in zip(names, (cs[0][0] - a, wait, exchange, b - cs[-1][1], gap, b - a)):
                if v is not None:
                    out[name][r].append(1e3 * v)
    counts = [int(c[2]) for c in per_step[0][0]]
    return {name: [statistics.mean(v[r]) for r in (0, 1)] for name, v in out.items()}, counts


def allreduce_worker(kind, per_replica, reps):
    """The all-reduce of a step alone, on 2 replicas: the step's buckets (the model's gradients as
    tfn.distribute plans them, with the loss and row count) all-reduced in place by mpi4py, and by compiled tfn code
    (a function filling and all-reducing buffers of the buckets' sizes, minus one that only fills them: what the
    step's collectives cost, signature checks included; through shared memory when the strategy turns that on, as
    in the step). Rank 0 prints ms per step as JSON."""
    import numpy as np
    from mpi4py import MPI

    import tfn
    from tfn.distribute import buckets
    from tfn.ops.collective_ops import all_reduce

    comm = MPI.COMM_WORLD
    tfn.distribute.MultiWorkerMirroredStrategy()  # as in the step: the shared-memory all-reduce where it applies
    model = (tfn.keras.Sequential([tfn.keras.Input(shape=(8, 8, 1)), tfn.keras.layers.Conv2D(32, 3, padding="same"),
                                   tfn.keras.layers.MaxPooling2D(), tfn.keras.layers.Conv2D(64, 3, padding="same"),
                                   tfn.keras.layers.Flatten(), tfn.keras.layers.Dense(10)]) if kind == "cnn" else
             tfn.keras.Sequential([tfn.keras.layers.Dense(1024, input_shape=(784,)), tfn.keras.layers.Dense(1024),
                                   tfn.keras.layers.Dense(10)]))
    specs = [((), np.float32), ((), np.float32)] + [(tuple(v.shape), np.float32) for v in model.trainable_variables]
    sizes = [sum(int(np.prod(specs[i][0], dtype=np.int64)) for i in b) for b in buckets.plan(specs)]
    arrays = [np.ones(n, np.float32) for n in sizes]
    fill = tfn.function(lambda: [tfn.fill([n], 1.0) for n in sizes])
    fill_reduce = tfn.function(lambda: [all_reduce(tfn.fill([n], 1.0)) for n in sizes])
    runs = {"mpi4py": lambda: [comm.Allreduce(MPI.IN_PLACE, a) for a in arrays], "fill": fill,
            "fill_reduce": fill_reduce}
    times = {k: [] for k in runs}
    for f in runs.values():
        f()
        f()
    for _ in range(reps):  # interleaved, each after a barrier
        for k, f in runs.items():
            comm.Barrier()
            start = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - start)
    med = {k: 1e3 * statistics.median(v) for k, v in times.items()}
    if comm.Get_rank() == 0:
        print(json.dumps({"mpi4py": med["mpi4py"], "compiled": med["fill_reduce"] - med["fill"],
                          "buckets": sizes}), flush=True)


_CACHE = os.environ.get("TFN_CACHE_DIR") or tempfile.mkdtemp(prefix="tfn-bench-dist-")


def _start(n, kind, per_replica, steps, core=0, mode="--worker", preload=None):
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if mpiexec is None:
        sys.exit('mpiexec not found: pip install ".[distribute]"')
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", TFN_CACHE_DIR=_CACHE,
               TFN_BENCH_FIRST_CORE=str(core))
    launch = [mpiexec, "-n", str(n)] + (["-genv", "LD_PRELOAD", preload] if preload else [])
    return subprocess.Popen(launch + [sys.executable, os.path.abspath(__file__), mode, kind, str(per_replica),
                                      str(steps)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _result(proc, n):
    out, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"the job of {n} failed:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def run_job(n, kind, per_replica, steps):
    """Examples/s of a job of n processes (and its rank 0's CPU ms per step)."""
    return _result(_start(n, kind, per_replica, steps), n)


def run_independent(kind, per_replica, steps):
    """Examples/s of two 1-process jobs at once, on cores 0 and 1: what 2 cores give this machine without any
    communication (on a loaded machine, less than twice one job)."""
    procs = [_start(1, kind, per_replica, steps, core) for core in (0, 1)]
    results = [_result(p, 1) for p in procs]
    return {"examples_per_s": sum(r["examples_per_s"] for r in results),
            "cpu_ms_per_step": max(r["cpu_ms_per_step"] for r in results)}


def measure(kind, per_replica, steps, rounds):
    """Per round: {"one", "two", "apart"} results; the order of the three jobs rotates from round to round."""
    jobs = {"one": lambda: run_job(1, kind, per_replica, steps), "two": lambda: run_job(2, kind, per_replica, steps),
            "apart": lambda: run_independent(kind, per_replica, steps)}
    order = list(jobs)
    out = []
    for r in range(rounds):
        turn = order[r % 3:] + order[:r % 3]
        out.append({name: jobs[name]() for name in turn})
    return out


def _spread(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="global batches per timed epoch")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the 1-, 2- and 2x1-process jobs")
    parser.add_argument("--only", default="", help="only the models whose name contains this text")
    parser.add_argument("--phases", action="store_true",
                        help="only where the time of a 2-process step goes (needs mpicc: bench/mpi_timeline.c)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--allreduce-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker or args.allreduce_worker:
        rank = int(os.environ.get("PMI_RANK", "0")) + int(os.environ.get("TFN_BENCH_FIRST_CORE", "0"))
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[rank % len(cores)]})  # one core, so tfn's kernels run one thread
        if args.worker:
            worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        else:
            allreduce_worker(args.allreduce_worker[0], int(args.allreduce_worker[1]), int(args.allreduce_worker[2]))
        return
    if args.phases:
        return print_phases(args)
    print(f"{os.cpu_count()} cores; {args.rounds} interleaved rounds, {args.steps} steps x {TIMED_EPOCHS} timed epochs "
          f"per job; median over rounds (min-max)")
    print(f"{'model':22} {'batch/replica':>13} {'1 process':>20} {'2 processes':>20} {'efficiency':>16} "
          f"{'2 x 1 apart':>20} {'vs apart':>8}  {'fastest':>7}  {'cpu ms/step 1|2':>15}  target (efficiency)  "
          f"load before/after")
    steps_ms = {}
    models = {k: v for k, v in MODELS.items() if args.only.lower() in k.lower()}
    for name, (kind, per_replica, judged) in models.items():
        load = os.getloadavg()[0]
        for n in (1, 2):  # untimed: fills the artifact cache (steps, trampoline) for every timed job
            run_job(n, kind, per_replica, 2)
        rounds = measure(kind, per_replica, args.steps, args.rounds)
        one = [r["one"]["examples_per_s"] for r in rounds]
        two = [r["two"]["examples_per_s"] for r in rounds]
        apart = [r["apart"]["examples_per_s"] for r in rounds]
        eff = [t / (2 * o) for t, o in zip(two, one)]
        steps_ms[name] = 1e3 * per_replica / statistics.median(one)
        vs_apart = [t / a for t, a in zip(two, apart)]
        fastest = (max(r["two"]["best_examples_per_s"] for r in rounds) /
                   (2 * max(r["one"]["best_examples_per_s"] for r in rounds)))
        cpu = "|".join(f"{statistics.median(r[k]['cpu_ms_per_step'] for r in rounds):.1f}" for k in ("one", "two"))
        verdict = (("met" if statistics.median(eff) >= TARGET else "NOT met") if judged
                   else "(extra row: not judged)")
        rate = lambda v: f"{v:.0f}/s"  # noqa: E731
        pct = lambda v: f"{v:.0%}"  # noqa: E731
        print(f"{name:22} {per_replica:>13} {_spread(one, rate):>20} {_spread(two, rate):>20} {_spread(eff, pct):>16} "
              f"{_spread(apart, rate):>20} {statistics.median(vs_apart):>8.0%}  {fastest:>7.0%}  {cpu:>15}  "
              f">= {TARGET:.0%} {verdict:8}  {load:.1f}/{os.getloadavg()[0]:.1f}", flush=True)
        shared = [r["two"].get("shared_ms_per_step") for r in rounds]
        if all(shared) and any(map(sum, shared)):
            parts = [statistics.median(v) for v in zip(*shared)]
            print(f"{'':22} shared-memory all-reduce per 2-process step (replica 0): waiting for the other "
                  f"{parts[0]:.3f} ms, summing its half {parts[1]:.3f} ms, closing barrier {parts[2]:.3f} ms",
                  flush=True)
    print("\nThe all-reduce of a step alone (2 processes, median of 40, in ms), against the 1-process step:")
    for name, (kind, per_replica, judged) in models.items():
        if not judged:
            continue
        alone = _result(_start(2, kind, per_replica, 40, mode="--allreduce-worker"), 2)
        step = steps_ms[name]
        print(f"{name:22} buckets {'+'.join(str(4 * n) for n in alone['buckets'])} bytes: mpi4py in place "
              f"{alone['mpi4py']:.3f} ms, compiled {alone['compiled']:.3f} ms = {alone['compiled'] / step:.1%} of the "
              f"{step:.2f} ms step (load {os.getloadavg()[0]:.1f})", flush=True)
    print("efficiency = 2 processes / (2 x 1 process), per round; 'vs apart' = 2 processes / two 1-process jobs run "
          "at the same time (the cost of communication alone, with the cores this machine gave both); fastest = the "
          "fastest 2-process epoch / (2 x the fastest 1-process epoch) of all rounds (the least disturbed moments of a "
          "shared machine; not judged); cpu ms/step: rank 0's CPU time (a replica waiting in MPI busy-polls, so "
          "waiting counts)")


def print_phases(args):
    models = {k: v for k, v in MODELS.items() if args.only.lower() in k.lower()}
    print(f"Where a 2-process step goes (mean ms per step over {args.steps} steps x {TIMED_EPOCHS} timed epochs, "
          f"replica 0 | replica 1), against the 1-process step (median); load {os.getloadavg()[0]:.1f}")
    for name, (kind, per_replica, _) in models.items():
        for n in (1, 2):  # untimed: fills the artifact cache
            run_job(n, kind, per_replica, 2)
        one = 1e3 * per_replica / run_job(1, kind, per_replica, args.steps)["examples_per_s"]
        got, counts = phases(kind, per_replica, args.steps)
        print(f"\n{name}, {per_replica} rows per replica: 1-process step {one:.3f} ms; all-reduces per step "
              f"(elements): {', '.join(map(str, counts))}")
        for phase, (r0, r1) in got.items():
            print(f"  {phase:38} {r0:8.3f} | {r1:8.3f}")
    print(f"\nload {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
