"""`BackupAndRestore`: fit interrupted (the process killed, an error) resumes where the last backup left it. The
backup holds the model's weights, the optimizer's state (iterations, learning rate, slots) and the next epoch."""
import json
import os
import shutil

import numpy as np

from tfn.keras.callback import Callback


def _optimizer_state(optimizer):
    lr = getattr(optimizer, "_learning_rate", None)
    return list(optimizer.variables) + ([lr] if lr is not None else [])


class BackupAndRestore(Callback):
    """Back up to `backup_dir` at each epoch's end (or every `save_freq` batches); at the start of fit, restore
    the last backup and start from the epoch after it. double_checkpoint keeps the previous backup too (used when
    the latest is unreadable); delete_checkpoint removes the folder when fit ends normally."""

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. Expected "
                             "either 'epoch' or an integer value.")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq, self.double_checkpoint, self.delete_checkpoint = save_freq, double_checkpoint, delete_checkpoint
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.npz")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._since_save, self._last_batch, self._current_epoch = 0, 0, 0

    def on_train_begin(self, logs=None):
        try:
            self._load()
        except (OSError, ValueError, KeyError):
            previous = self._weights_path + ".bkp"
            if not os.path.exists(previous):
                raise
            shutil.copy(previous, self._weights_path)
            if os.path.exists(self._metadata_path + ".bkp"):
                shutil.copy(self._metadata_path + ".bkp", self._metadata_path)
            elif os.path.exists(self._metadata_path):
                os.remove(self._metadata_path)
            self._load()

    def _load(self):
        model = self.model
        if not model.built:
            raise ValueError(f"To use the BackupAndRestore callback, you model must be built before you call `fit()`. "
                             f"Model {model} is unbuilt. You can build it beforehand by calling it on a batch of data.")
        if os.path.exists(self._weights_path):
            optimizer = model.optimizer
            optimizer.build_slots(model.trainable_variables)
            with np.load(self._weights_path) as data:
                model_values = [data[f"model{i}"] for i in range(int(data["n_model"]))]
                opt_values = [data[f"optimizer{i}"] for i in range(int(data["n_optimizer"]))]
            state = _optimizer_state(optimizer)
            if len(opt_values) != len(state):
                raise ValueError(f"The backup in {self.backup_dir} holds {len(opt_values)} optimizer variables, but "
                                 f"the model's optimizer has {len(state)}")
            model.set_weights(model_values)
            for v, value in zip(state, opt_values):
                v.assign(value)
        if os.path.exists(self._metadata_path):
            with open(self._metadata_path) as f:
                model._initial_epoch = json.load(f)["epoch"]

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch, self._last_batch = epoch + 1, 0
        if self.save_freq == "epoch":
            self._save()

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._since_save += batch + 1 if batch <= self._last_batch else batch - self._last_batch
        self._last_batch = batch
        if self._since_save >= self.save_freq:
            self._since_save = 0
            self._save()

    def _save(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for path in (self._weights_path, self._metadata_path):
                if os.path.exists(path):
                    shutil.copy(path, path + ".bkp")
        model_values = [v.numpy() for v in self.model.weights]
        opt_values = [v.numpy() for v in _optimizer_state(self.model.optimizer)]
        arrays = {f"model{i}": a for i, a in enumerate(model_values)}
        arrays.update({f"optimizer{i}": a for i, a in enumerate(opt_values)})
        partial = self._weights_path + ".partial"
        with open(partial, "wb") as f:  # written aside, then renamed: a kill mid-write leaves the last backup
            np.savez(f, n_model=len(model_values), n_optimizer=len(opt_values), **arrays)
        os.replace(partial, self._weights_path)
        with open(self._metadata_path, "w") as f:
            json.dump({"epoch": self._current_epoch, "batch": self._last_batch}, f)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
