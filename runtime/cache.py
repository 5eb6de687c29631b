"""The artifact cache: shared objects in a user-private directory, content-addressed and written atomically.

An entry `<key>.so` with `<key>.sha256` is opened once (runtime/cachedir.open_trusted), hashed from that
descriptor and loaded from it (`/proc/self/fd/N`), so the bytes checked are the bytes loaded. The key names the
IR, pipeline, options, toolchain and the host (its triple and CPU features: a cache shared between machines never
loads code built for another CPU). The cache holds at most TFN_CACHE_MAX_BYTES; the least recently used entries go.
"""
import functools
import itertools
import os
import platform
import sys
import tempfile

from tfn.runtime import toolchain
from tfn.runtime.cachedir import (
    cache_dir,
    open_trusted,
    private_dir,
    read_fd,
    read_memo,
    read_trusted,
    write_atomic,
    write_memo,
)
from tfn.runtime.digest import sha256

ARTIFACT_MAX_BYTES = 1 << 30  # a larger entry is refused (a loop device or a planted giant is not read)
DEFAULT_MAX_BYTES = 1 << 30
_SIG_MAX_BYTES = 128
_load_numbers = itertools.count()
_sizes = {}  # cache folder -> bytes of its entries as this process last counted them (None: count again)


def key(ir_text, pipeline, options=""):
    """The hash naming an artifact: the IR, the pipeline, options, tfn/MLIR/LLVM versions and the host."""
    h = sha256()
    for part in (ir_text, pipeline, options, toolchain.versions(), host()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def host():
    """The machine code generated here depends on: OS, architecture and the CPU's feature flags."""
    features = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features", "isa")):  # x86, ARM, RISC-V
                    features = " ".join(sorted(line.partition(":")[2].split()))
                    break
    except OSError:
        features = platform.processor()
    return f"{sys.platform}-{platform.machine()};{features}"


class Artifact:
    """An open, verified shared object: load it from `path` before `close()`; `name` is its file.

    `path` is a new name of the very file the descriptor holds (a hard link made through /proc/self/fd, in the
    same private folder), unique so that the dynamic loader never takes it for a library loaded earlier (it
    matches names; /proc/self/fd/N names are reused); without /proc, a private copy of the verified bytes."""

    __slots__ = ("fd", "name", "_data", "_path")

    def __init__(self, fd, name, data):
        self.fd, self.name, self._data, self._path = fd, name, data, None

    @property
    def path(self):
        if self._path is None:
            self._path = _load_name(self.fd, self.name, self._data)
            self._data = None
        return self._path

    def close(self):
        if self._path is not None:
            try:
                os.unlink(self._path)  # a loaded library stays mapped
            except OSError:
                pass
            self._path = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def _load_name(fd, name, data):
    """A fresh path naming the file open as `fd` (a hard link), else holding a copy of its bytes `data`."""
    folder = os.path.dirname(name)
    path = os.path.join(folder, f".load-{os.getpid()}-{next(_load_numbers)}-{os.path.basename(name)}.tmp")
    try:
        os.link(f"/proc/self/fd/{fd}", path, follow_symlinks=True)
        return path
    except OSError:
        pass
    tmp_fd, path = tempfile.mkstemp(dir=folder, prefix=".load-", suffix=".tmp")
    with os.fdopen(tmp_fd, "wb") as f:
        f.write(data)
    return path


def _open_verified(path, expected=None):
    """(Artifact, its digest) of `path` when trusted and, if `expected` is given, of that SHA-256; else None."""
    fd = open_trusted(path, ARTIFACT_MAX_BYTES)
    if fd is None:
        return None
    try:
        data = read_fd(fd, ARTIFACT_MAX_BYTES)
    except OSError:
        data = None
    digest = sha256(data).hexdigest() if data is not None else None
    if digest is None or (expected is not None and digest != expected):
        os.close(fd)
        return None
    return Artifact(fd, path, data), digest


def lookup(k):
    """The verified Artifact cached under key k, or None.

    A damaged entry (truncated, corrupt, missing its hash, not a regular file) is a miss: the caller rebuilds and
    `store` replaces it atomically. It is not deleted here, where it could be another process's entry landing."""
    d = cache_dir()
    if d is None:
        return None
    so, sig = os.path.join(d, k + ".so"), os.path.join(d, k + ".sha256")
    expected = read_trusted(sig, _SIG_MAX_BYTES)
    if expected is None:
        return None
    found = _open_verified(so, expected.decode("ascii", "replace").strip())
    if found is None:
        return None
    try:
        os.utime(sig)  # its last use, for least-recently-used eviction
    except OSError:
        pass
    return found[0]


def lookup_alias(alias):
    """The verified Artifact whose key the memo `alias-<alias>` names (written by store_alias), or None."""
    k = read_memo(_ALIAS + alias)
    if k is None or len(k) != 64 or any(c not in "0123456789abcdef" for c in k):  # (a damaged entry is a miss)
        return None
    return lookup(k)


def store_alias(alias, k):
    """Let `alias` find the artifact of key k (a memo of a few bytes; a dangling one is a miss)."""
    if read_memo(_ALIAS + alias) != k:
        write_memo(_ALIAS + alias, k)


_ALIAS = "alias-"  # the memos naming an artifact's key by another key (a recorded trace's)


def open_built(built_path):
    """A built artifact as an Artifact, left where it is (not stored: quick code, runtime/tiering.py)."""
    opened = _open_verified(built_path)
    if opened is None:
        raise OSError(f"the built artifact {built_path} cannot be opened")
    return opened[0]


def store(k, built_path):
    """Move a built artifact into the cache atomically; returns it as an Artifact opened before the move (so what
    is loaded is what was built), uncached when the cache is off or unwritable."""
    opened = _open_verified(built_path)
    if opened is None:
        raise OSError(f"the built artifact {built_path} cannot be opened")
    artifact, digest = opened
    d = cache_dir()
    if d is None:
        return artifact
    so = os.path.join(d, k + ".so")
    try:
        private_dir(d)
        # Each file lands by rename, the signature last: a reader never trusts a half-written .so. Writers racing
        # on one key build identical bytes, so any interleaving of their renames leaves a matching pair.
        os.replace(built_path, so)
        write_atomic(d, k + ".sha256", digest.encode())
    except OSError:  # an unwritable cache: use the artifact uncached
        return artifact
    artifact.name = so
    _account(d, os.fstat(artifact.fd).st_size)
    return artifact


def max_bytes():
    """TFN_CACHE_MAX_BYTES (the cache's size cap), or DEFAULT_MAX_BYTES when unset or not a number."""
    try:
        return max(0, int(os.environ.get("TFN_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES)))
    except ValueError:
        return DEFAULT_MAX_BYTES


def _account(d, added):
    """Note `added` bytes stored in folder d; evict least recently used entries once it holds over the cap."""
    size = _sizes.get(d)
    if size is None:
        size = sum(s for _, s, _ in _entries(d))
    else:
        size += added
    cap = max_bytes()
    if size > cap:
        size = _evict(d, cap)
    _sizes[d] = size


def _entries(d):
    """(key, bytes, last use) of each entry in folder d."""
    out = []
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for name in names:
        if not name.endswith(".so"):
            continue
        k = name[:-3]
        try:
            size = os.lstat(os.path.join(d, name)).st_size
        except OSError:  # removed meanwhile
            continue
        try:
            used = os.lstat(os.path.join(d, k + ".sha256")).st_mtime_ns
        except OSError:
            used = 0  # no signature: never loaded, the first to go
        out.append((k, size, used))
    return out


def _evict(d, cap):
    """Remove the least recently used entries of folder d until it holds at most cap bytes (a process that has one
    open keeps its copy); returns the bytes left."""
    entries = sorted(_entries(d), key=lambda e: e[2])
    size = sum(s for _, s, _ in entries)
    removed = set()
    for k, s, _ in entries:
        if size <= cap:
            break
        for suffix in (".sha256", ".so"):  # the signature first: a reader never trusts a .so being removed
            try:
                os.unlink(os.path.join(d, k + suffix))
            except OSError:
                pass
        removed.add(k)
        size -= s
    if removed:  # the aliases of what went (store_alias)
        for name in os.listdir(d):
            if name.startswith(_ALIAS) and name.endswith(".memo") and read_memo(name[:-len(".memo")]) in removed:
                try:
                    os.unlink(os.path.join(d, name))
                except OSError:
                    pass
    return size


def scratch_root():
    """The private folder builds and loads use for their temporary files (inside the cache so that renames stay
    atomic), or None for the system's temporary directory (no cache, or an unwritable one)."""
    d = cache_dir()
    try:
        return private_dir(os.path.join(d, "tmp")) if d else None
    except OSError:  # an unwritable cache: store() keeps what is built there
        return None


def scratch_dir():
    """A private directory for building artifacts (inside the cache so that renames stay atomic)."""
    return tempfile.mkdtemp(prefix="build-", dir=scratch_root())
