"""The runtime: zero-copy outputs, buffer ownership, no leaks, the artifact cache."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tfn
from tfn.runtime import cache


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_outputs_wrap_the_compiled_buffer_without_copying():
    f = tfn.function(lambda x: x * 2.0)
    out = f(tfn.constant(np.ones(1000, np.float32)))
    arr = out.numpy()
    assert not arr.flags.owndata  # a view of the buffer the compiled code allocated
    assert type(arr.base).__name__ == "_Owner"


def test_inputs_are_not_copied_or_written():
    x = np.arange(6, dtype=np.float32)
    t = tfn.constant(x)
    f = tfn.function(lambda a: a + 1.0)
    f(t)
    np.testing.assert_array_equal(t.numpy(), x)


def test_returning_an_input_and_constants():
    @tfn.function
    def f(a):
        return a, tfn.constant([1.0, 2.0]), 3, a

    x = tfn.constant([5.0, 6.0])
    r = f(x)
    assert r[0].numpy().tolist() == [5.0, 6.0]
    assert r[1].numpy().tolist() == [1.0, 2.0]
    assert r[2].numpy() == 3 and r[2].dtype == tfn.int32
    assert r[3].numpy().tolist() == [5.0, 6.0]


def test_same_result_twice_is_freed_once():
    @tfn.function
    def f(a):
        b = a * 2.0
        return b, b

    for _ in range(1000):
        r = f(tfn.constant([1.0, 2.0]))
    assert r[0].numpy().tolist() == r[1].numpy().tolist() == [2.0, 4.0]


def test_no_leak_over_100000_calls():
    f = tfn.function(lambda a, b: (a * b + 1.0, a - b))
    x, y = tfn.constant(np.ones(256, np.float32)), tfn.constant(np.ones(256, np.float32))
    for _ in range(2000):
        f(x, y)
    before = _rss_kb()
    for _ in range(100_000):
        f(x, y)
    grown = _rss_kb() - before
    # 100k calls x 2 outputs x 1 KiB would be ~200 MB if results leaked.
    assert grown < 20_000, f"RSS grew by {grown} KiB"


def _artifacts(folder):
    """The compiled functions' .so names in a cache folder (not the call trampoline, runtime/fastcall.py)."""
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".so" and not p.name.startswith("fastcall-"))


def test_cache_persists_across_processes(tmp_path):
    code = ("import tfn, time; f = tfn.function(lambda x: tfn.tanh(x) * 3.0); t=time.perf_counter(); "
            "r = f(tfn.constant([1.0, 2.0])); print(r.numpy().tolist())")
    env = dict(os.environ, TFN_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    entries = _artifacts(tmp_path)
    assert len(entries) == 1
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.stdout == first.stdout
    assert _artifacts(tmp_path) == entries


def test_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    f = tfn.function(lambda x: x * 7.0 - 1.0)
    assert f(tfn.constant([1.0])).numpy().tolist() == [6.0]
    (so,) = [tmp_path / name for name in _artifacts(tmp_path)]
    # Truncate it as a crash mid-write would (a new file: the loaded library stays mapped).
    tmp = so.with_suffix(".tmp")
    tmp.write_bytes(so.read_bytes()[:100])
    os.replace(tmp, so)
    assert cache.lookup(so.stem) is None
    g = tfn.function(lambda x: x * 7.0 - 1.0)
    assert g(tfn.constant([2.0])).numpy().tolist() == [13.0]
    assert cache.lookup(so.stem) is not None


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", "off")
    assert cache.cache_dir() is None
    f = tfn.function(lambda x: x * 5.0)
    assert f(tfn.constant([1.0])).numpy().tolist() == [5.0]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8, np.float16])
def test_dtypes_round_trip(dtype):
    x = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    r = tfn.function(lambda a: tfn.identity(a))(tfn.constant(x))
    assert r.dtype == tfn.as_dtype(dtype)
    np.testing.assert_array_equal(r.numpy(), x)
