"""The buffer cache (runtime/_buffer_cache.c, runtime/buffer_cache.py, passes/tfn_cache_large_buffers.py): a
function's large temporaries and results are reused by its next call (no page faults), from many threads at once,
within the byte limit, without growing the process; small blocks are plain malloc blocks; fork is safe. Each program
runs in its own process (fresh cache state; a crash fails its test, not the suite)."""
import os
import subprocess
import sys
import textwrap

import pytest

_PRELUDE = """
import ctypes, os, threading
import numpy as np
import tfn
from tfn.runtime import buffer_cache, fastcall

if fastcall.wait() is None and os.environ.get("TFN_FASTCALL") != "0":
    print("no extension")
    raise SystemExit(0)

libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.restype, libc.free.argtypes = None, [ctypes.c_void_p]

def minor_faults():
    return int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[7])

def rss_bytes():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

@tfn.function
def chain(x):
    y = tfn.exp(x * 0.5)    # temporaries the size of x, freed inside the call
    z = tfn.tanh(y - 1.0)
    return z * 2.0 + y      # the result: a buffer the returned array owns

def expected(x):
    y = np.exp(x * 0.5)
    return np.tanh(y - 1.0) * 2.0 + y
"""


def _run(code, **env):
    """Run `code` (after the prelude) in a new Python process; its stdout, or the test fails with its stderr."""
    proc = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-3000:]}"
    if proc.stdout == "no extension\n":
        pytest.skip("no C compiler to build the extension holding the buffer cache")
    return proc.stdout


def test_repeated_calls_reuse_their_large_buffers_without_page_faults():
    out = _run("""
        x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)  # 4 MiB
        for _ in range(3):
            np.testing.assert_allclose(chain(x).numpy(), expected(x), rtol=1e-5, atol=1e-6)
        tfn.config.wait_for_optimized_code()
        for _ in range(3):
            chain(x)
        before, faults = buffer_cache.stats(), minor_faults()
        for _ in range(20):
            y = chain(x).numpy()
            del y
        after = buffer_cache.stats()
        pages = x.nbytes // os.sysconf("SC_PAGE_SIZE")
        assert (minor_faults() - faults) / 20 < pages / 8, (minor_faults() - faults) / 20
        assert after["hits"] - before["hits"] >= 20, (before, after)
        assert after["misses"] == before["misses"], (before, after)
        print("ok")
    """)
    assert out == "ok\n"


def test_the_cache_off_gives_the_same_results_and_keeps_nothing():
    out = _run("""
        x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
        for _ in range(5):
            np.testing.assert_allclose(chain(x).numpy(), expected(x), rtol=1e-5, atol=1e-6)
        s = buffer_cache.stats()
        assert s["limit"] == 0 and s["bytes"] == 0 and s["blocks"] == 0 and s["hits"] == 0, s
        print("ok")
    """, TFN_BUFFER_CACHE_BYTES="0")
    assert out == "ok\n"


def test_without_the_extension_code_uses_malloc_and_free():
    out = _run("""
        x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
        for _ in range(5):
            np.testing.assert_allclose(chain(x).numpy(), expected(x), rtol=1e-5, atol=1e-6)
        print(buffer_cache.stats())
    """, TFN_FASTCALL="0")
    assert out == "None\n"


def test_the_byte_limit_bounds_what_is_kept():
    out = _run("""
        lib = buffer_cache.library()
        mib = 1 << 20
        blocks = [lib.tfn_malloc(4 * mib) for _ in range(5)]
        buffer_cache.limit(10 * mib)
        for b in blocks:
            lib.tfn_free(b)
        s = buffer_cache.stats()
        assert s["blocks"] == 2 and s["bytes"] <= 10 * mib and s["released"] == 3, s
        assert buffer_cache.limit(3 * mib) == 10 * mib  # lowering the limit releases what is past it
        s = buffer_cache.stats()
        assert s["blocks"] == 0 and s["bytes"] == 0 and s["released"] == 5, s
        lib.tfn_free(lib.tfn_malloc(4 * mib))  # a block over the limit is never kept
        assert buffer_cache.stats()["blocks"] == 0
        buffer_cache.limit(64 * mib)
        for n in range(70):  # at most 64 blocks, the oldest released first
            lib.tfn_free(lib.tfn_malloc(256 << 10) if n % 2 else libc.malloc(300 << 10))
        s = buffer_cache.stats()
        assert s["blocks"] <= 64 and s["bytes"] <= 64 * mib, s
        buffer_cache.release()
        assert buffer_cache.stats()["blocks"] == 0
        try:
            buffer_cache.limit(-1)
            raise AssertionError("a negative limit was taken")
        except tfn.errors.InvalidArgumentError:
            pass
        print("ok")
    """)
    assert out == "ok\n"


def test_small_blocks_are_not_kept_and_any_malloc_block_may_be_freed_either_way():
    out = _run("""
        lib = buffer_cache.library()
        before = buffer_cache.stats()
        lib.tfn_free(lib.tfn_malloc(1000))
        lib.tfn_free(libc.malloc(100 << 10))
        assert buffer_cache.stats() == before, (before, buffer_cache.stats())
        big = libc.malloc(1 << 20)  # malloc's block, freed into the cache and given out again
        lib.tfn_free(big)
        assert lib.tfn_malloc(1 << 20) == big
        libc.free(big)  # a block the cache gave back to plain free
        wide = lib.tfn_malloc(2 << 20)
        lib.tfn_free(wide)
        assert lib.tfn_malloc(1 << 20) != wide  # a block far larger than asked for is not given
        print("ok")
    """)
    assert out == "ok\n"


def test_threads_share_the_cache():
    out = _run("""
        x = np.linspace(-1, 1, 1 << 18, dtype=np.float32)  # 1 MiB per buffer
        want = expected(x)
        errors = []

        def work(k):
            try:
                for i in range(40):
                    xi = x + np.float32(k)
                    np.testing.assert_allclose(chain(xi).numpy(), expected(xi), rtol=1e-5, atol=1e-6)
            except BaseException as e:
                errors.append(e)

        chain(x)
        threads = [threading.Thread(target=work, args=(k % 3,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[0]
        s = buffer_cache.stats()
        assert s["hits"] > 0 and s["bytes"] <= s["limit"] and s["blocks"] <= 64, s
        np.testing.assert_allclose(chain(x).numpy(), want, rtol=1e-5, atol=1e-6)
        print("ok")
    """)
    assert out == "ok\n"


def test_two_hundred_calls_keep_the_process_size_flat():
    out = _run("""
        sizes = [(1 << 20) + 4096 * k for k in range(5)]  # five sizes in turn: blocks of several sizes kept
        xs = [np.linspace(-1, 1, n, dtype=np.float32) for n in sizes]
        for x in xs:
            chain(x)
        tfn.config.wait_for_optimized_code()
        for i in range(20):
            chain(xs[i % 5]).numpy()
        rss = rss_bytes()
        for i in range(200):
            y = chain(xs[i % 5]).numpy()
            del y
        grown = rss_bytes() - rss
        s = buffer_cache.stats()
        assert grown < 4 << 20, (grown, s)
        assert s["bytes"] <= s["limit"], s
        print("ok")
    """)
    assert out == "ok\n"


def test_a_forked_child_uses_its_own_copy_of_the_cache_while_threads_allocate():
    out = _run("""
        lib = buffer_cache.library()
        stop = threading.Event()

        def churn():  # ctypes calls release the GIL: the cache's lock is taken while the main thread forks
            while not stop.is_set():
                lib.tfn_free(lib.tfn_malloc(1 << 20))

        x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
        chain(x)
        threads = [threading.Thread(target=churn) for _ in range(2)]
        for t in threads:
            t.start()
        for _ in range(20):
            pid = os.fork()
            if pid == 0:  # the child: the cache works (its lock is free), then it leaves without cleanup
                for _ in range(5):
                    lib.tfn_free(lib.tfn_malloc(1 << 20))
                os._exit(0 if buffer_cache.stats()["blocks"] <= 64 else 1)
            assert os.waitpid(pid, 0)[1] == 0
        stop.set()
        for t in threads:
            t.join()
        np.testing.assert_allclose(chain(x).numpy(), expected(x), rtol=1e-5, atol=1e-6)
        assert buffer_cache.stats()["blocks"] <= 64
        print("ok")
    """)
    assert out == "ok\n"


def test_a_bad_limit_setting_raises():
    proc = subprocess.run([sys.executable, "-c", _PRELUDE + "print(buffer_cache.stats())"], capture_output=True,
                          text=True, env={**os.environ, "TFN_BUFFER_CACHE_BYTES": "lots"}, timeout=300)
    if proc.stdout == "no extension\n":
        pytest.skip("no C compiler to build the extension holding the buffer cache")
    assert proc.returncode != 0 and "TFN_BUFFER_CACHE_BYTES must be a byte count, not 'lots'" in proc.stderr


def test_aot_libraries_keep_malloc_and_free(tmp_path):
    """An AOT library's allocation hooks are not exported (its version script): nothing can set them, its code calls
    malloc and free, and its large buffers give the right results from a plain C call."""
    import ctypes
    import shutil

    import numpy as np

    import tfn
    from tfn.runtime import toolchain

    if shutil.which(toolchain.linker()) is None or shutil.which("nm") is None:
        pytest.skip("no C compiler or nm on this machine")

    @tfn.function(input_signature=[tfn.TensorSpec([1 << 18], tfn.float32)])
    def big(x):
        return tfn.exp(x * 0.5) * 2.0 + x  # 1 MiB buffers

    lib = tfn.experimental.aot_compile(big, str(tmp_path))
    exported = subprocess.run(["nm", "-D", "--defined-only", lib.library], capture_output=True, text=True).stdout
    assert "tfn_malloc_hook" not in exported and "tfn_free_hook" not in exported, exported
    x = np.linspace(-1, 1, 1 << 18, dtype=np.float32)
    out = np.empty_like(x)
    entry = ctypes.CDLL(lib.library).big
    entry.restype = ctypes.c_int
    for _ in range(3):
        assert entry(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p)) == 0
        np.testing.assert_allclose(out, np.exp(x * 0.5) * 2.0 + x, rtol=1e-5, atol=1e-6)
