"""The call hot path (C trampoline, runtime/fastcall.py) and the artifact cache's robustness."""
import collections
import gc
import os
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import tfn
from tfn.runtime import cache, fastcall

Pair = collections.namedtuple("Pair", "a b")


@pytest.fixture
def ctypes_path(monkeypatch):
    """Executables created inside the test use the ctypes calling path (as without a C compiler)."""
    monkeypatch.setitem(fastcall._state, "module", None)


def _body(x, pair, d, scale=2.0, flip=False):
    y = x * scale + pair.a
    z = {"sum": y + d["k"], "diff": pair.b - x}
    return (z, [y, None, 3], -y if flip else y)


def _run_all(f):
    """Outputs of f over calls covering kwargs, defaults, Python values and nested inputs, as NumPy values."""
    x = tfn.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    pair = Pair(tfn.constant(np.ones((2, 3), np.float32)), tfn.constant(np.full((2, 3), 5.0, np.float32)))
    d = {"k": tfn.constant(np.float32(0.5))}
    calls = [f(x, pair, d), f(x, pair, d, 3.0), f(x, pair, d=d, flip=True), f(x, scale=1.0, pair=pair, d=d),
             f(x, pair, d)]
    return [tfn.nest.map_structure(lambda t: t.numpy() if isinstance(t, tfn.Tensor) else t, c) for c in calls]


def _assert_same(a, b):
    assert tfn.nest.map_structure(type, a) == tfn.nest.map_structure(type, b)
    for u, v in zip(tfn.nest.flatten(a), tfn.nest.flatten(b)):
        np.testing.assert_array_equal(u, v)


def test_fast_path_is_taken():
    if fastcall.wait() is None:
        pytest.skip("no C compiler or Python headers: the ctypes path is the only one")
    f = tfn.function(lambda x: x + 1)
    f(tfn.constant([1.0]))
    (concrete,) = f._concretes
    assert concrete._executable.plan is not None
    assert "_run_leaves" in vars(concrete)  # the precomputed runner replaced the generic method


def test_fast_and_ctypes_paths_agree(ctypes_path):
    slow = _run_all(tfn.function(_body))
    fastcall._state.pop("module")  # as on a fresh process: load (or build) the extension again
    fastcall.wait()
    fast = _run_all(tfn.function(_body))
    _assert_same(fast, slow)
    assert slow[1][2].tolist() == (np.arange(6).reshape(2, 3) * 3.0 + 1).tolist()
    assert slow[2][2].tolist() == (-(np.arange(6).reshape(2, 3) * 2.0 + 1)).tolist()


def test_concrete_function_calls_bind_once_then_take_the_fast_path():
    f = tfn.function(lambda a, b, n=2: (a * n, b - a))
    x, y = tfn.constant([1.0, 2.0]), tfn.constant([5.0, 5.0])
    c = f.get_concrete_function(x, y)
    for _ in range(3):
        r = c(x, y, 2)
        assert [t.numpy().tolist() for t in r] == [[2.0, 4.0], [4.0, 3.0]]
    assert len(c._call_keys) == 1
    assert c(b=y, a=x)[1].numpy().tolist() == [4.0, 3.0]  # keywords: bound as before
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Binding inputs"):
        c(tfn.constant([1, 2]), y, 2)  # a new key is checked, never trusted
    with pytest.raises(TypeError, match="Binding inputs"):
        c(x, y, 3)  # a different Python value than the trace's


def test_outputs_own_their_buffers_without_copies():
    f = tfn.function(lambda a: (a * 2.0, a + 1.0, a))
    x = tfn.constant(np.arange(1000, dtype=np.float32))
    r = [t.numpy() for t in f(x)]
    for arr in r[:2]:
        assert not arr.flags.owndata and type(arr.base).__name__ == "_Owner"
        assert arr.flags.c_contiguous and arr.flags.writeable
    assert not np.shares_memory(r[0], r[1])
    for arr in r:
        assert not np.shares_memory(arr, x.numpy())  # the returned input is a copy: never freed twice
    np.testing.assert_array_equal(r[2], x.numpy())


def test_same_buffer_returned_twice_and_empty_results():
    @tfn.function
    def f(a):
        b = a * 2.0
        return b, b, a[:0]

    for _ in range(100):
        r = f(tfn.constant([1.0, 2.0]))
    assert r[0].numpy().tolist() == r[1].numpy().tolist() == [2.0, 4.0]
    assert not np.shares_memory(r[0].numpy(), r[1].numpy())
    assert r[2].shape == (0,)


def test_many_calls_leak_no_references_or_memory():
    f = tfn.function(lambda a, b: (a * b, a - b))
    x, y = tfn.constant(np.ones(64, np.float32)), tfn.constant(np.ones(64, np.float32))
    f(x, y)
    fastcall.wait()  # the call path switches to the trampoline when it is built: measure on one path
    f(x, y)
    dt = np.dtype(np.float32)
    gc.collect()  # garbage of earlier tests holds references to the dtype: free it before counting
    before = (sys.getrefcount(x), sys.getrefcount(x._value), sys.getrefcount(f))
    dt_before = sys.getrefcount(dt)
    for _ in range(20_000):
        f(x, y)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(x._value), sys.getrefcount(f)) == before
    # The dtype is shared by the whole process (other threads' arrays, NumPy's caches): a leak per call would add
    # 20,000 or more, so a small drift is someone else's.
    assert abs(sys.getrefcount(dt) - dt_before) < 100


def test_dropped_functions_are_collected():
    f = tfn.function(lambda a: a * 2.0)
    f(tfn.constant([1.0]))
    refs = [weakref.ref(f._concretes[0]), weakref.ref(f._concretes[0]._executable)]
    del f
    gc.collect()
    assert [r() for r in refs] == [None, None]  # the plan's reference back to its executable is seen by the GC


def test_strided_and_numpy_inputs():
    f = tfn.function(lambda a: a + 1.0)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = base[:, ::2]  # not C-contiguous: passed as a contiguous copy
    assert f(view).numpy().tolist() == (view + 1).tolist()
    assert f(np.ascontiguousarray(view)).numpy().tolist() == (view + 1).tolist()
    np.testing.assert_array_equal(base, np.arange(12, dtype=np.float32).reshape(3, 4))


def test_dynamic_shapes_and_run_time_errors_on_the_fast_path():
    f = tfn.function(lambda a, b: a // b, input_signature=[tfn.TensorSpec([None], tfn.int32)] * 2)
    for n in (1, 5, 17):
        a = np.arange(n, dtype=np.int32) + 10
        assert f(tfn.constant(a), tfn.constant(np.full(n, 3, np.int32))).numpy().tolist() == (a // 3).tolist()
    with pytest.raises(tfn.errors.InvalidArgumentError, match="Integer division by zero"):
        f(tfn.constant([1, 2], tfn.int32), tfn.constant([1, 0], tfn.int32))
    assert f(tfn.constant([9], tfn.int32), tfn.constant([2], tfn.int32)).numpy().tolist() == [4]


def test_plan_checks_what_it_is_given():
    ext = fastcall.wait()
    if ext is None:
        pytest.skip("no C extension")
    f = tfn.function(lambda a: a * 2.0)
    x = tfn.constant(np.ones((2, 3), np.float32))
    f(x)
    call = f._concretes[0]._executable.call
    with pytest.raises(TypeError, match="dtype"):
        call([np.ones((2, 3), np.float64)])
    with pytest.raises(ValueError, match="rank"):
        call([np.ones(6, np.float32)])
    with pytest.raises(ValueError, match="dimension 1 is 4"):
        call([np.ones((2, 4), np.float32)])
    with pytest.raises(TypeError, match="expected 1 inputs"):
        call([x, x])
    with pytest.raises(IndexError, match="position 3"):
        call([x], (3,))
    assert call([x], (0,))[0].tolist() == [[2.0] * 3] * 2


def test_many_inputs_and_no_tensor_inputs():
    n = 70  # descriptors beyond the trampoline's stack buffer: it allocates them
    f = tfn.function(lambda *xs: sum(xs[1:], xs[0]))
    xs = [tfn.constant(np.full((2, 3), i, np.float32)) for i in range(n)]
    for _ in range(3):
        assert f(*xs).numpy().tolist() == [[n * (n - 1) / 2] * 3] * 2
    g = tfn.function(lambda k: tfn.ones([k]) * 2.0)
    assert g(3).numpy().tolist() == [2.0] * 3 and g(3).numpy().tolist() == [2.0] * 3


def test_concurrent_calls_from_threads():
    f = tfn.function(lambda a: a * 3.0 + 1.0)
    errors = []

    def work(k):
        x = tfn.constant(np.full(50, k, np.float32))
        for _ in range(300):
            if f(x).numpy().tolist() != [k * 3.0 + 1.0] * 50:
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- the artifact cache ---------------------------------------------------------------------------------------

_CHILD = """
import tfn
from tfn.runtime import fastcall


@tfn.function
def f(x):
    return tfn.tanh(x) * 3.0 + 0.25


print(f(tfn.constant([1.0, 2.0])).numpy().tolist())
print(fastcall.wait() is not None)
"""


def _child(env, code=_CHILD):
    """A new Python process running `code` from a script file (tfn.function reads its functions' source)."""
    script = os.path.join(env["TFN_CACHE_DIR"] + "-scripts", f"child{abs(hash(code))}.py")
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(script, "w") as f:
        f.write(code)
    return subprocess.Popen([sys.executable, script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _entries(folder):
    return sorted(p for p in folder.iterdir() if p.suffix == ".so")


def test_concurrent_processes_building_the_same_key(tmp_path, monkeypatch):
    env = dict(os.environ, TFN_CACHE_DIR=str(tmp_path))
    outs = [p.communicate() + (p.returncode,) for p in [_child(env) for _ in range(3)]]
    assert all(rc == 0 for _, _, rc in outs), [err for _, err, _ in outs]
    assert len({out for out, _, _ in outs}) == 1
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    entries = _entries(tmp_path)
    assert len(entries) == 2 and all(cache.lookup(so.stem).name == str(so) for so in entries)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]  # no half-written file left behind
    assert not list((tmp_path / "tmp").iterdir())  # nor a build folder
    assert _child(env).communicate() == outs[0][:2]


def _damage(so, how, content):
    sig = so.with_suffix(".sha256")
    if how == "truncate_so":  # as a crash mid-write would leave it, were writes not atomic
        so.write_bytes(content[so][:200])
    elif how == "corrupt_hash":
        sig.write_text("0" * 64)
    elif how == "missing_hash":
        sig.unlink()
    else:  # "swapped_so": a valid library, but not the one this entry's hash names
        so.write_bytes(content[[e for e in content if e != so][0]])


def test_damaged_entries_are_detected_and_rebuilt(tmp_path, monkeypatch):
    env = dict(os.environ, TFN_CACHE_DIR=str(tmp_path))
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    first = _child(env).communicate()
    entries = _entries(tmp_path)  # the function's and the call trampoline's
    assert len(entries) == 2 and first[0].split()[-1] == "True", first
    content = {so: so.read_bytes() for so in entries}
    for damages in (("truncate_so", "corrupt_hash"), ("missing_hash", "swapped_so")):
        for so, how in zip(entries, damages):
            _damage(so, how, content)
            assert cache.lookup(so.stem) is None, how
        assert _child(env).communicate() == first
        assert [cache.lookup(so.stem).name for so in entries] == [str(so) for so in entries]
        assert {so: so.read_bytes() for so in entries} == content


def test_functions_loaded_while_the_trampoline_builds_switch_to_it(tmp_path):
    code = _CHILD.replace("print(fastcall.wait() is not None)", """
ex = f._concretes[0]._executable
print(ex.plan is None, fastcall.settled())  # an empty cache: the extension is still being compiled
fastcall.wait()
print(f(tfn.constant([1.0, 2.0])).numpy().tolist(), ex.plan is not None)
""")
    out, err = _child(dict(os.environ, TFN_CACHE_DIR=str(tmp_path)), code).communicate()
    first, pending, after = out.splitlines()
    assert pending == "True False", err
    assert after == f"{first} True"


def test_without_a_compiler_the_ctypes_path_is_used(tmp_path):
    code = _CHILD.replace("print(fastcall.wait() is not None)", "print(fastcall.wait() is None)")
    # Compile the function first with the real compiler, so that only the trampoline's build meets `false`.
    first = _child(dict(os.environ, TFN_CACHE_DIR=str(tmp_path), TFN_FASTCALL="0"), code).communicate()
    out = _child(dict(os.environ, TFN_CACHE_DIR=str(tmp_path), CC="false"), code).communicate()
    assert first[0].split()[-1] == out[0].split()[-1] == "True", out
    assert out[0] == first[0]
    assert [p.name.startswith("fastcall-") for p in tmp_path.glob("*.failed")] == [True]  # not retried each run
