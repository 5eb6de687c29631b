"""Soak test (not CI): many calls of compiled functions with varying shapes, prints, py_functions, variable
updates and threads; prints the process's resident memory as it goes and checks every result.

    python bench/soak.py                      # about 3 minutes on 2 cores
    python bench/soak.py --seconds 60 --threads 4

Memory that keeps growing after the first rounds (every shape compiled, every cache warm) is a leak; any wrong
result or error stops the run with a non-zero exit status.
"""
import argparse
import atexit
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np

_CACHE_ROOT = tempfile.mkdtemp(prefix="tfn-soak-")
atexit.register(shutil.rmtree, _CACHE_ROOT, ignore_errors=True)
os.environ.setdefault("TFN_CACHE_DIR", os.path.join(_CACHE_ROOT, "cache"))

import tfn  # noqa: E402

LOG = os.path.join(_CACHE_ROOT, "print.log")


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@tfn.function(reduce_retracing=True)
def affine(x, w):
    return tfn.tanh(tfn.matmul(x, w)) * 0.5 + 1.0


@tfn.function(reduce_retracing=True)
def printed(x):
    tfn.print("sum", tfn.reduce_sum(x), output_stream="file://" + LOG)
    return x * 2.0


@tfn.function(reduce_retracing=True)
def with_py_function(x):
    y = tfn.py_function(lambda a: np.sort(a.numpy())[::-1].copy(), [x], Tout=tfn.TensorSpec([None], tfn.float32))
    return y + 1.0


@tfn.function
def tiny(x):
    return x + 1.0


counter = tfn.Variable(0)
BURST = 200  # calls of `tiny` per round: the per-call path, many times


@tfn.function
def count(n):
    counter.assign_add(n)
    return counter.read_value()


def one_round(rng, stats):
    """One call of each function, on fresh shapes and values; checks every result against NumPy."""
    n, k = int(rng.integers(1, 33)), int(rng.integers(1, 9))
    x = rng.standard_normal((n, k)).astype(np.float32)
    w = rng.standard_normal((k, 3)).astype(np.float32)
    got = affine(tfn.constant(x), tfn.constant(w)).numpy()
    np.testing.assert_allclose(got, np.tanh(x @ w) * 0.5 + 1.0, rtol=1e-4, atol=1e-5)
    v = rng.standard_normal(int(rng.integers(0, 50))).astype(np.float32)
    np.testing.assert_allclose(printed(tfn.constant(v)).numpy(), v * 2.0)
    np.testing.assert_allclose(with_py_function(tfn.constant(v)).numpy(), np.sort(v)[::-1] + 1.0)
    count(tfn.constant(1))
    t = tfn.constant(v[:4])
    for _ in range(BURST):
        out = tiny(t)
    np.testing.assert_allclose(out.numpy(), v[:4] + 1.0)
    stats["calls"] += 4 + BURST
    stats["counts"] += 1


def worker(seed, deadline, stats, errors):
    rng = np.random.default_rng(seed)
    local = {"calls": 0, "counts": 0}
    try:
        while time.monotonic() < deadline:
            one_round(rng, local)
    except BaseException as e:  # noqa: BLE001  (reported by the main thread)
        errors.append(e)
    with stats["lock"]:
        stats["calls"] += local["calls"]
        stats["counts"] += local["counts"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--report-every", type=float, default=15.0)
    args = parser.parse_args()
    stats, errors = {"calls": 0, "counts": 0, "lock": threading.Lock()}, []
    start = time.monotonic()
    deadline = start + args.seconds
    threads = [threading.Thread(target=worker, args=(seed, deadline, stats, errors)) for seed in range(args.threads)]
    print(f"soak: {args.threads} threads for {args.seconds:.0f} s; RSS at start {rss_mib():.1f} MiB", flush=True)
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(min(args.report_every, max(0.1, deadline - time.monotonic() + 0.5)))
        print(f"  t={time.monotonic() - start:6.1f} s  RSS {rss_mib():7.1f} MiB  traces of affine "
              f"{len(affine._concretes)}", flush=True)
    for t in threads:
        t.join()
    if errors:
        print(f"soak: FAILED: {errors[0]!r}", file=sys.stderr)
        raise errors[0]
    with open(LOG) as f:
        printed_lines = sum(1 for _ in f)
    ok = int(counter.numpy()) == stats["counts"] and printed_lines == stats["counts"]
    print(f"soak: {stats['calls']} calls in {time.monotonic() - start:.0f} s; counter {int(counter.numpy())} for "
          f"{stats['counts']} updates; {printed_lines} printed lines; RSS at end {rss_mib():.1f} MiB; "
          f"{'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
