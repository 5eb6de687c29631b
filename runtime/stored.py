"""Files stored outside the artifact cache (a saved model's): read once through a descriptor and checked against
the SHA-256 their manifest names; native code is loaded from a private copy of the very bytes checked.

Unlike the artifact cache, such a folder may come from elsewhere: its files need not be this user's. The hash
proves the files are the ones the manifest names (not damaged, not truncated, not swapped for one another); it does
not make the code trustworthy: whoever wrote the folder chose the manifest too.
"""
import os
import stat
import tempfile

from tfn.runtime import cache, driver
from tfn.runtime.cachedir import read_fd
from tfn.runtime.digest import sha256
from tfn.runtime.executable import Executable

MAX_BYTES = 1 << 32  # a larger stored file is refused (a device or a planted giant is not read)


class StoredFileError(Exception):
    """A stored file is missing, not a regular file, or not the bytes its manifest names (`kind` says which)."""

    def __init__(self, path, kind, reason):
        super().__init__(f"{path} {reason}")
        self.path, self.kind, self.reason = path, kind, reason


def read_checked(path, expected, max_bytes=MAX_BYTES):
    """The bytes of regular file `path` (never through a link, never waiting on a FIFO) if their SHA-256 is
    `expected` (any, when None); StoredFileError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StoredFileError(path, "missing", "does not exist") from None
    except OSError as e:
        raise StoredFileError(path, "unreadable", f"cannot be opened ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoredFileError(path, "unreadable", "is not a regular file")
        if st.st_size > max_bytes:
            raise StoredFileError(path, "unreadable", f"holds {st.st_size} bytes, more than {max_bytes}")
        data = read_fd(fd, max_bytes)
    except OSError as e:
        raise StoredFileError(path, "unreadable", f"cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)
    if data is None:
        raise StoredFileError(path, "unreadable", f"grew beyond {max_bytes} bytes while read")
    digest = sha256(data).hexdigest()
    if expected is not None and digest != expected:
        raise StoredFileError(path, "hash", f"is not the file its manifest names: its SHA-256 is {digest}, not "
                                            f"{expected} ({len(data)} bytes: truncated or changed)")
    return data


def load_native(data, source, symbol, in_types, out_types, get_module, handlers=()):
    """The Executable of function `symbol` in shared-object bytes `data` (checked already, read from `source`);
    get_module() returns the function's traced IR, parsed only to describe a run-time error.

    The bytes are written to a new private file (a fresh name: the dynamic loader never takes it for a library
    loaded earlier) and loaded from there; the file is removed once loaded. StoredFileError (kind "unloadable")
    when they do not load or lack the function."""
    fd, copy = tempfile.mkstemp(dir=cache.scratch_root(), prefix="load-", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return Executable(copy, symbol, in_types, out_types, on_error=_lazy_describer(get_module, symbol),
                          handlers=handlers, source=source)
    except (OSError, AttributeError) as e:
        raise StoredFileError(source, "unloadable", f"does not load here: {e}") from None
    finally:
        try:
            os.unlink(copy)  # a loaded library stays mapped
        except OSError:
            pass


def _lazy_describer(get_module, symbol):
    def describe(code, details):
        return driver.error_describer(get_module(), symbol)(code, details)
    return describe
