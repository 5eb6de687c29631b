"""Keras's `TensorBoard` callback on tfn.summary: each epoch's logs as scalars `epoch_<name>` in `<log_dir>/train`
(validation ones, `val_` dropped, in `<log_dir>/validation`), every `update_freq` batches the running values as
`batch_<name>`, and every `histogram_freq` epochs a histogram of each weight."""
import os

import numpy as np

from tfn import summary
from tfn.keras.callback import Callback


class TensorBoard(Callback):
    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"update_freq must be 'epoch' or a positive integer, got {update_freq!r}")
        self.log_dir, self.histogram_freq, self.update_freq = os.fspath(log_dir), int(histogram_freq), update_freq
        self._writers = {}
        self._batches = 0

    def _writer(self, which):
        if which not in self._writers:
            self._writers[which] = summary.create_file_writer(os.path.join(self.log_dir, which))
        return self._writers[which]

    def _scalars(self, which, prefix, logs, step):
        with self._writer(which).as_default():
            for name, value in (logs or {}).items():
                value = np.asarray(value)
                if value.size == 1 and np.issubdtype(value.dtype, np.number):
                    summary.scalar(f"{prefix}{name}", float(value.reshape(())), step=step)

    def on_train_batch_end(self, batch, logs=None):
        self._batches += 1
        if self.update_freq != "epoch" and self._batches % self.update_freq == 0:
            self._scalars("train", "batch_", logs, self._batches)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self._scalars("train", "epoch_", {k: v for k, v in logs.items() if not k.startswith("val_")}, epoch)
        val = {k[len("val_"):]: v for k, v in logs.items() if k.startswith("val_")}
        if val:
            self._scalars("validation", "epoch_", val, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default():
                for w in self.model.weights:
                    summary.histogram(f"{w.name.split(':')[0]}/histogram", w.numpy(), step=epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
