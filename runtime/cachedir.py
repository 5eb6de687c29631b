"""The user-private cache folder: where it is, whether it can be trusted, reading its files safely, and the small
memos kept there (derived values worth keeping).

What the cache trusts: only a folder this user owns that no one else may write (created 0700; another owner or
group/world write access turns the cache off, with one warning), and in it only regular files this user owns and no
one else may write, opened once without following links, read through that descriptor with a size limit. A FIFO,
a device, a link or an oversized file is a miss, never a hang or an exhausted memory.
"""
import os
import stat
import tempfile
import warnings

from tfn.runtime.digest import sha256

MEMO_MAX_BYTES = 64 * 1024
_warned = set()  # folders already warned about (once per process each)


def cache_dir():
    """TFN_CACHE_DIR, or <user cache dir>/tfn, when it can be trusted; None when off or refused (see above)."""
    env = os.environ.get("TFN_CACHE_DIR")
    if env == "off":
        return None
    path = env or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                               "tfn")
    problem = _untrusted(path)
    if problem is None:
        return path
    if path not in _warned:
        _warned.add(path)
        warnings.warn(f"tfn: not using the artifact cache {path}: {problem}; functions are compiled without a cache "
                      "(make it a folder only you can write, or set TFN_CACHE_DIR)", RuntimeWarning, stacklevel=2)
    return None


def _untrusted(path):
    """Why folder `path` (created 0700 if missing) cannot hold the cache, or None when it can."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError as e:
        return f"it cannot be created ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"others may write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def private_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def open_trusted(path, max_bytes):
    """A read-only descriptor of `path` if it is a regular file this user owns, no one else may write, of at most
    max_bytes; else None. Never follows a link, never blocks (a FIFO is refused, not waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022 or st.st_size > max_bytes:
        os.close(fd)
        return None
    return fd


def read_fd(fd, max_bytes):
    """All bytes of open file `fd` from its start, or None when it holds more than max_bytes."""
    chunks, total = [], 0
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:  # grew since fstat
            return None
        chunks.append(chunk)


def read_trusted(path, max_bytes):
    """The bytes of `path` when open_trusted accepts it, else None."""
    fd = open_trusted(path, max_bytes)
    if fd is None:
        return None
    try:
        return read_fd(fd, max_bytes)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomic(folder, name, data):
    """Write bytes `data` to folder/name by rename (readers see the old file or the new one, never part)."""
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(folder, name))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_memo(name):
    """The short text `write_memo` remembered under `name` (a value derived from files it names), or None.

    A memo carries the SHA-256 of its text, as artifacts do: a damaged or foreign one is a miss."""
    d = cache_dir()
    if d is None:
        return None
    data = read_trusted(os.path.join(d, name + ".memo"), MEMO_MAX_BYTES)
    if data is None:
        return None
    digest, _, text = data.partition(b"\n")
    if sha256(text).hexdigest().encode() != digest:
        return None
    try:
        return text.decode()
    except UnicodeDecodeError:
        return None


def write_memo(name, text):
    """Remember `text` under `name`, atomically; nothing happens when the cache is off or unwritable."""
    d = cache_dir()
    if d is None:
        return
    data = text.encode()
    try:
        write_atomic(d, name + ".memo", sha256(data).hexdigest().encode() + b"\n" + data)
    except OSError:
        pass
