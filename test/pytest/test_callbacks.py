"""tfn.print and tfn.py_function: eagerly, and called back from compiled code at every call, in program order."""
import gc
import sys
import tracemalloc

import guide
import numpy as np
import pytest

import tfn


def test_print_formats_like_tf_print(capsys):
    tfn.print(tfn.constant(2.2), tfn.constant([0.722626925, 0.725044, 1.0]), tfn.constant([True, False]),
              "text", 7, [1, "a"], tfn.constant(np.float64(0.1)))
    tfn.print(tfn.range(10), tfn.reshape(tfn.range(16), [4, 4]), summarize=2, sep="\n")
    tfn.print(tfn.constant(b"aa"), tfn.constant(["a", "b"]), sep="|", end="!\n", output_stream=sys.stdout)
    tfn.print(tfn.range(8), summarize=-1)
    out, err = capsys.readouterr()
    assert err == ("2.2 [0.722626925 0.725044 1] [1 0] text 7 [1, 'a'] 0.1\n"
                   "[0 1 ... 8 9]\n[[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]\n [12 13 14 15]]\n"
                   "[0 1 2 3 4 5 6 7]\n")
    tfn.print(tfn.reshape(tfn.range(60), [3, 4, 5]), summarize=1)
    assert capsys.readouterr().err == ("[[[0 ... 4]\n  ...\n  [15 ... 19]]\n\n ...\n\n"
                                       " [[40 ... 44]\n  ...\n  [55 ... 59]]]\n")
    assert out == 'aa|["a" "b"]!\n'


def test_print_rejects_other_streams():
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tfn.print("x", output_stream=object())


def test_print_runs_at_every_call_in_program_order(capsys):
    @tfn.function
    def f(x):
        print("Traced with", x)
        tfn.print("Executed with", x, output_stream=sys.stdout)
        y = tfn.py_function(lambda v: print("py_function sees", v.numpy()) or v * 2, [x], tfn.float32)
        tfn.print("then", y, {"y": y}, output_stream=sys.stdout)
        return y

    f(tfn.constant(1.5))
    f(tfn.constant(2.5))
    f(1.0)
    assert capsys.readouterr().out == (
        "Traced with Tensor(\"x:0\", shape=(), dtype=float32)\nExecuted with 1.5\npy_function sees 1.5\n"
        "then 3 {'y': 3}\nExecuted with 2.5\npy_function sees 2.5\nthen 5 {'y': 5}\n"
        "Traced with 1.0\nExecuted with 1.0\npy_function sees 1.0\nthen 2 {'y': 2}\n")


def test_print_in_a_loop_and_in_branches(capsys):
    @tfn.function
    def fizzbuzz(n):
        i = tfn.constant(1)
        while i <= n:
            if i % 15 == 0:
                tfn.print("fizzbuzz")
            elif i % 3 == 0:
                tfn.print("fizz")
            elif i % 5 == 0:
                tfn.print("buzz")
            else:
                tfn.print(i)
            i += 1

    fizzbuzz(tfn.constant(5))
    fizzbuzz(tfn.constant(15))
    expected = "1 2 fizz 4 buzz 1 2 fizz 4 buzz fizz 7 8 fizz buzz 11 fizz 13 14 fizzbuzz"
    assert capsys.readouterr().err.split() == expected.split()


def test_py_function_guide_example_is_a_plain_call_eagerly():
    py_plus = guide.run("print_and_py_function.py").namespace["py_plus"]  # the guide's py_function program
    assert py_plus(tfn.constant(1.0), 2.0).numpy() == 3.0


def test_py_function_several_results_and_shapes():
    @tfn.function
    def f(x, s):
        a, b = tfn.py_function(lambda x, s: (x.numpy()[::-1] * 2, s + b"!"), [x, s],
                               [tfn.int32, tfn.TensorSpec([], tfn.string)])
        return a + 1, b, tfn.py_function(lambda: [[1.0, 2.0]], [], tfn.TensorSpec([None, 2], tfn.float32))

    a, b, c = f(tfn.constant([1, 2, 3]), tfn.constant("s"))
    assert a.numpy().tolist() == [7, 5, 3] and b.numpy() == b"s!" and c.shape == (1, 2)
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"result #1 .* has shape \(2,\), but the trace "
                                                             r"expects shape \(\)"):
        f(tfn.constant([1, 2]), tfn.constant(["a", "b"]))


def test_py_function_errors_surface_and_the_function_keeps_working():
    calls = []

    def fails_on_negative(x):
        calls.append(float(x))
        if x < 0:
            raise ValueError(f"negative input {float(x)}")
        return x

    @tfn.function
    def f(x):
        y = tfn.py_function(fails_on_negative, [x], tfn.float32)
        tfn.py_function(lambda v: calls.append("after"), [y], [])
        return y * 2

    with pytest.raises(ValueError, match="negative input -1.0"):
        f(tfn.constant(-1.0))
    assert calls == [-1.0]  # later sites are skipped once one failed
    assert f(tfn.constant(3.0)).numpy() == 6.0
    with pytest.raises(ZeroDivisionError):
        tfn.py_function(lambda: 1 / 0, [], tfn.float32)


def test_py_function_in_a_loop():
    seen = []

    @tfn.function
    def f(n):
        i, total = tfn.constant(0), tfn.constant(0.0)
        while i < n:
            total += tfn.py_function(lambda v: seen.append(int(v)) or float(v) ** 2, [i], tfn.float32)
            i += 1
        return total

    assert f(tfn.constant(4)).numpy() == 14.0
    assert seen == [0, 1, 2, 3]


def test_py_function_calling_a_tfn_function():
    inner = tfn.function(lambda s: s + s)

    @tfn.function
    def outer(s):
        return tfn.py_function(lambda v: inner(v), [s], tfn.string) + s

    assert outer(tfn.constant("ab")).numpy() == b"ababab"


def _sink(monkeypatch):
    class Sink:
        def write(self, text):
            pass

        def flush(self):
            pass
    monkeypatch.setattr(sys, "stderr", Sink())


def test_ten_thousand_calls_do_not_leak(monkeypatch):
    @tfn.function
    def f(x, s):
        tfn.print("x:", x, s)
        y = tfn.py_function(lambda v, t: (v * 2, t + b"."), [x, s], [tfn.float32, tfn.TensorSpec([], tfn.string)])
        return y[0] + x, y[1] + s

    x, s = tfn.constant([1.0, 2.0, 3.0]), tfn.constant("s")
    _sink(monkeypatch)
    tracemalloc.start()  # before warming up: blocks that free lists hold are then traced from the start
    for _ in range(2_000):  # warm up: NumPy's, ctypes' and Python's caches and free lists fill first
        f(x, s)
    gc.collect()
    objects = len(gc.get_objects())
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(10_000):
        y, t = f(x, s)
    del y, t
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 100_000, f"{grown} bytes more after 10,000 calls"
    assert len(gc.get_objects()) - objects < 100


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_ten_thousand_calls_that_print_and_assign_do_not_grow_memory(monkeypatch):
    v = tfn.Variable(tfn.zeros([1000]))

    @tfn.function
    def step(x):
        tfn.print("step", v[0])
        v.assign_add(x)
        return v * 2.0  # a fresh 4 KB buffer each call: leaking it would cost ~40 MB

    x = tfn.constant(np.ones(1000, np.float32))
    _sink(monkeypatch)
    for _ in range(2_000):
        step(x)
    gc.collect()
    before = _rss_bytes()
    for _ in range(10_000):
        out = step(x)
    del out
    gc.collect()
    grown = _rss_bytes() - before
    assert grown < 4_000_000, f"resident memory grew by {grown} bytes over 10,000 calls"
    assert v.numpy()[0] == 12_000.0


def test_a_call_nested_in_a_py_function_keeps_the_outer_calls_error():
    """The outer call has recorded an out-of-range index when its py_function calls the same function again: the
    inner call succeeds and leaves the thread's error channel as it found it, so the outer call still raises."""
    x = tfn.constant(np.arange(10, dtype=np.float32))
    inner = []

    def again(flag):
        if flag.numpy():
            inner.append(g(x, tfn.constant([4]), tfn.constant(False)).numpy().tolist())
        return flag

    @tfn.function
    def g(x, i, flag):
        y = tfn.gather(x, i)
        tfn.py_function(again, [flag], tfn.bool)
        return y

    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"indices\[0\] = 50 is not in \[0, 10\)"):
        g(x, tfn.constant([50]), tfn.constant(True))
    assert inner == [[4.0]]
    assert g(x, tfn.constant([2]), tfn.constant(False)).numpy().tolist() == [2.0]
