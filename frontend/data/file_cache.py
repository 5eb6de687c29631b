"""The files of `Dataset.cache(filename)`: the elements of one full iteration under the prefix `filename`.

`<prefix>.index` (JSON, written last and atomically) names the shard files `<prefix>.<writer>.<n>.npz`, each
holding up to SHARD_ELEMENTS elements, per component the rows' values raveled one after another and their shapes
(no pickled objects). A cache without its index is not used. While an iterator writes, `<prefix>.lockfile` exists;
a second writer raises AlreadyExistsError, as TF does. An iteration that stops early discards what it wrote.
"""
import json
import os
import secrets
import warnings

import numpy as np

from tfn.dialects.errors import AlreadyExistsError, DataLossError, InvalidArgumentError

FORMAT = "tfn.data.cache/1"
SHARD_ELEMENTS = 4096


def index_path(prefix):
    return prefix + ".index"


def lock_path(prefix):
    return prefix + ".lockfile"


def read(prefix, spec_key):
    """A generator over the cached flat elements, or None when `prefix` holds no complete cache."""
    try:
        with open(index_path(prefix), encoding="utf-8") as f:
            index = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise DataLossError(f"the dataset cache index {index_path(prefix)!r} cannot be read: {e}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise DataLossError(f"{index_path(prefix)!r} is not a tfn.data cache index")
    if index["element_spec"] != spec_key:
        raise InvalidArgumentError(
            f"the dataset cache {prefix!r} holds elements of {index['element_spec']}, but this dataset's elements "
            f"are {spec_key}; use another cache filename")
    return _elements(prefix, index)


def _elements(prefix, index):
    folder = os.path.dirname(prefix)
    strings = index["strings"]
    for name, n in index["shards"]:
        path = os.path.join(folder, name)
        try:
            with np.load(path, allow_pickle=False) as z:
                parts = [(z[f"data{i}"], z[f"shapes{i}"]) for i in range(len(strings))]
        except (OSError, ValueError, KeyError) as e:
            raise DataLossError(f"the dataset cache file {path!r} cannot be read: {e}") from None
        columns = []
        for (data, shapes), is_string in zip(parts, strings):
            if is_string:
                data = data.astype(object)
            sizes = np.prod(shapes, axis=1, dtype=np.int64) if shapes.shape[1] else np.ones(n, np.int64)
            ends = np.cumsum(sizes)
            if len(shapes) != n or (n and ends[-1] != data.size):
                raise DataLossError(f"the dataset cache file {path!r} does not hold the elements its index names")
            columns.append([data[e - s:e].reshape(tuple(shape)) for s, e, shape in zip(sizes, ends, shapes)])
        yield from zip(*columns)


class Writer:
    """Writes one full iteration's elements; holds the lockfile from creation to finish() or abandon()."""

    def __init__(self, prefix):
        self.prefix = prefix
        folder = os.path.dirname(prefix)
        if folder:
            os.makedirs(folder, exist_ok=True)
        try:
            fd = os.open(lock_path(prefix), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            raise AlreadyExistsError(
                f"There appears to be a concurrent caching iterator running - cache lockfile already exists "
                f"('{lock_path(prefix)}'). If you are sure no other running computation is using this cache "
                "prefix, delete the lockfile and re-initialize the iterator.") from None
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()}\n")
        self._tag = secrets.token_hex(4)
        self._rows, self._shards, self._strings = [], [], None

    def add(self, flat):
        self._rows.append(tuple(np.asarray(a) for a in flat))
        if len(self._rows) == SHARD_ELEMENTS:
            self._flush()

    def _flush(self):
        if not self._rows:
            return
        columns = list(zip(*self._rows))
        if self._strings is None:
            self._strings = [c[0].dtype == object for c in columns]
        arrays = {}
        for i, (column, is_string) in enumerate(zip(columns, self._strings)):
            data = np.concatenate([a.ravel() for a in column])
            arrays[f"data{i}"] = data.astype(str) if is_string else data
            arrays[f"shapes{i}"] = np.array([a.shape for a in column], np.int64).reshape(len(column), -1)
        name = f"{os.path.basename(self.prefix)}.{self._tag}.{len(self._shards):05d}.npz"
        with open(os.path.join(os.path.dirname(self.prefix), name), "wb") as f:
            np.savez(f, **arrays)
        self._shards.append([name, len(self._rows)])
        self._rows = []

    def finish(self, spec_key, n_components):
        """Write the last shard and the index (atomically), release the lock."""
        self._flush()
        index = {"format": FORMAT, "element_spec": spec_key, "shards": self._shards,
                 "strings": self._strings if self._strings is not None else [False] * n_components}
        tmp = f"{index_path(self.prefix)}.{self._tag}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(index, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, index_path(self.prefix))
        os.remove(lock_path(self.prefix))

    def abandon(self, early):
        """Remove what was written and the lock (the iteration stopped early, or its input failed)."""
        folder = os.path.dirname(self.prefix)
        for path in [os.path.join(folder, name) for name, _ in self._shards] + [lock_path(self.prefix)]:
            try:
                os.remove(path)
            except FileNotFoundError:  # removed by someone else (a temporary folder's cleanup)
                pass
        if early:
            warnings.warn(
                "The calling iterator did not fully read the dataset being cached. In order to avoid unexpected "
                "truncation of the dataset, the partially cached contents of the dataset will be discarded. This "
                "can happen if you have an input pipeline similar to `dataset.cache().take(k).repeat()`. You "
                "should use `dataset.take(k).cache().repeat()` instead.", stacklevel=2)
