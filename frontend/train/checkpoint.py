"""`tfn.train.Checkpoint`, `CheckpointManager`, `latest_checkpoint`, `list_variables`, `load_checkpoint`: the values
of the variables reachable from some objects, saved and restored by their path in the object graph.

The graph is what TF's checkpoints track: the objects given to Checkpoint by keyword, and from them tfn.Modules
(Keras layers and models among them), Keras optimizers, Checkpoints and the lists, tuples and dicts they hold, down
to the variables. A variable's key is its first path from the root, the attribute names (sorted) and container
indices or keys joined by "/" ("model/dense/kernel"); an optimizer's slot variable is keyed by the optimizer's
path, the slot's name and the path of the variable it belongs to, so that it finds that variable again. Restoring
needs the variables to exist: build a Keras model (call it once) before restoring it; the optimizer's slots are
made by restoring when it has none yet.

Files, for a checkpoint `prefix` ("ckpt-3"): `prefix.index` (JSON: each key's dtype and shape, and the file's
format) and `prefix.data-00000-of-00001` (the values, NumPy's .npz), both written to a temporary name and renamed,
index last, so a reader never sees half a checkpoint. A folder's `checkpoint` file (TF's text format) names its
latest checkpoint and those a CheckpointManager keeps. Not TF's binary format: TF cannot read these files, nor
tfn TF's.
"""
import json
import os
import re
import tempfile

import numpy as np

from tfn import dtypes
from tfn.dialects.errors import DataLossError, NotFoundError
from tfn.state.module import Module
from tfn.state.variables import Variable, init_scope

FORMAT = "tfn-checkpoint-1"
INDEX, DATA = ".index", ".data-00000-of-00001"
STATE_FILE = "checkpoint"


def _is_optimizer(obj):
    return hasattr(obj, "_slots") and hasattr(obj, "iterations") and hasattr(obj, "apply_gradients")


def _children(obj):
    """(name, child) of an object the graph goes through: attributes (sorted), items of containers."""
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return [(str(k), obj[k]) for k in sorted(obj, key=str)]
    return [(k, v) for k, v in sorted(vars(obj).items()) if k != "_slots"]


def _tracked(value):
    return isinstance(value, (Variable, Module, Checkpoint, list, tuple, dict)) or _is_optimizer(value)


def object_graph(roots):
    """({key: variable}, [(optimizer key, optimizer)]) of the objects reachable from `roots` ({name: object}),
    breadth first, each object once (its first path)."""
    keys, optimizers, seen = {}, [], set()
    queue = [(name, obj) for name, obj in sorted(roots.items())]
    while queue:
        path, obj = queue.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Variable):
            keys[path] = obj
            continue
        if _is_optimizer(obj):
            optimizers.append((path, obj))
        for name, child in _children(obj):
            if _tracked(child):
                queue.append((f"{path}/{name}", child))
    by_id = {id(v): k for k, v in keys.items()}
    for path, opt in optimizers:
        for var_id, slots in opt._slots.items():
            if var_id in by_id:
                for slot_name, slot in slots.items():
                    keys[_slot_key(path, slot_name, by_id[var_id])] = slot
    return keys, optimizers


def _slot_key(optimizer_path, slot_name, variable_key):
    return f"{optimizer_path}/.slots/{slot_name}/{variable_key}"


_SLOT = re.compile(r"^(?P<opt>.+)/\.slots/(?P<slot>[^/]+)/(?P<var>.+)$")


def _write(prefix, keys):
    """Write the values of `keys` ({key: variable}) as checkpoint `prefix` (data, then index: both renamed into
    place)."""
    folder = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(folder, exist_ok=True)
    values = {f"v{i}": v.numpy() for i, v in enumerate(keys.values())}
    index = {"format": FORMAT, "variables": {k: {"slot": f"v{i}", "dtype": v.dtype.name, "shape": list(v.shape)}
                                             for i, (k, v) in enumerate(keys.items())}}
    for suffix, write in ((DATA, lambda f: np.savez(f, **values)),
                          (INDEX, lambda f: f.write(json.dumps(index, indent=1).encode()))):
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, prefix + suffix)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _read_index(prefix):
    try:
        with open(prefix + INDEX, "rb") as f:
            index = json.loads(f.read().decode())
    except FileNotFoundError:
        raise NotFoundError(f"Failed to find any matching files for {prefix}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise DataLossError(f"Unable to read the checkpoint index {prefix + INDEX}: {e}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise DataLossError(f"{prefix + INDEX} is not a tfn checkpoint index (format {FORMAT})")
    return index["variables"]


def _read_values(prefix, index):
    try:
        with np.load(prefix + DATA) as data:
            return {k: data[entry["slot"]] for k, entry in index.items()}
    except FileNotFoundError:
        raise NotFoundError(f"The checkpoint's data file {prefix + DATA} is missing") from None
    except (ValueError, KeyError, OSError) as e:
        raise DataLossError(f"Unable to read the checkpoint data {prefix + DATA}: {e}") from None


class CheckpointLoadStatus:
    """What a restore matched (`Checkpoint.restore`'s result): assert_consumed, assert_existing_objects_matched,
    expect_partial, as TF's."""

    def __init__(self, unused_keys, unrestored_keys):
        self._unused = sorted(unused_keys)
        self._unrestored = sorted(unrestored_keys)

    def assert_consumed(self):
        """AssertionError unless every value of the checkpoint was restored into a variable and every variable of
        the objects got a value."""
        if self._unused:
            raise AssertionError(f"Unresolved object in checkpoint: values for {self._unused} found no variable")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        if self._unrestored:
            raise AssertionError(f"Some objects had no value in the checkpoint: {self._unrestored}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are restored when restore() is called (TF 1's graph API)."""


class Checkpoint(Module):
    """Saves and restores the variables of the objects given by keyword (`tf.train.Checkpoint`)."""

    def __init__(self, root=None, **kwargs):
        super().__init__(name="checkpoint")
        if root is not None:
            kwargs["root"] = root
        for obj in kwargs.values():
            if not _tracked(obj):
                raise ValueError(f"`Checkpoint` was expecting a trackable object (an object derived from "
                                 f"`Trackable`), got {obj}. If you believe this object should be trackable (i.e. it "
                                 "is part of the TensorFlow Python API and manages state), please open an issue.")
        self._roots = dict(kwargs)
        with init_scope():
            self.save_counter = Variable(np.int64(0), trainable=False, name="save_counter")

    def __setattr__(self, key, value):
        object.__setattr__(self, key, value)
        if not key.startswith("_") and key != "save_counter" and "_roots" in self.__dict__ and _tracked(value):
            self._roots[key] = value

    def _keys(self):
        return object_graph({**self._roots, "save_counter": self.save_counter})[0]

    def write(self, file_prefix, options=None):
        """Save the values as checkpoint `file_prefix` exactly (no counter, no `checkpoint` file); returns it."""
        file_prefix = os.fspath(file_prefix)
        _write(file_prefix, self._keys())
        return file_prefix

    def save(self, file_prefix, options=None):
        """Save as `file_prefix-N` (N: the save counter, increased first), record it as the folder's latest;
        returns the path."""
        self.save_counter.assign_add(np.int64(1))
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}")
        update_checkpoint_state(os.path.dirname(os.path.abspath(path)), path, [path])
        return path

    def read(self, save_path, options=None):
        return self.restore(save_path, options)

    def restore(self, save_path, options=None):
        """Assign every variable of the objects its value in checkpoint `save_path` (a prefix, or None: nothing);
        the optimizers' slots for variables whose slots are saved are made first when missing. Returns a
        CheckpointLoadStatus. Shapes and dtypes must match (ValueError naming the variable)."""
        if save_path is None:
            return CheckpointLoadStatus([], [])
        save_path = os.fspath(save_path)
        index = _read_index(save_path)
        values = _read_values(save_path, index)
        keys, optimizers = object_graph({**self._roots, "save_counter": self.save_counter})
        _make_missing_slots(keys, optimizers, values)
        keys = object_graph({**self._roots, "save_counter": self.save_counter})[0]
        for key, variable in keys.items():
            if key not in values:
                continue
            value = values[key]
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(f"Received incompatible tensor with shape {list(value.shape)} when attempting to "
                                 f"restore variable with shape {list(variable.shape)} and name {key}.")
            if dtypes.as_dtype(value.dtype) != variable.dtype:
                raise ValueError(f"Cannot restore {key}: the checkpoint holds {dtypes.as_dtype(value.dtype).name}, "
                                 f"the variable is {variable.dtype.name}")
            variable.assign(value)
        return CheckpointLoadStatus(set(values) - set(keys), set(keys) - set(values))


def _make_missing_slots(keys, optimizers, values):
    """Build the optimizers' slots for the variables whose slots the checkpoint holds but the optimizer has not made
    yet (a fresh optimizer restored before its first step)."""
    by_path = dict(optimizers)
    wanted = {}
    for key in values:
        m = _SLOT.match(key)
        if m and m["opt"] in by_path and m["var"] in keys:
            opt, var = by_path[m["opt"]], keys[m["var"]]
            if id(var) not in opt._slots:
                wanted.setdefault(m["opt"], {})[id(var)] = var
    for path, variables in wanted.items():
        with init_scope():
            by_path[path].build_slots(list(variables.values()))


# --- the folder's `checkpoint` file and the manager ---------------------------------------------------------

def _relative(folder, path):
    path = os.path.abspath(path)
    return os.path.relpath(path, folder) if os.path.dirname(path) == os.path.abspath(folder) else path


def update_checkpoint_state(folder, latest, paths):
    """Write the folder's `checkpoint` file: `latest` and the kept checkpoints `paths` (TF's text format)."""
    folder = os.path.abspath(folder)
    lines = [f'model_checkpoint_path: "{_relative(folder, latest)}"']
    lines += [f'all_model_checkpoint_paths: "{_relative(folder, p)}"' for p in paths]
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(folder, STATE_FILE))


def _checkpoint_state(folder):
    """(latest path, [kept paths]) from a folder's `checkpoint` file, or (None, [])."""
    try:
        with open(os.path.join(folder, STATE_FILE)) as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None, []

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(folder, p)
    latest = re.search(r'^model_checkpoint_path:\s*"(.*)"\s*$', text, re.M)
    kept = re.findall(r'^all_model_checkpoint_paths:\s*"(.*)"\s*$', text, re.M)
    return (absolute(latest[1]) if latest else None), [absolute(p) for p in kept]


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the latest checkpoint recorded in checkpoint_dir's `checkpoint` file, None if there is none."""
    latest, _ = _checkpoint_state(os.fspath(checkpoint_dir))
    return latest if latest is not None and os.path.exists(latest + INDEX) else None


def _delete(prefix):
    for suffix in (INDEX, DATA):
        try:
            os.unlink(prefix + suffix)
        except FileNotFoundError:
            pass


class CheckpointManager:
    """Numbered checkpoints of one Checkpoint in a folder, the newest `max_to_keep` kept (`tf.train.CheckpointManager`);
    a new manager picks up the folder's `checkpoint` file."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None, checkpoint_name="ckpt",
                 step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager expects a tfn.train.Checkpoint, got {checkpoint!r}")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be a positive integer or None, got {max_to_keep}")
        self._checkpoint = checkpoint
        self._directory = os.path.abspath(os.fspath(directory))
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        self._step_counter, self._interval, self._last_step = step_counter, checkpoint_interval, None
        latest, kept = _checkpoint_state(self._directory)
        self._kept = [p for p in kept if os.path.exists(p + INDEX)]
        if latest is not None and latest not in self._kept and os.path.exists(latest + INDEX):
            self._kept.append(latest)

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """The kept checkpoints, oldest first."""
        return list(self._kept)

    @property
    def latest_checkpoint(self):
        return self._kept[-1] if self._kept else None

    @property
    def checkpoint(self):
        return self._checkpoint

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Save as `<directory>/<checkpoint_name>-<N>` (N: checkpoint_number, else the checkpoint's save counter
        after increasing it), drop the oldest beyond max_to_keep; returns the path (None when the step interval
        has not passed)."""
        if self._interval is not None and check_interval and self._step_counter is not None:
            step = int(np.asarray(self._step_counter.numpy() if hasattr(self._step_counter, "numpy")
                                  else self._step_counter))
            if self._last_step is not None and step - self._last_step < self._interval:
                return None
            self._last_step = step
        self._checkpoint.save_counter.assign_add(np.int64(1))
        number = int(self._checkpoint.save_counter.numpy()) if checkpoint_number is None else int(
            np.asarray(checkpoint_number.numpy() if hasattr(checkpoint_number, "numpy") else checkpoint_number))
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        if path in self._kept:
            self._kept.remove(path)
        self._kept.append(path)
        while self._max_to_keep is not None and len(self._kept) > self._max_to_keep:
            _delete(self._kept.pop(0))
        update_checkpoint_state(self._directory, path, self._kept)
        return path

    def restore_or_initialize(self):
        """Restore the latest checkpoint and return its path, or run init_fn (if given) and return None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


def list_variables(ckpt_dir_or_file):
    """[(key, shape)] of a checkpoint (a prefix, or a folder: its latest), sorted by key."""
    prefix = _prefix_of(ckpt_dir_or_file)
    return sorted((k, entry["shape"]) for k, entry in _read_index(prefix).items())


class CheckpointReader:
    """Reads the values of a checkpoint by key (`tf.train.load_checkpoint`'s result)."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._index = _read_index(prefix)

    def get_variable_to_shape_map(self):
        return {k: e["shape"] for k, e in self._index.items()}

    def get_variable_to_dtype_map(self):
        return {k: dtypes.as_dtype(e["dtype"]) for k, e in self._index.items()}

    def has_tensor(self, key):
        return key in self._index

    def get_tensor(self, key):
        if key not in self._index:
            raise NotFoundError(f"Key {key} not found in checkpoint")
        return _read_values(self._prefix, {key: self._index[key]})[key]


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(_prefix_of(ckpt_dir_or_file))


def _prefix_of(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return latest
    return path

