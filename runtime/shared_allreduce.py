"""The all-reduce through shared memory for a job whose replicas share one machine (_shared_allreduce.c).

`enable(comm)` (collective; MultiWorkerMirroredStrategy calls it once) finds out whether every replica of the job
runs on this machine (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives a communicator as large as the job's) and,
if so, allocates an MPI-3 shared window (MPI_Win_allocate_shared, one segment per replica, each mapped by all) and
hands its segments to the C side. From then on, code loaded into the process (runtime/executable.py) gets two
hooks: `tfn_shared_malloc_hook` (the allocation of a buffer compiled code all-reduces in place: a gradient) and
`tfn_shm_allreduce_hook` (the in-place all-reduce helpers try it before MPI_Allreduce). Every replica decides the
same way (an MPI_Allreduce of each one's answer), and loads its code at the same point of the same program, so the
hooks are set in all replicas' copies of a function or in none.

TFN_SHARED_ALLREDUCE=0 turns it off (MPI_Allreduce for every collective); TFN_SHARED_ARENA_BYTES sets each
replica's arena (default 1 GiB, at most an eighth of the free space of /dev/shm per replica: the window's pages are
taken from it as they are first touched).
"""
import ctypes
import os

from tfn.runtime import fastcall, toolchain

DEFAULT_ARENA_BYTES = 1 << 30
MIN_ARENA_BYTES = 16 << 20
_state = {}


def _arena_bytes(local_replicas):
    text = os.environ.get("TFN_SHARED_ARENA_BYTES", "").strip()
    wanted = DEFAULT_ARENA_BYTES
    if text:
        try:
            wanted = max(int(text), 0)
        except ValueError:
            from tfn.dialects.errors import InvalidArgumentError  # start-up cost: only on this bad setting

            raise InvalidArgumentError(f"TFN_SHARED_ARENA_BYTES must be a byte count, not {text!r}") from None
    try:
        st = os.statvfs("/dev/shm")
        wanted = min(wanted, st.f_bavail * st.f_frsize // (8 * local_replicas))
    except OSError:
        pass
    return wanted


def _library():
    lib = fastcall.c_library()
    if lib is None:
        return None
    lib.tfn_shared_setup.restype = ctypes.c_int
    lib.tfn_shared_setup.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                     ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_int64]
    return lib


def enable(comm):
    """Set up the shared-memory all-reduce for the job of `comm` (mpi4py's COMM_WORLD); collective. Returns whether
    it is on (the same answer on every replica)."""
    if "on" in _state:
        return _state["on"]
    from mpi4py import MPI  # optional dependency: the `distribute` extra (the caller has MPI running)

    size, rank = comm.Get_size(), comm.Get_rank()
    if size < 2:
        _state["on"] = False
        return False
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
    lib = _library() if os.environ.get("TFN_SHARED_ALLREDUCE", "1") != "0" and fastcall.wait() is not None else None
    arena = _arena_bytes(node.Get_size())
    ok = comm.allreduce(bool(lib is not None and node.Get_size() == size and arena >= MIN_ARENA_BYTES), op=MPI.LAND)
    arena = comm.allreduce(arena, op=MPI.MIN)
    if ok:
        win = MPI.Win.Allocate_shared(arena, 1, comm=node)
        segments = (ctypes.c_void_p * size)(*[win.Shared_query(r)[0].address for r in range(size)])
        pids = (ctypes.c_int64 * size)(*comm.allgather(os.getpid()))
        mpi_abort = ctypes.cast(ctypes.CDLL(toolchain.mpi_library()).MPI_Abort, ctypes.c_void_p).value
        ok = comm.allreduce(lib.tfn_shared_setup(rank, size, segments, arena, pids, mpi_abort,
                                                 MPI._handleof(comm)) == 0, op=MPI.LAND)
        _state["window"] = win  # kept for the life of the process (MPI_Finalize frees it)
    node.Free()
    _state["on"] = bool(ok)
    if ok:
        _state["hooks"] = {name: ctypes.cast(getattr(lib, fn), ctypes.c_void_p).value
                           for name, fn in (("tfn_shared_malloc_hook", "tfn_shared_malloc"),
                                            ("tfn_shm_allreduce_hook", "tfn_shared_allreduce"))}
    return _state["on"]


def hooks():
    """{module global: address} for code loaded from now on, or {} while the shared-memory all-reduce is off."""
    return _state.get("hooks", {})


def stats():
    """(all-reduces that tried shared memory, those it did) in this process so far; (0, 0) while it is off."""
    return tuple(_stats()[:2])


def seconds():
    """Seconds the all-reduces done through shared memory spent so far: (waiting for the other replicas to arrive,
    summing this replica's chunk, in the closing barrier (waiting for the others' chunks))."""
    return tuple(v / 1e9 for v in _stats()[2:])


def _stats():
    lib = _library() if _state.get("on") else None
    if lib is None:
        return [0] * 5
    out = (ctypes.c_int64 * 5)()
    lib.tfn_shared_stats(out)
    return list(out)
