"""The artifact cache: shared objects in a user-private directory, content-addressed and written atomically."""
import hashlib
import os
import tempfile

from tfn.runtime import toolchain


def cache_dir():
    """TFN_CACHE_DIR, or <user cache dir>/tfn; None when TFN_CACHE_DIR=off."""
    env = os.environ.get("TFN_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tfn")


def key(ir_text, pipeline, options=""):
    """The hash naming an artifact: the IR, the pipeline, options, and tfn/MLIR/LLVM versions."""
    h = hashlib.sha256()
    for part in (ir_text, pipeline, options, toolchain.versions()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _private_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def lookup(k):
    """The path of a valid cached artifact for key k, or None (a corrupt entry is removed)."""
    d = cache_dir()
    if d is None:
        return None
    so, sig = os.path.join(d, k + ".so"), os.path.join(d, k + ".sha256")
    try:
        with open(sig) as f:
            expected = f.read().strip()
        if _digest(so) == expected:
            return so
    except OSError:
        return None
    for p in (so, sig):
        try:
            os.unlink(p)
        except OSError:
            pass
    return None


def store(k, built_path):
    """Move a built artifact into the cache atomically; returns its final path (or built_path if off)."""
    d = cache_dir()
    if d is None:
        return built_path
    _private_dir(d)
    so, sig = os.path.join(d, k + ".so"), os.path.join(d, k + ".sha256")
    digest = _digest(built_path)
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(digest)
    os.replace(built_path, so)
    os.replace(tmp, sig)  # the signature lands last: a reader never trusts a half-written .so
    return so


def scratch_dir():
    """A private directory for building artifacts (inside the cache so that renames stay atomic)."""
    d = cache_dir()
    base = _private_dir(os.path.join(d, "tmp")) if d else None
    return tempfile.mkdtemp(prefix="build-", dir=base)
