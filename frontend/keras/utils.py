"""`tfn.keras.utils` and `tfn.keras.backend`: the helpers Keras programs call around their models (one-hot labels,
padded sequences, windows of a time series as a dataset, seeds), with Keras 3's behaviour."""
import random as _py_random

import numpy as np

from tfn import data, random
from tfn.keras import layers
from tfn.keras.callbacks import Progbar  # noqa: F401  (keras.utils.Progbar)


def to_categorical(x, num_classes=None):
    """One-hot rows of the integer labels x (as float32), one more trailing dim; num_classes: max label + 1."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if x.size and (not np.issubdtype(x.dtype, np.integer) and not np.all(np.mod(x, 1) == 0)):
        raise ValueError(f"to_categorical expects integer class labels, got {x.dtype} values")
    labels = x.astype(np.int64)
    if labels.ndim and labels.shape[-1] == 1 and labels.ndim > 1:
        labels = labels.reshape(labels.shape[:-1])
    num_classes = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must be in [0, {num_classes}), got {labels.min()}..{labels.max()}")
    return np.eye(num_classes, dtype=np.float32)[labels]


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (zero norms left as they are)."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x, dtype=np.float32)
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.where(norm == 0, 1, norm)


def set_random_seed(seed):
    """Seed Python's, NumPy's and tfn's generators at once (`keras.utils.set_random_seed`)."""
    if not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    _py_random.seed(int(seed))
    np.random.seed(int(seed) % (2 ** 32))
    random.set_seed(int(seed))


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """The sequences as one [count, maxlen] array: each padded with `value` and cut to maxlen, before ('pre') or
    after ('post') its elements (Keras's defaults: both 'pre')."""
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f'padding and truncating must be "pre" or "post", got {padding!r}, {truncating!r}')
    seqs = [np.asarray(s) for s in sequences]
    lengths = [len(s) for s in seqs]
    maxlen = max(lengths, default=0) if maxlen is None else int(maxlen)
    trailing = next((s.shape[1:] for s in seqs if len(s)), ())
    out = np.full((len(seqs), maxlen) + tuple(trailing), value, dtype=dtype)
    for i, s in enumerate(seqs):
        if not len(s) or maxlen == 0:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out


def timeseries_dataset_from_array(data_array, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """Batches of windows of `sequence_length` timesteps (taken every `sampling_rate` steps, a window starting every
    `sequence_stride`) of data_array[start_index:end_index], with targets[i] for the window starting at i (or the
    windows alone when targets is None)."""
    values = np.asarray(data_array.numpy() if hasattr(data_array, "numpy") else data_array)
    start = 0 if start_index is None else int(start_index)
    end = len(values) if end_index is None else int(end_index)
    span = (sequence_length - 1) * sampling_rate
    last = end - span if targets is None else min(end - span, start + len(targets))
    starts = np.arange(start, last, sequence_stride, dtype=np.int64)
    if shuffle:
        np.random.default_rng(seed).shuffle(starts)
    windows = starts[:, None] + np.arange(0, span + 1, sampling_rate)[None, :]
    inputs = values[windows]
    if targets is None:
        ds = data.Dataset.from_tensor_slices(inputs)
    else:
        t = np.asarray(targets.numpy() if hasattr(targets, "numpy") else targets)
        ds = data.Dataset.from_tensor_slices((inputs, t[starts]))
    return ds.batch(batch_size) if batch_size is not None else ds


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """(left, right) datasets of the arrays' rows (or a dataset's elements): sizes as counts or fractions."""
    if isinstance(dataset, data.Dataset):
        rows = list(dataset.as_numpy_iterator())
        n = len(rows)
    else:
        arrays = dataset if isinstance(dataset, (tuple, list)) else (dataset,)
        arrays = [np.asarray(a) for a in arrays]
        n = len(arrays[0])
    order = np.arange(n)
    if shuffle:
        np.random.default_rng(seed).shuffle(order)

    def count(size):
        return None if size is None else int(round(size * n)) if isinstance(size, float) else int(size)
    left, right = count(left_size), count(right_size)
    if left is None and right is None:
        raise ValueError("split_dataset: give left_size or right_size")
    left = n - right if left is None else left
    right = n - left if right is None else right
    if left < 0 or right < 0 or left + right > n:
        raise ValueError(f"split_dataset: sizes {left} + {right} do not fit {n} samples")
    parts = (order[:left], order[left:left + right])
    if isinstance(dataset, data.Dataset):
        def make(idx):
            picked = [rows[i] for i in idx]
            columns = list(zip(*picked)) if picked and isinstance(picked[0], tuple) else None
            return data.Dataset.from_tensor_slices(tuple(np.stack(c) for c in columns) if columns else
                                                   np.stack(picked))
        return tuple(make(p) for p in parts)
    single = not isinstance(dataset, (tuple, list))
    return tuple(data.Dataset.from_tensor_slices(arrays[0][p] if single else tuple(a[p] for a in arrays))
                 for p in parts)


# --- keras.backend ------------------------------------------------------------------------------------------

def floatx():
    return "float32"


def epsilon():
    return 1e-7


def image_data_format():
    return "channels_last"


def clear_session(free_memory=True):
    """Reset the layer-name counters (the next Dense is `dense` again), as Keras's clear_session does."""
    layers._NAME_COUNTS.clear()
