"""`LearningRateScheduler`, `TerminateOnNaN` and `CSVLogger`: callbacks acting per epoch or per batch without a
monitored best."""
import csv
import math
import os

import numpy as np

from tfn.keras.callback import Callback
from tfn.keras.monitor_callbacks import lr_value


class LearningRateScheduler(Callback):
    """At each epoch's start, set the learning rate to schedule(epoch, lr) (or schedule(epoch)). The optimizer
    holds it in a variable the compiled train step reads, so the new rate applies without a retrace."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler's `schedule` must be callable. Received: {schedule!r}")
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            lr = self.schedule(epoch, lr_value(optimizer))
        except TypeError:  # the older one-argument form, as Keras accepts
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {lr}")
        optimizer.learning_rate = lr
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = lr_value(self.model.optimizer)


class TerminateOnNaN(Callback):
    """Stop training when a batch's loss is NaN or infinite (raise_error=True: raise a RuntimeError)."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(float(loss)):
            return
        if self.raise_error:
            raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. "
                               "Terminating training immediately.")
        print(f"Batch {batch}: Invalid loss, terminating training")
        self.model.stop_training = True


class CSVLogger(Callback):
    """Write each epoch's logs as a CSV row (an 'epoch' column, then the keys sorted; val_ columns are added
    when the first epoch has none, filled 'NA'). append=True adds to an existing file without a second header."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys = self.writer = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        self.append_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                self.append_header = not f.readline()
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys = self.writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys += [f"val_{k}" for k in self.keys]
        if self.writer is None:
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, delimiter=self.sep,
                                         lineterminator="\n")
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, _csv_value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _csv_value(value):
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return f'"[{", ".join(map(str, value))}]"'
    return value
