"""Per-pass times of tfn-pipeline on case (h)'s training step (bench/run.py's tfn_train_step), cold cache.

    python bench/pass_times.py [--reps N] [--target avx2] [--profile] [--dump FILE]

Traces the step in a fresh TFN_CACHE_DIR, takes the traced module the compile driver lowers, then runs the
pipeline N more times on parses of it with MLIR's pass timing, verifying as registry.run does; prints each pass's
median wall time (ms), largest first, and the pipeline's total. Passes nested in a `func.func(...)` pipeline run on
the functions in parallel: their times add up the threads' (the pipeline's own line, `'func.func' Pipeline`, is its
wall time). --profile: one more run under cProfile (the Python functions by own time); --dump: the traced module's
text to a file."""
import argparse
import cProfile
import gc
import os
import pstats
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# "  time (pct%)  name", or with threads enabled "  user (pct%)  wall (pct%)  name": the last time is the wall time
_TIMING_LINE = re.compile(r"\s*([\d.]+)\s+\(\s*[\d.]+%\)\s+(?:([\d.]+)\s+\(\s*[\d.]+%\)\s+)?(\S.*)$")


def _traced_step():
    """(traced module text, pipeline, target) of the training step's first compile."""
    import run as bench  # bench/run.py; imports tfn: after TFN_TARGET_FEATURES is set

    import tfn
    from tfn.runtime import driver

    captured = []
    real_lower = driver.lower

    def lower(module, pipeline, target, name):
        captured.append((module.operation.get_asm(enable_debug_info=True), pipeline, target))
        return real_lower(module, pipeline, target, name)

    driver.lower = lower
    x, y, init = bench._mlp_data()
    params = [tfn.Variable(p) for p in init]
    t = time.perf_counter()
    tfn.function(bench.tfn_train_step)(params, tfn.constant(x), tfn.constant(y))
    print(f"first call {1e3 * (time.perf_counter() - t):.0f} ms (this process, tracing included)", flush=True)
    driver.lower = real_lower
    return captured[0]


def _verify_each_pass():
    """registry.verify_each_pass() where the tree has it (else every pass verifies, as before it existed)."""
    from tfn.passes import registry

    return getattr(registry, "verify_each_pass", lambda: True)()


def _timed_run(spelled, target, module):
    """Run the pipeline `spelled` with pass timing on module; (seconds, {pass: seconds}) from the report MLIR prints
    to stderr when the pass manager is destroyed."""
    from tfn.passes import registry

    pm = registry.pass_manager(spelled, None, target)
    pm.enable_verifier(_verify_each_pass())  # as registry.run does
    pm.enable_timing()
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    t = time.perf_counter()
    try:
        pm.run(module.operation)
        if not _verify_each_pass():
            module.operation.verify()
        total = time.perf_counter() - t
        del pm  # the report prints when the pass manager is destroyed
        gc.collect()
    finally:
        os.dup2(saved, 2)
        os.close(w)
    report = os.read(r, 1 << 20).decode()
    os.close(r)
    seen = {}
    for line in report.splitlines():
        m = _TIMING_LINE.match(line)
        if m and m.group(3).strip() not in ("Total", "Rest"):
            name = m.group(3).strip()
            seen[name] = seen.get(name, 0.0) + float(m.group(2) or m.group(1))
    return total, seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--target", default=None, help="TFN_TARGET_FEATURES, e.g. avx2")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--dump")
    a = ap.parse_args()
    os.environ["TFN_CACHE_DIR"] = tempfile.mkdtemp()
    if a.target:
        os.environ["TFN_TARGET_FEATURES"] = a.target
    text, pipeline, target = _traced_step()
    from mlir import ir

    from tfn.dialects import context as dialect_context
    from tfn.passes import registry
    from tfn.passes import target as target_mod

    target = target if target is not None else target_mod.current()
    if a.dump:
        with open(a.dump, "w") as out:
            out.write(text)
    spelled = registry.pipeline_text(pipeline, target)
    times, totals = {}, []
    with dialect_context.shared_context(), ir.Location.unknown():
        for _ in range(a.reps):
            module = ir.Module.parse(text)
            total, seen = _timed_run(spelled, target, module)
            totals.append(total)
            for k, v in seen.items():
                times.setdefault(k, []).append(v)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        for k, v in sorted(med.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"{v:8.1f} ms  {k}")
        print(f"pipeline total, median of {a.reps}: {statistics.median(totals) * 1e3:.0f} ms "
              f"(verified after each pass: {_verify_each_pass()})")
        if a.profile:
            module = ir.Module.parse(text)
            pm = registry.pass_manager(spelled, None, target)
            pm.enable_verifier(_verify_each_pass())
            prof = cProfile.Profile()
            prof.runcall(pm.run, module.operation)
            pstats.Stats(prof).sort_stats("tottime").print_stats(45)


if __name__ == "__main__":
    main()
