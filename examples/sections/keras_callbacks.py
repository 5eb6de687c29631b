"""Keras callbacks: EarlyStopping, LearningRateScheduler and a custom Callback, run by fit between its compiled
steps (the scheduler sets the optimizer's learning-rate variable, which the compiled step reads: no retrace);
metrics such as AUC and Precision accumulate inside those steps."""
import numpy as np
from common import section

import tfn as tf

section("Keras callbacks: EarlyStopping, a learning-rate schedule and a custom Callback")

tf.random.set_seed(0)
rng = np.random.default_rng(1)
x = rng.normal(size=(400, 4)).astype(np.float32)
y = (x[:, 0] - 0.5 * x[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(np.float32)[:, None]

model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(8, activation="relu"),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="binary_crossentropy",
              metrics=["accuracy", "AUC", tf.keras.metrics.Precision(name="precision")])


class Report(tf.keras.callbacks.Callback):
    """A callback's code runs in Python between the compiled steps, never inside a trace."""

    def on_epoch_end(self, epoch, logs=None):
        print(f"epoch {epoch + 1}: lr {logs['learning_rate']:.4f}  loss {logs['loss']:.3f}  "
              f"val_loss {logs['val_loss']:.3f}  val_auc {logs['val_AUC']:.3f}")


callbacks = [
    tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 3 else lr * 0.5),
    Report(),  # after the scheduler: its logs hold the learning rate
    tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, min_delta=0.005, restore_best_weights=True),
]
history = model.fit(x[:300], y[:300], batch_size=50, epochs=30, validation_data=(x[300:], y[300:]),
                    callbacks=callbacks, verbose=0)
print("stopped after", len(history.epoch), "of 30 epochs; best epoch:", callbacks[2].best_epoch + 1)
logs = model.evaluate(x[300:], y[300:], verbose=0, return_dict=True)
print(f"restored weights: val_loss {logs['loss']:.3f} (best {callbacks[2].best:.3f}), "
      f"AUC {logs['AUC']:.3f}, precision {logs['precision']:.3f}")
