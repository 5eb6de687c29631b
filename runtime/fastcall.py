"""The C call trampoline (_fastcall.c): built once with `cc`, kept in the artifact cache, loaded lazily.

The same extension holds the buffer cache (_buffer_cache.c, runtime/buffer_cache.py) and the shared-memory
all-reduce (_shared_allreduce.c, runtime/shared_allreduce.py), whose C functions
`c_library()` gives.

`module()` returns the loaded extension, or None while it is not available: being compiled in the
background (the first use in a cache, ~0.3 s), impossible (no compiler or headers: retried after a day) or
refused (TFN_FASTCALL=0). Callers then use the ctypes path, which gives the same results more slowly, and
switch to the extension once it is there (runtime/executable.py).
"""
import atexit
import ctypes
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import threading
import time

import numpy as np

from tfn.runtime import cache, toolchain
from tfn.runtime.digest import sha256

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = tuple(os.path.join(_HERE, name) for name in ("_fastcall.c", "_buffer_cache.c", "_shared_allreduce.c"))
_lock = threading.Lock()
# "module": the extension, or None, once settled; "build": (key, compiler process, .so path, scratch dir, pid);
# "c": the extension as a ctypes library (when "module" is not None).
_state = {}
_RETRY_AFTER_S = 24 * 3600  # a failed build is retried after this long (headers may have been installed)


def enabled():
    """False when TFN_FASTCALL=0 asks for the ctypes calling path."""
    return os.environ.get("TFN_FASTCALL", "1") != "0"


def settled():
    """Whether module() has its final answer for this process (no build in flight)."""
    return "module" in _state


def module():
    """The loaded extension module, or None (then the ctypes path is used, see the module docstring)."""
    if "module" in _state:
        return _state["module"]
    with _lock:
        if "module" not in _state:
            _advance()
    return _state.get("module")


def c_library():
    """The loaded extension as a ctypes library (its C functions: tfn_malloc, tfn_free, ...), or None (module() is
    None)."""
    return _state.get("c") if module() is not None else None


def wait():
    """module(), after waiting for a build in flight to finish."""
    with _lock:
        if "module" not in _state:
            _advance()
        build = _state.get("build")
        if build is not None and build[4] == os.getpid():
            build[1].wait()
        if build is not None:
            _advance()
    return _state.get("module")


def _advance():
    """One step (under _lock): find the extension in the cache, start building it, or collect the build."""
    build = _state.get("build")
    if build is not None:
        if build[4] != os.getpid():  # a forked child: the build is its parent's to collect
            del _state["build"]
            _state["module"] = None
        elif build[1].poll() is not None:
            del _state["build"]
            _state["module"] = _finish(*build)
        return
    if not enabled():
        _state["module"] = None
        return
    try:
        source = b""
        for path in _SOURCES:
            with open(path, "rb") as f:
                source += f.read() + b"\0"
        k = _key(source)
    except OSError:
        _state["module"] = None
        return
    artifact = cache.lookup(k)
    if artifact is not None:
        with artifact:
            _state["module"] = _import(artifact.path)
    elif _failed_recently(k):
        _state["module"] = None
    else:
        build = _start_build(k)
        if build is None:
            _state["module"] = None
        else:
            _state["build"] = build


def _key(source):
    """The cache key of the built extension: its source, the Python ABI, NumPy's version and the compiler."""
    h = sha256(source)
    abi = importlib.machinery.EXTENSION_SUFFIXES[0]  # names the ABI, like sysconfig's SOABI (1 ms to load)
    for part in (sys.version, abi, np.__version__, toolchain.linker()):
        h.update(b"\0" + part.encode())
    return "fastcall-" + h.hexdigest()


def _start_build(k):
    """Start compiling the extension in a scratch dir: (k, process, so path, scratch), or None."""
    import subprocess  # start-up cost: built once per artifact cache, not loaded at `import tfn`
    import sysconfig  # start-up cost: likewise

    work = cache.scratch_dir()
    so = os.path.join(work, "fastcall.so")
    cmd = [toolchain.linker(), "-shared", "-fPIC", "-O2", "-o", so, *_SOURCES,
           f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}"]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:  # no compiler on PATH
        shutil.rmtree(work, ignore_errors=True)
        _note_failure(k)
        return None
    return k, proc, so, work, os.getpid()


def _finish(k, proc, so, work, _pid):
    """Store and import a finished build; None (and a failure note) when it failed."""
    try:
        if proc.returncode != 0:
            _note_failure(k)
            return None
        with cache.store(k, so) as artifact:
            return _import(artifact.path)
    except OSError:  # the cache changed under us: use ctypes, try again next process
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a stored .so was moved out; a loaded one stays mapped


@atexit.register
def _finish_at_exit():
    """Let a build in flight complete and land in the cache, so the next process finds it."""
    build = _state.get("build")
    if build is not None and build[4] == os.getpid():
        if cache.cache_dir() is None:
            build[1].kill()
        build[1].wait()
        _state.pop("build", None)
        _state["module"] = _finish(*build) if cache.cache_dir() is not None else None
        shutil.rmtree(build[3], ignore_errors=True)


def _import(path):
    try:
        loader = importlib.machinery.ExtensionFileLoader("_tfn_fastcall", path)
        spec = importlib.util.spec_from_file_location("_tfn_fastcall", path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    except ImportError:
        return None
    try:  # the same loaded file, for ctypes
        _state["c"] = ctypes.CDLL(path)
    except OSError:  # compiled code then keeps malloc and free
        _state["c"] = None
    return mod


def _failure_marker(k):
    d = cache.cache_dir()
    return os.path.join(d, k + ".failed") if d else None


def _failed_recently(k):
    """Whether a process failed to build this extension in the last day (a compile that fails costs ~0.2 s)."""
    marker = _failure_marker(k)
    try:
        return marker is not None and time.time() - os.path.getmtime(marker) < _RETRY_AFTER_S
    except OSError:
        return False


def _note_failure(k):
    marker = _failure_marker(k)
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        with open(marker, "w"):
            pass
    except (OSError, TypeError):  # no cache, or an unwritable one: try again next process
        pass
