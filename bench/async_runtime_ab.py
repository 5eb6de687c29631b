"""A/B of the async runtime parallel kernels run on: tfn's (spinning pool threads) against MLIR's (TFN_ASYNC_RUNTIME).

    python bench/async_runtime_ab.py [--rounds N] [--target avx2] [--spin-us US ...] [--busy]

Each round runs one new process per runtime, back to back (the machine's load changes between rounds, not between the
two runs of a round): a 256^3 f32 matmul (1,000 calls) and case (h)'s MLP training step (200 calls), each timed call
by call after a warm-up, with the process's CPU time. Prints per runtime the medians over the rounds of: the fastest
call, the median call, and CPU time per call (all ms), and the range of the load average. `--spin-us` adds tfn's
runtime with other spin times (TFN_ASYNC_SPIN_US); `--busy` times both while another process spins on the last CPU
(bench/run.py's "a CPU busy" rows)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {bench!r})
import numpy as np, tfn, run
from tfn.runtime import async_runtime


def timed(f, n):
    for _ in range(20):
        f()
    times, cpu = [], time.process_time()
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    cpu = (time.process_time() - cpu) / n
    times.sort()
    return [times[0] * 1e3, times[len(times) // 2] * 1e3, cpu * 1e3]


a, b = np.random.rand(256, 256).astype(np.float32), np.random.rand(256, 256).astype(np.float32)
mm = tfn.function(lambda a, b: tfn.matmul(a, b))
mm(a, b)
x, y, init = run._mlp_data()
params, tx, ty = [tfn.Variable(p) for p in init], tfn.constant(x), tfn.constant(y)
train = tfn.function(run.tfn_train_step)
train(params, tx, ty)
tfn.config.wait_for_optimized_code()
if {busy!r}:
    import subprocess
    cpu = max(os.sched_getaffinity(0))
    loop = f"import os\nos.sched_setaffinity(0, {{{{{{cpu}}}}}})\nwhile True: pass"
    busy = subprocess.Popen([sys.executable, "-c", loop])
    time.sleep(0.3)
print(json.dumps({{"runtime": async_runtime.loaded(), "load": os.getloadavg()[0],
                  "matmul": timed(lambda: mm(a, b), 1000), "mlp": timed(lambda: train(params, tx, ty), 200)}}))
if {busy!r}:
    busy.kill()
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--target", default=None, help="TFN_TARGET_FEATURES for the runs (default: as set)")
    parser.add_argument("--spin-us", type=int, nargs="*", default=[], help="more spin times of tfn's runtime")
    parser.add_argument("--busy", action="store_true", help="another process spins on the last CPU meanwhile")
    args = parser.parse_args()
    variants = [("tfn", {"TFN_ASYNC_RUNTIME": "tfn"}), ("mlir", {"TFN_ASYNC_RUNTIME": "mlir"})]
    variants += [(f"tfn spin {us} us", {"TFN_ASYNC_RUNTIME": "tfn", "TFN_ASYNC_SPIN_US": str(us)})
                 for us in args.spin_us]
    cache = tempfile.mkdtemp(prefix="tfn-async-ab-")
    base = dict(os.environ, TFN_CACHE_DIR=cache)
    if args.target:
        base["TFN_TARGET_FEATURES"] = args.target
    code = _CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), busy=args.busy)
    results = {name: [] for name, _ in variants}
    for r in range(args.rounds + 1):  # round 0 fills the cache (both runtimes use the same compiled code)
        for name, env in variants:
            out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True,
                                 check=True)
            if r:
                results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{args.rounds} rounds, TFN_TARGET_FEATURES={base.get('TFN_TARGET_FEATURES', 'native')}"
          f"{', a CPU busy' if args.busy else ''}; medians over rounds, ms: fastest call / median call / CPU per call")
    for name, runs in results.items():
        def med(case, i, runs=runs):
            return statistics.median(run[case][i] for run in runs)
        loads = [run["load"] for run in runs]
        print(f"{name:16s} load {min(loads):4.1f}-{max(loads):4.1f} | matmul 256^3 {med('matmul', 0):.3f} / "
              f"{med('matmul', 1):.3f} / {med('matmul', 2):.3f} | MLP step {med('mlp', 0):.3f} / {med('mlp', 1):.3f}"
              f" / {med('mlp', 2):.3f}")


if __name__ == "__main__":
    main()
