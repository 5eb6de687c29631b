"""runtime/_shared_allreduce.c without MPI: its arena (what tfn_shared_malloc gives, what tfn_free takes back) and
the barrier's check that the other replicas' processes still exist. Each case runs in a child process, which sets
up segments of its own memory as a 2-replica job (the 2-process jobs are in test_distribute.py)."""
import subprocess
import sys
import textwrap

import pytest

from tfn.runtime import fastcall

SETUP = """
import ctypes, os, sys
from tfn.runtime import fastcall, shared_allreduce
lib = shared_allreduce._library()
lib.tfn_shared_malloc.restype, lib.tfn_shared_malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
lib.tfn_shared_owns.restype, lib.tfn_shared_owns.argtypes = ctypes.c_int, [ctypes.c_void_p]
lib.tfn_free.argtypes = [ctypes.c_void_p]
lib.tfn_shared_allreduce.restype = ctypes.c_int
lib.tfn_shared_allreduce.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32]
SEGMENT = 4096 + 16 * 4096  # the control block and an arena of 16 pages
memory = [ctypes.create_string_buffer(SEGMENT + 4096) for _ in range(2)]
segments = (ctypes.c_void_p * 2)(*[(ctypes.addressof(m) + 4095) // 4096 * 4096 for m in memory])
def setup(peer_pid):
    pids = (ctypes.c_int64 * 2)(os.getpid(), peer_pid)
    assert lib.tfn_shared_setup(0, 2, segments, SEGMENT, pids, None, 0) == 0
"""


def _child(code):
    if fastcall.wait() is None:
        pytest.skip("the C extension cannot be built here (no C compiler)")
    return subprocess.run([sys.executable, "-c", SETUP + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


def test_the_arena_gives_page_blocks_takes_them_back_and_falls_back_to_malloc_when_full():
    proc = _child("""
        setup(os.getpid())
        base = segments[0]
        a = lib.tfn_shared_malloc(100)
        b = lib.tfn_shared_malloc(3 * 4096)
        assert (a - base, b - base) == (4096, 2 * 4096), (a - base, b - base)
        assert lib.tfn_shared_owns(a) and lib.tfn_shared_owns(b) and not lib.tfn_shared_owns(base)
        big = lib.tfn_shared_malloc(20 * 4096)  # more than the arena holds: a malloc block
        assert big and not lib.tfn_shared_owns(big)
        lib.tfn_free(big)
        lib.tfn_free(a)
        lib.tfn_free(b)  # merged with a's range and the rest: the whole arena is free again
        whole = lib.tfn_shared_malloc(16 * 4096)
        assert whole == a, (whole, a)
        lib.tfn_free(whole)
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_each_replica_sums_its_chunk_into_every_replicas_buffer_or_leaves_it_all_to_mpi():
    # replica 1's side is played by hand: its control block says it has arrived and where its buffer is
    proc = _child("""
        import numpy as np
        setup(os.getpid())
        mine = lib.tfn_shared_malloc(64 * 4)
        theirs = segments[1] + (mine - segments[0])
        a = np.frombuffer((ctypes.c_float * 64).from_address(mine), np.float32)
        b = np.frombuffer((ctypes.c_float * 64).from_address(theirs), np.float32)
        a[:], b[:] = np.arange(64), 1000 + np.arange(64)
        peer = np.frombuffer((ctypes.c_int64 * 32).from_address(segments[1]), np.int64)
        peer[0] = 2  # its barriers passed: both of this call's
        peer[16:19] = [mine - segments[0], 64, 1]  # record of call 1 (slot 1): offset, elements, kind f32
        assert lib.tfn_shared_allreduce(mine, 64, 1) == 0
        total = np.arange(64) * 2 + 1000.0
        assert (a[:32] == total[:32]).all() and (b[:32] == total[:32]).all(), (a, b)  # replica 0's chunk
        assert (a[32:] == np.arange(32, 64)).all() and (b[32:] == 1000 + np.arange(32, 64)).all()  # replica 1's
        peer[0] = 3
        peer[8:11] = [-1, 64, 1]  # call 2 (slot 0): replica 1's buffer is outside its arena
        assert lib.tfn_shared_allreduce(mine, 64, 1) == 1
        counts = (ctypes.c_int64 * 5)()  # tried, done, and 3 times
        lib.tfn_shared_stats(counts)
        assert list(counts[:2]) == [2, 1], list(counts)
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_a_replica_whose_process_is_gone_stops_the_waiting_one_with_a_message():
    proc = _child("""
        gone = __import__("subprocess").Popen([sys.executable, "-c", "pass"])
        gone.wait()  # reaped: kill(pid, 0) fails with ESRCH
        setup(gone.pid)
        block = lib.tfn_shared_malloc(4096)
        lib.tfn_shared_allreduce(block, 16, 1)
        print("not expected")
    """)
    assert proc.returncode != 0
    assert "not expected" not in proc.stdout
    assert "replica 0 of 2: replica 1" in proc.stderr and "has exited during an all-reduce" in proc.stderr, \
        proc.stderr
