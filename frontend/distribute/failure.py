"""What a job does when one replica fails: every process stops, with the error, in bounded time.

MPI has no way to tell the other replicas that one of them raised: they would wait in their next collective
forever. A strategy installs `abort_on_exception` as sys.excepthook: an uncaught exception prints its traceback,
then calls MPI_Abort, and the launcher (mpiexec) ends every process of the job. A process that dies (a signal,
os._exit) is noticed by the launcher itself, which ends the others. A process that hangs without dying is what
the optional watchdog is for: a collective that does not complete within `timeout` seconds aborts the job.
"""
import contextlib
import sys
import threading
import time
import traceback

_installed = []


def install(comm):
    """Make an uncaught exception on any replica abort the whole job (once per process)."""
    if _installed:
        return
    previous = sys.excepthook

    def abort_on_exception(kind, value, tb):
        previous(kind, value, tb)
        if comm.Get_size() > 1:
            sys.stderr.write(f"tfn.distribute: replica {comm.Get_rank()} of {comm.Get_size()} raised "
                             f"{kind.__name__}; aborting the job (MPI_Abort) so that the other replicas stop\n")
            _abort(comm, 1)

    sys.excepthook = abort_on_exception
    _installed.append(abort_on_exception)


# MPICH's launcher forwards each process's output asynchronously and drops what it has not forwarded yet when the
# job is aborted (seen on a loaded machine: the traceback cut off in its last line); half a second lets it catch up.
_FORWARD_GRACE = 0.5


def _abort(comm, code):
    sys.stderr.flush()
    sys.stdout.flush()
    time.sleep(_FORWARD_GRACE)
    comm.Abort(code)


class Watchdog:
    """Abort the job when a step announced with `start()` does not `stop()` within `timeout` seconds."""

    def __init__(self, comm, timeout):
        self.comm, self.timeout = comm, float(timeout)
        self._deadline = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="tfn-distribute-watchdog")
        self._thread.start()

    def start(self, what):
        with self._lock:
            self._deadline, self._what = time.monotonic() + self.timeout, what

    def stop(self):
        with self._lock:
            self._deadline = None

    @contextlib.contextmanager
    def watching(self, what):
        self.start(what)
        try:
            yield
        finally:
            self.stop()

    def _watch(self):
        while True:
            time.sleep(min(1.0, self.timeout / 4))
            with self._lock:
                late = self._deadline is not None and time.monotonic() > self._deadline
                what = getattr(self, "_what", "")
            if late:
                frame = sys._current_frames().get(threading.main_thread().ident)
                where = "".join(traceback.format_stack(frame)) if frame is not None else ""
                sys.stderr.write(f"{where}tfn.distribute: replica {self.comm.Get_rank()} waited more than "
                                 f"{self.timeout:g} s in {what}: another replica has stopped or hangs; aborting the "
                                 f"job\n")
                _abort(self.comm, 2)
