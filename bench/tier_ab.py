"""Case (h)'s training step built at once against the same step's optimised tier, in one process, interleaved.

    python bench/tier_ab.py [--rounds N] [--target avx2]

Built at once (tiered compilation off) the step gets tfn-pipeline's usual options, its three 2 x 128 x 256 x 256
products on the calling thread; its optimised tier (runtime/tiering.py) splits them over the workers as well. Both
run in this process on their own variables, alternating blocks of 100 calls, so that other processes' load falls on
both alike (a 2-core machine shared with other work: the step's time depends on whether the second core is free).
Prints, per build, the median of the blocks' median call times, the fastest and slowest block, and the quartiles;
the losses of both after the same number of steps (equal: the split cuts no dot product)."""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--target", default="native", help="as bench/run.py's (which reads it from sys.argv on import)")
    a = ap.parse_args()
    import run as bench  # bench/run.py: sets TFN_TARGET_FEATURES (and the other frameworks' ISA) from --target

    import tfn

    x, y, init = bench._mlp_data()
    tx, ty = tfn.constant(x), tfn.constant(y)

    def build(tiered):
        tfn.config.set_tiered_compilation(tiered)
        os.environ["TFN_CACHE_DIR"] = tempfile.mkdtemp(dir=bench._CACHE_ROOT)  # a miss: built, not loaded
        params = [tfn.Variable(p) for p in init]
        f = tfn.function(bench.tfn_train_step)
        f(params, tx, ty)
        tfn.config.wait_for_optimized_code()
        return lambda: f(params, tx, ty)

    steps = {"built at once": build(False), "optimised tier": build(True)}
    times = {k: [] for k in steps}
    for _ in range(a.rounds):
        for name, step in steps.items():
            calls = []
            for _ in range(100):
                t = time.perf_counter()
                step()
                calls.append(time.perf_counter() - t)
            times[name].append(statistics.median(calls) * 1e3)
    print(f"{tfn.config.get_target().describe()}; load average {os.getloadavg()[0]:.2f}")
    for name, v in times.items():
        v = sorted(v)
        print(f"{name}: median {statistics.median(v):.3f} ms, fastest {v[0]:.3f}, slowest {v[-1]:.3f}, quartiles "
              f"{v[len(v) // 4]:.3f}-{v[3 * len(v) // 4]:.3f}; loss now {float(steps[name]()):.6f}")


if __name__ == "__main__":
    main()
