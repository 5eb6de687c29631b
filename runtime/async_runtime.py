"""The async runtime that compiled parallel kernels call (passes/tfn_async_parallel.py): tfn's own (_async_runtime.c).

Code lowered by `convert-async-to-llvm` calls the C functions of MLIR's async runtime (`mlirAsyncRuntimeExecute`,
`...AwaitAllInGroup`, ...). tfn defines them itself in _async_runtime.c: a pool of the target's cores less one
threads (the caller runs blocks too) that spin for a while for new tasks before they sleep (see the C file), built
once with `cc` into the artifact cache and loaded into the process's global symbol scope before any compiled library
that calls it: compiled libraries are linked against no runtime library and bind these symbols at load time.
Loading it brings no other library: MLIR's (libmlir_async_runtime.so) needs libLLVM, which in the global scope
breaks a TensorFlow imported afterwards (test_compile_driver.py), and whose pool threads only ever sleep between
calls.

TFN_ASYNC_RUNTIME=mlir loads MLIR's runtime instead (to compare the two); it is also the fallback where the C file
cannot be built (no C compiler). TFN_ASYNC_SPIN_US sets how long an idle pool thread or a blocking wait spins
before sleeping (default 100; 0: sleep at once). Both are read once per process, when the runtime is first loaded.
"""
import ctypes
import os
import threading

from tfn.passes import target
from tfn.runtime import cache, toolchain
from tfn.runtime.digest import sha256

ENV = "TFN_ASYNC_RUNTIME"
SPIN_ENV = "TFN_ASYNC_SPIN_US"
DEFAULT_SPIN_US = 100
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_async_runtime.c")
_lock = threading.Lock()
_state = {}  # "lib": the loaded ctypes library, "kind": "tfn" or "mlir"


def loaded():
    """Which runtime this process loaded: "tfn", "mlir", or None (none yet)."""
    return _state.get("kind")


def load():
    """Load the async runtime into the process's global symbol scope, once (see the module docstring); returns it
    as a ctypes library."""
    if "lib" in _state:
        return _state["lib"]
    with _lock:
        if "lib" not in _state:
            lib = None
            if os.environ.get(ENV, "tfn") != "mlir":
                lib = _load_own()
            if lib is None:
                # Not passed to ExecutionEngine as a shared lib: the engine's destructor would destroy the runtime's
                # default instance (`__mlir_execution_engine_destroy`), which the .so we keep running still uses.
                _state["kind"], lib = "mlir", ctypes.CDLL(toolchain.ASYNC_RUNTIME, mode=os.RTLD_GLOBAL)
            else:
                _state["kind"] = "tfn"
            _state["lib"] = lib
    return _state["lib"]


def spin_us():
    """TFN_ASYNC_SPIN_US, or the default when unset or not a non-negative integer."""
    text = os.environ.get(SPIN_ENV, "")
    return int(text) if text.isdigit() else DEFAULT_SPIN_US


def _load_own():
    """tfn's runtime from the artifact cache (built first if missing), configured; None if it cannot be built."""
    try:
        with open(SOURCE, "rb") as f:
            source = f.read()
    except OSError:
        return None
    h = sha256(source)
    h.update(b"\0" + toolchain.linker().encode())
    k = "asyncrt-" + h.hexdigest()
    artifact = cache.lookup(k)
    if artifact is not None:
        with artifact:
            lib = _open(artifact.path)
    else:
        lib = _build_and_open(k)
    if lib is not None:
        lib.tfn_async_configure.argtypes = [ctypes.c_int, ctypes.c_int64]
        lib.tfn_async_configure.restype = None
        lib.tfn_async_started_threads.restype = ctypes.c_int
        lib.tfn_async_live_objects.restype = ctypes.c_int64
        lib.tfn_async_configure(max(1, _cores() - 1), spin_us())
    return lib


def _cores():
    """The cores of the target (the default of the passes' `workers` option): the pool has one thread fewer."""
    try:
        return target.current().cores
    except ValueError:  # a bad TFN_TARGET_FEATURES: the same cores whatever the instruction set
        return target.target_for("native").cores


def _open(path):
    try:
        return ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
    except OSError:
        return None


def _build_and_open(k):
    """Compile _async_runtime.c, store it under key k and load it; None when the compiler fails."""
    import shutil  # start-up cost: built once per artifact cache
    import subprocess  # start-up cost: likewise

    work = cache.scratch_dir()
    so = os.path.join(work, "async_runtime.so")
    cmd = [toolchain.linker(), "-shared", "-fPIC", "-O2", "-pthread", "-fvisibility=hidden", "-o", so, SOURCE]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
        if proc.returncode != 0:
            return None
        with cache.store(k, so) as artifact:
            return _open(artifact.path)
    except OSError:  # no compiler, or the cache changed under us
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a stored .so was moved out; a loaded one stays mapped
