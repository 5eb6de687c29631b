"""Page faults of large buffers (issue 17): RGB-input convolutions with tfn's buffer cache on and off, and TF.

`python bench/page_faults.py [--reps N]` times `tfn.nn.conv2d(x, w, 1, "VALID") + b` on an 8x224x224x3 image with 64
filters of 3x3 and of 7x7 (the first layer of an image network: a 100 MB result per call) and a 50-op chain on
10,000,000 float32 (40 MB temporaries), alternating sample by sample between the buffer cache on (after one call
refilling it) and off (`tfn.runtime.buffer_cache.limit`) in one process, so that both see the same load; minor
page faults per call from /proc/self/stat. TensorFlow's `tf.function` is timed beside when it can be imported.
Prints one Markdown table: medians, faults per call and the speedup (cache off / cache on).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import tfn
from tfn.runtime import buffer_cache, fastcall


def minor_faults():
    return int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[7])


def sample(fn, args):
    """(seconds, minor page faults) of one call fn(*args) with its result read as an array."""
    faults, t = minor_faults(), time.perf_counter()
    fn(*args).numpy()
    return time.perf_counter() - t, minor_faults() - faults


def chain(x):
    for i in range(50):
        x = x * 1.0001 + 0.5 if i % 2 else x - 0.25
    return x


def cases(rng):
    image = rng.standard_normal((8, 224, 224, 3), dtype=np.float32)
    for k in (3, 7):
        kernel = rng.standard_normal((k, k, 3, 64), dtype=np.float32) * 0.1
        bias = rng.standard_normal(64, dtype=np.float32)
        yield (f"conv 8x224x224x3, 64 filters {k}x{k} VALID + bias", [image, kernel, bias],
               lambda ns: lambda x, w, b: ns.nn.conv2d(x, w, 1, "VALID") + b)
    yield "50-op chain on 10,000,000 float32", [rng.standard_normal(10_000_000, dtype=np.float32)], lambda ns: chain


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=9, help="samples per setting (default 9)")
    args = parser.parse_args(argv)
    if fastcall.wait() is None:
        print("no buffer cache: the extension holding it could not be built (a C compiler is needed)")
        return 1
    try:
        import tensorflow as tf  # optional dependency
    except ImportError:
        tf = None
    limit = buffer_cache.limit()
    rows = ["| case | tfn, cache on (ms) | tfn, cache off (ms) | TF function (ms) | faults/call on | faults/call off | "
            "speedup off/on |", "|---|---|---|---|---|---|---|"]
    for name, arrays, build in cases(np.random.default_rng(0)):
        f = tfn.function(build(tfn))
        f(*arrays).numpy()
        tfn.config.wait_for_optimized_code()
        got = {True: [], False: []}
        for _ in range(args.reps):
            for on in (True, False):
                buffer_cache.limit(limit if on else 0)  # 0: every kept block released
                if on:
                    f(*arrays).numpy()  # the cache refilled (the call before ran with it off)
                got[on].append(sample(f, arrays))
        buffer_cache.limit(limit)
        tf_ms = "—"
        if tf is not None:
            g = tf.function(build(tf))
            tensors = [tf.constant(a) for a in arrays]
            g(*tensors).numpy()
            tf_ms = f"{1e3 * statistics.median(sample(g, tensors)[0] for _ in range(args.reps)):.1f}"
        ms = {on: 1e3 * statistics.median(t for t, _ in got[on]) for on in got}
        faults = {on: statistics.median(p for _, p in got[on]) for on in got}
        rows.append(f"| {name} | {ms[True]:.1f} | {ms[False]:.1f} | {tf_ms} | {faults[True]:.0f} | "
                    f"{faults[False]:.0f} | {ms[False] / ms[True]:.2f}x |")
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}; buffer cache limit {limit >> 20} MiB\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
