"""Threads share compiled functions, traces and variables: calls are safe, first calls trace once, updates are
atomic. Each program runs in its own process, so a crash (a double free aborts) fails its test, not the suite."""
import os
import subprocess
import sys
import textwrap

import pytest

_PRELUDE = """
import threading
import numpy as np
import tfn

def in_threads(work, n=8):
    errors = []
    def run():
        try:
            work()
        except BaseException as e:
            errors.append(e)
    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
"""


def _run(code, **env):
    """Run `code` (after the prelude) in a new Python process; its stdout, or the test fails with its stderr."""
    full_env = {**os.environ, **env}
    proc = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=300)
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc.stdout


_CALLS = """
@tfn.function
def f(x):
    return x * 2.0 + 1.0

@tfn.function
def g(x, i):
    return tfn.gather(x, i)  # reports out-of-range indices: a function with the run-time error flag

x = tfn.constant(np.arange(1000, dtype=np.float32))
f(x)
g(x, tfn.constant([1, 2]))

def work():
    for k in range(300):
        assert f(x).numpy()[5] == 11.0
        assert g(x, tfn.constant([k % 1000, 3])).numpy().tolist() == [float(k % 1000), 3.0]
        try:
            g(x, tfn.constant([5000, 1]))
            raise AssertionError("an out-of-range index did not raise")
        except tfn.errors.InvalidArgumentError:
            pass

in_threads(work)
print("ok")
"""


@pytest.mark.parametrize("path", ["fastcall", "ctypes"])
def test_eight_threads_call_one_compiled_function(path, tmp_path):
    env = {"TFN_FASTCALL": "0"} if path == "ctypes" else {}
    assert _run(_CALLS, **env) == "ok\n"


def test_threads_call_with_an_empty_cache(tmp_path):
    """An empty cache: the trampoline builds in the background, calls take the ctypes path meanwhile."""
    assert _run(_CALLS, TFN_CACHE_DIR=str(tmp_path / "cache")) == "ok\n"


@pytest.mark.parametrize("path", ["fastcall", "ctypes"])
def test_calls_of_a_function_with_run_time_errors_run_at_once_each_with_its_own_error(path):
    """The error channel is per thread: thread A's call has recorded an out-of-range index and waits (in a
    py_function) until thread B's call of the same function has finished; B must neither wait for A nor see A's
    error, and A must still raise its own. A serialised call path deadlocks here (the waits time out)."""
    out = _run("""
        a_recorded, b_done = threading.Event(), threading.Event()

        def pause(flag):
            if flag.numpy():
                a_recorded.set()
                assert b_done.wait(60), "thread B's call waited for thread A's"
            return flag

        @tfn.function
        def g(x, i, flag):
            y = tfn.gather(x, i)
            tfn.py_function(pause, [flag], tfn.bool)
            return y

        x = tfn.constant(np.arange(10, dtype=np.float32))
        g(x, tfn.constant([1]), tfn.constant(False))
        outcome = {}

        def a():
            try:
                g(x, tfn.constant([50]), tfn.constant(True))
            except tfn.errors.InvalidArgumentError as e:
                outcome["a"] = str(e).splitlines()[0]

        t = threading.Thread(target=a)
        t.start()
        assert a_recorded.wait(60)
        outcome["b"] = g(x, tfn.constant([3]), tfn.constant(False)).numpy().tolist()
        b_done.set()
        t.join()
        print(outcome["b"], outcome["a"])

        # many threads, mixed good and bad indices, on the function without callbacks (the C trampoline's path)
        h = tfn.function(lambda x, i: tfn.gather(x, i) * 2.0)
        def work():
            rng = np.random.default_rng(threading.get_ident() % 1000)
            for _ in range(300):
                k = int(rng.integers(0, 20))
                try:
                    got = h(x, tfn.constant([k])).numpy().tolist()
                    assert k < 10 and got == [2.0 * k], (k, got)
                except tfn.errors.InvalidArgumentError as e:
                    assert k >= 10 and f"indices[0] = {k} is not in [0, 10)" in str(e), (k, str(e))
        in_threads(work)
        print("ok")
    """, **({"TFN_FASTCALL": "0"} if path == "ctypes" else {}))
    assert out == "[3.0] indices[0] = 50 is not in [0, 10)\nok\n"


def test_concurrent_first_calls_trace_once():
    out = _run("""
        traces = []
        @tfn.function
        def f(x):
            traces.append(1)
            return x + 1.0

        start = threading.Barrier(8)
        def work():
            start.wait()
            assert f(tfn.constant([1.0, 2.0])).numpy().tolist() == [2.0, 3.0]
        in_threads(work)
        print(len(traces), len(f._concretes))
    """)
    assert out == "1 1\n"


def test_a_function_is_called_while_another_thread_traces():
    out = _run("""
        tracing, release = threading.Event(), threading.Event()

        @tfn.function
        def slow(x):
            tracing.set()
            assert release.wait(60)  # holds the trace open until the main thread has called `fast`
            return x * 3.0

        @tfn.function
        def fast(x):
            return x + 1.0

        x = tfn.constant([1.0])
        fast(x)
        t = threading.Thread(target=lambda: print("slow", slow(x).numpy().tolist()))
        t.start()
        assert tracing.wait(60)
        print("fast", fast(x).numpy().tolist())
        release.set()
        t.join()
    """)
    assert out == "fast [2.0]\nslow [3.0]\n"


def test_assign_add_from_eight_threads_is_atomic():
    out = _run("""
        v = tfn.Variable(0)
        w = tfn.Variable(0.0)
        u = tfn.Variable(0)

        @tfn.function
        def step():
            w.assign_add(1.0)
            u.assign_sub(1)

        def eager():
            for _ in range(1000):
                v.assign_add(1)

        def compiled():
            for _ in range(1000):
                step()

        in_threads(eager)
        step()  # traces (and compiles) on this thread first: the threads only call
        in_threads(compiled)
        print(int(v.numpy()), float(w.numpy()), int(u.numpy()))
    """)
    assert out == "8000 8001.0 -8001\n"


def test_first_calls_of_a_function_creating_a_variable_initialise_once():
    out = _run("""
        state = []

        @tfn.function
        def count(x):
            if not state:
                state.append(tfn.Variable(x * 0.0))
            return state[0].assign_add(x)

        start = threading.Barrier(8)
        def work():
            start.wait()
            for _ in range(100):
                count(tfn.constant(1.0))
        in_threads(work)
        print(len(state), float(state[0].numpy()))
    """)
    assert out == "1 800.0\n"


def test_concurrent_first_calls_of_a_method_trace_once():
    out = _run("""
        traces = []

        class Model:
            @tfn.function
            def scale(self, x):
                traces.append(1)
                return x * 2.0

        model = Model()
        start = threading.Barrier(8)
        def work():
            start.wait()
            assert model.scale(tfn.constant([1.0])).numpy().tolist() == [2.0]
        in_threads(work)
        print(len(traces))
    """)
    assert out == "1\n"


def test_copied_variables_have_their_own_lock():
    import copy

    import tfn

    v = tfn.Variable([1.0, 2.0])
    w = copy.deepcopy(v)
    w.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [1.0, 2.0] and w.numpy().tolist() == [2.0, 3.0]
    assert w._lock is not v._lock


@pytest.mark.parametrize("second", ["h", "k"])
def test_py_function_tracing_in_a_call_that_holds_a_variable_does_not_deadlock(second):
    """Thread 1's call of `f` holds v's lock (its update is atomic) and its py_function traces a new function (the
    trace lock); thread 2 meanwhile traces `h`, which writes v, or makes the first call of `k`, whose initializer
    writes v. It must not wait for v's lock while it holds the trace lock, or the two threads wait for each other."""
    out = _run("""
        import os
        v = tfn.Variable(0)
        in_call, tracing = threading.Event(), threading.Event()

        @tfn.function
        def late(x):
            return x + 100

        def callback(x):
            in_call.set()
            assert tracing.wait(60)  # thread 2 holds the trace lock now
            return late(x)

        @tfn.function
        def f(x):
            v.assign_add(1)
            return tfn.py_function(callback, [x], tfn.int32)

        @tfn.function
        def h(x):
            tracing.set()
            v.assign_add(10)
            return x

        made = []

        @tfn.function
        def k(x):
            tracing.set()
            if not made:
                made.append(tfn.Variable(5))
            v.assign_add(10)
            return x + made[0]

        def second():
            assert in_call.wait(60)
            out = SECOND(tfn.constant(2)).numpy()
            print(f"second {out}\\n", end="", flush=True)  # one write: the threads' lines do not interleave

        t1 = threading.Thread(target=lambda: print(f"f {f(tfn.constant(1)).numpy()}\\n", end="", flush=True),
                              daemon=True)
        t2 = threading.Thread(target=second, daemon=True)
        t1.start(); t2.start()
        t1.join(60); t2.join(60)
        if t1.is_alive() or t2.is_alive():
            print("deadlock", flush=True)
            os._exit(0)
        print("v", v.numpy())
    """.replace("SECOND", second))
    assert sorted(out.splitlines()) == ["f 101", f"second {2 if second == 'h' else 7}", "v 11"]
