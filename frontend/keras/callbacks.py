"""`tfn.keras.callbacks`: the Callback base and Keras's callbacks, which fit/evaluate/predict call between their
compiled steps (callback.py, monitor_callbacks.py, epoch_callbacks.py,
backup_and_restore.py), and the progress bar (progbar.py)."""
from tfn.keras.backup_and_restore import BackupAndRestore  # noqa: F401
from tfn.keras.callback import Callback, CallbackList, History, LambdaCallback, ProgbarLogger  # noqa: F401
from tfn.keras.epoch_callbacks import CSVLogger, LearningRateScheduler, TerminateOnNaN  # noqa: F401
from tfn.keras.monitor_callbacks import EarlyStopping, ModelCheckpoint, ReduceLROnPlateau  # noqa: F401
from tfn.keras.progbar import Progbar, format_logs  # noqa: F401
from tfn.keras.tensorboard import TensorBoard  # noqa: F401
