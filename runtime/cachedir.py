"""The user-private cache folder: where it is, and the small memos kept there (derived values worth keeping)."""
import os
import tempfile


def cache_dir():
    """TFN_CACHE_DIR, or <user cache dir>/tfn; None when TFN_CACHE_DIR=off."""
    env = os.environ.get("TFN_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tfn")


def private_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def read_memo(name):
    """The short text `write_memo` remembered under `name` (a value derived from files it names), or None."""
    d = cache_dir()
    if d is None:
        return None
    try:
        with open(os.path.join(d, name + ".memo")) as f:
            return f.read()
    except OSError:
        return None


def write_memo(name, text):
    """Remember `text` under `name`, atomically; nothing happens when the cache is off or unwritable."""
    d = cache_dir()
    if d is None:
        return
    try:
        private_dir(d)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(d, name + ".memo"))
    except OSError:
        pass
