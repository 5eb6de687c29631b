"""Callbacks that watch one logged quantity across epochs: `EarlyStopping`, `ReduceLROnPlateau` and
`ModelCheckpoint` (Keras 3's rules: an improvement beats the best by more than min_delta, in the direction that
mode 'min'/'max' names, or that 'auto' infers from the quantity)."""
import operator
import os
import warnings

import numpy as np

from tfn.keras.callback import Callback


class MonitorCallback(Callback):
    """Base: `monitor` (a logs key), `mode` ('auto', 'min', 'max'), `baseline` (the first best), `min_delta`."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
            mode = "auto"
        self.monitor, self.mode, self.best = monitor, mode, baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        """'auto': lower is better for a loss, else the direction the model's metric of that name declares."""
        if self.mode == "min":
            self.monitor_op = operator.lt
        elif self.mode == "max":
            self.monitor_op = operator.gt
        else:
            name = self.monitor.removeprefix("val_")
            if name == "loss":
                self.monitor_op = operator.lt
            for m in getattr(self.model, "metrics", None) or []:
                direction = getattr(m, "_direction", None)
                if m.name == name and direction is not None:
                    self.monitor_op = operator.gt if direction == "up" else operator.lt
            if self.monitor_op is None:
                raise ValueError(f"{type(self).__name__} callback received monitor={self.monitor}, but Keras isn't "
                                 "able to automatically determine whether that metric should be maximized or "
                                 "minimized. Pass `mode='max'` in order to monitor based on the highest metric value, "
                                 "or pass `mode='min'` in order to use the lowest value.")
        if self.monitor_op is operator.lt:
            self.min_delta = -abs(self.min_delta)

    def _is_improvement(self, value, reference):
        return reference is None or self.monitor_op(value - self.min_delta, reference)


class EarlyStopping(MonitorCallback):
    """Stop fit when `monitor` has not improved for `patience` epochs (counted from `start_from_epoch`); with
    restore_best_weights, end with the best epoch's weights."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0  # patience restarts only past both the best so far and the baseline
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join(logs)}", stacklevel=3)
        return value


def lr_value(optimizer):
    """The optimizer's current learning rate as a Python float."""
    if not hasattr(optimizer, "learning_rate"):
        raise ValueError('Optimizer must have a "learning_rate" attribute.')
    lr = optimizer.learning_rate
    return float(lr.numpy() if hasattr(lr, "numpy") else lr)


class ReduceLROnPlateau(MonitorCallback):
    """Multiply the learning rate by `factor` (not below min_lr) when `monitor` has not improved by min_delta for
    `patience` epochs; then wait `cooldown` epochs. Adds 'learning_rate' to each epoch's logs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.factor, self.min_lr, self.patience = factor, min_lr, patience
        self.verbose, self.cooldown = verbose, cooldown
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs=None):
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = {} if logs is None else logs
        optimizer = self.model.optimizer
        logs["learning_rate"] = lr_value(optimizer)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", stacklevel=3)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = lr_value(optimizer)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class ModelCheckpoint(MonitorCallback):
    """Save the weights after every epoch (or each `save_freq` batches) to `filepath`, formatted with the epoch
    (1-based) and the logs: 'w.{epoch:02d}-{val_loss:.2f}.weights.h5'. save_best_only: only when `monitor`
    improves. save_weights_only: model.save_weights (.npz content whatever the name); else model.save (a .keras file,
    whose name must end in .keras, as Keras 3 requires)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.filepath = os.fspath(filepath)
        self.verbose, self.save_best_only, self.save_weights_only = verbose, save_best_only, save_weights_only
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values")
        self.save_freq = save_freq
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError(f"The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}")
        self._since_save, self._last_batch, self._epoch = 0, None, 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        new_epoch = self._last_batch is None or batch <= self._last_batch
        self._since_save += batch + 1 if new_epoch else batch - self._last_batch
        self._last_batch = batch
        if self._since_save >= self.save_freq:
            self._since_save = 0
            self._save(self._epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs or {})
        if batch is not None and "batch" not in fields:
            fields["batch"] = batch + 1
        try:
            return self.filepath.format(epoch=epoch + 1, **fields)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from None

    def _should_save(self, epoch, logs, path):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {path}")
            return True
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, "
                      f"saving model to {path}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save(self, epoch, batch, logs):
        path = self._file_path(epoch, batch, logs)
        if os.path.isdir(path):
            raise IOError(f"Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an "
                          f"existing directory: {path}")
        if not self._should_save(epoch, logs, path):
            return
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
