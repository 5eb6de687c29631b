"""The artifact cache: shared objects in a user-private directory, content-addressed and written atomically."""
import hashlib
import os
import tempfile

from tfn.runtime import toolchain
from tfn.runtime.cachedir import cache_dir, private_dir


def key(ir_text, pipeline, options=""):
    """The hash naming an artifact: the IR, the pipeline, options, and tfn/MLIR/LLVM versions."""
    h = hashlib.sha256()
    for part in (ir_text, pipeline, options, toolchain.versions()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def lookup(k):
    """The path of a cached artifact for key k whose content matches its recorded hash, or None.

    A damaged entry (truncated, corrupt, missing its hash) is a miss: the caller rebuilds and `store` replaces
    it atomically. It is not deleted here, where it could be another process's entry landing meanwhile."""
    d = cache_dir()
    if d is None:
        return None
    so, sig = os.path.join(d, k + ".so"), os.path.join(d, k + ".sha256")
    try:
        with open(sig) as f:
            expected = f.read().strip()
        return so if _digest(so) == expected else None
    except OSError:
        return None


def store(k, built_path):
    """Move a built artifact into the cache atomically; returns its final path (or built_path if off)."""
    d = cache_dir()
    if d is None:
        return built_path
    so, sig = os.path.join(d, k + ".so"), os.path.join(d, k + ".sha256")
    digest = _digest(built_path)
    try:
        private_dir(d)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
    except OSError:  # an unwritable cache: use the artifact uncached
        return built_path
    with os.fdopen(fd, "w") as f:
        f.write(digest)
    # Each file lands by rename, the signature last: a reader never trusts a half-written .so. Writers racing
    # on one key build identical bytes, so any interleaving of their renames leaves a matching pair.
    os.replace(built_path, so)
    os.replace(tmp, sig)
    return so


def scratch_dir():
    """A private directory for building artifacts (inside the cache so that renames stay atomic)."""
    d = cache_dir()
    try:
        base = private_dir(os.path.join(d, "tmp")) if d else None
    except OSError:  # an unwritable cache: build in the system's temporary directory, store() keeps it there
        base = None
    return tempfile.mkdtemp(prefix="build-", dir=base)
