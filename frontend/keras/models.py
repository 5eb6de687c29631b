"""`Model` (subclassed models), `Sequential`, and training: compile / fit / evaluate / predict, one compiled step
per batch."""

import numpy as np

from tfn import random as tfn_random
from tfn.data import structure as data_structure
from tfn.data.dataset import INFINITE_CARDINALITY, Dataset
from tfn.distribute import strategy as distribute
from tfn.keras import losses as losses_mod
from tfn.keras import metrics as metrics_mod
from tfn.keras import optimizers as optimizers_mod
from tfn.keras._ops import tf
from tfn.keras.callback import CallbackList
from tfn.keras.layers import InputLayer, Layer
from tfn.tracing.polymorphic import function


class Model(Layer):
    """A Layer with training: subclass and define `call`, or use `Sequential`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.optimizer = self.loss = None
        self.compiled_metrics = []
        self.stop_training = False
        self._steps = {}
        self._strategy = distribute.get_strategy()  # made in a strategy's scope: fit trains data-parallel

    def build(self, input_shape):
        """Create every weight by running the model once on zeros of `input_shape` (None dims taken as 1)."""
        if self.built:
            return
        dims = [1 if d is None else int(d) for d in input_shape]
        if type(self).call is Layer.call:
            raise ValueError("You must override call() to build a subclassed Model")
        self.call(tf.zeros(dims))
        self.built = True
        self._build_shape = tuple(input_shape)

    def _build_on_first_call(self, input_shape):
        pass  # the first call itself builds the layers it reaches (no extra run on zeros inside a trace)

    # ---- training --------------------------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, run_eagerly=False, jit_compile=None):
        """Set the optimizer, the loss and the metrics; `run_eagerly=True` runs the steps without tfn.function."""
        self._compile_arguments = {"optimizer": optimizer, "loss": loss, "metrics": metrics}  # (Model.save keeps them)
        self.optimizer = optimizers_mod.get(optimizer)
        self.loss = losses_mod.get(loss) if loss is not None else None
        self.compiled_metrics = [metrics_mod.get(m, self.loss) for m in (metrics or [])]
        self._loss_tracker = metrics_mod.Mean(name="loss")
        self.run_eagerly = run_eagerly
        self._steps = {}

    @property
    def metrics(self):
        return [self._loss_tracker] + list(self.compiled_metrics) if self.loss is not None else []

    def compute_loss(self, y, y_pred):
        """The compiled loss, plus the losses the layers added (`add_loss`) in the call that gave y_pred."""
        loss = self.loss(y, y_pred)
        extra = self.losses
        return loss if not extra else loss + tf.add_n(extra)

    def train_step(self, x, y):
        """One optimisation step on a batch; the metrics accumulate its loss and predictions."""
        strategy = getattr(self, "_strategy", None)
        distributed = strategy is not None and strategy.num_replicas_in_sync > 1
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y, y_pred)
            if distributed:  # this replica's loss weighted by its rows: so are the gradients, at no extra pass
                rows = tf.shape(y_pred)[0]
                objective = strategy.weighted_loss(loss, rows)
        variables = self.trainable_variables
        grads = tape.gradient(objective if distributed else loss, variables)
        if distributed:
            # all-reduced inside this (compiled) step: the global batch's gradients and loss, on every replica
            grads, loss, rows = strategy.reduce_weighted_gradients(grads, loss, rows)
            self.optimizer.apply_gradients(zip(grads, variables))
            self._loss_tracker.update_state(loss, sample_weight=rows)
            for m in self.compiled_metrics:  # this replica's shard (Keras metrics are not synchronised here)
                m.update_state(y, y_pred)
            return loss
        self.optimizer.apply_gradients(zip(grads, variables))
        self._update_metrics(loss, y, y_pred)
        return loss

    def test_step(self, x, y):
        y_pred = self(x, training=False)
        loss = self.compute_loss(y, y_pred)
        self._update_metrics(loss, y, y_pred)
        return loss

    def predict_step(self, x):
        return self(x, training=False)

    def _update_metrics(self, loss, y, y_pred):
        n = tf.cast(tf.shape(y_pred)[0], "float32")
        self._loss_tracker.update_state(loss, sample_weight=n)  # loss is the batch mean: weight by batch size
        for m in self.compiled_metrics:
            m.update_state(y, y_pred)

    def _step(self, name):
        """The step method `name`, wrapped once in tfn.function (unless run_eagerly)."""
        if name not in self._steps:
            method = getattr(self, name)
            self._steps[name] = method if getattr(self, "run_eagerly", False) else function(method)
        return self._steps[name]

    def _logs(self, prefix=""):
        return {prefix + m.name: _log_value(m.result()) for m in self.metrics}

    def _reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def _require_compiled(self, what):
        if self.optimizer is None or self.loss is None:
            raise RuntimeError(f"You must call `compile()` before using the model for {what}.")

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_data=None,
            shuffle=True, initial_epoch=0, validation_batch_size=None):
        """Train for `epochs` passes over (x, y) in batches, or over a dataset of (x, y) batches; returns a History
        of the per-epoch logs. `callbacks` (keras.callbacks.Callback instances) are called between the compiled
        steps; one that sets `model.stop_training` stops fit after the batch, or the epoch, it was set in."""
        self._require_compiled("training")
        check_dataset_args(x, y, batch_size)
        verbose = 1 if verbose == "auto" else verbose
        strategy = getattr(self, "_strategy", None)
        args = (x, y, batch_size, epochs, verbose, callbacks, validation_data, shuffle, initial_epoch,
                validation_batch_size)
        if strategy is not None:
            with strategy.scope():
                return self._fit(*args, strategy)
        return self._fit(*args, None)

    def _callback_list(self, callbacks, verbose, epochs, steps, history):
        if isinstance(callbacks, CallbackList):
            return callbacks
        return CallbackList(callbacks, add_history=history, add_progbar=verbose != 0, model=self, verbose=verbose,
                            epochs=epochs, steps=steps)

    def _fit(self, x, y, batch_size, epochs, verbose, callbacks, validation_data, shuffle, initial_epoch,
             validation_batch_size, strategy):
        step = self._step("train_step")
        # steps None: a dataset of unknown length, learnt by the first epoch
        callbacks = self._callback_list(callbacks, verbose, epochs, num_batches(x, batch_size), True)
        batch_hooks = callbacks.has_batch_hooks("train")
        self.stop_training = False
        callbacks.on_train_begin()
        # a callback (BackupAndRestore) may resume from a later epoch
        initial_epoch, self._initial_epoch = getattr(self, "_initial_epoch", None) or initial_epoch, None
        training_logs = None
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for batch, (xb, yb) in enumerate(batches(x, y, batch_size, shuffle, strategy=strategy)):
                if batch_hooks:
                    callbacks.on_train_batch_begin(batch)
                if strategy is not None:
                    with strategy.watching("the train step"):
                        step(xb, yb)
                else:
                    step(xb, yb)
                if batch_hooks:  # the logs (eager reads) only if a callback other than the bar wants them
                    callbacks.on_train_batch_end(batch, self._logs)
                if self.stop_training:
                    break
            logs = self._logs()
            if validation_data is not None:
                val_logs = self._validation_logs(validation_data, validation_batch_size or batch_size, callbacks)
                logs.update({"val_" + k: v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, logs)
            training_logs = logs
            if self.stop_training:
                break
        callbacks.on_train_end(training_logs)
        return self.history

    def _validation_logs(self, data, batch_size, callbacks):
        if isinstance(data, Dataset):
            return self._test_loop(data, None, None, callbacks)
        vx, vy = data[:2]
        return self._test_loop(vx, vy, batch_size, callbacks)

    def _test_loop(self, x, y, batch_size, callbacks):
        """The logs over all batches of (x, y), calling the callbacks' test hooks."""
        self._reset_metrics()
        step, batch_hooks = self._step("test_step"), callbacks.has_batch_hooks("test")
        callbacks.on_test_begin()
        for batch, (xb, yb) in enumerate(batches(x, y, batch_size, False)):
            if batch_hooks:
                callbacks.on_test_batch_begin(batch)
            step(xb, yb)
            if batch_hooks:
                callbacks.on_test_batch_end(batch, self._logs)
        logs = self._logs()
        callbacks.on_test_end(logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, callbacks=None):
        """The loss (and metrics) over (x, y) or a dataset of (x, y) batches: a scalar, or [loss, *metrics], or a
        dict with return_dict. `callbacks` get on_test_begin/end and on_test_batch_begin/end."""
        self._require_compiled("evaluation")
        check_dataset_args(x, y, batch_size)
        verbose = 1 if verbose == "auto" else verbose
        callbacks = self._callback_list(callbacks, verbose, 1, num_batches(x, batch_size), False)
        logs = self._test_loop(x, y, batch_size, callbacks)
        if return_dict:
            return logs
        values = [logs[m.name] for m in self.metrics]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0, callbacks=None):
        """The model's outputs (training=False) for x, or for a dataset of x batches (of (x, ...) tuples: x),
        batch by batch, as one NumPy array. `callbacks` get on_predict_begin/end and on_predict_batch_begin/end
        (logs {'outputs': the batch's outputs})."""
        check_dataset_args(x, None, batch_size)
        verbose = 1 if verbose == "auto" else verbose
        step = self._step("predict_step")
        callbacks = self._callback_list(callbacks, verbose, 1, num_batches(x, batch_size), False)
        batch_hooks = callbacks.has_batch_hooks("predict")
        callbacks.on_predict_begin()
        outputs = []
        for batch, (xb, _) in enumerate(batches(x, None, batch_size, False, targets=False)):
            if batch_hooks:
                callbacks.on_predict_batch_begin(batch)
            outputs.append(np.asarray(step(xb)))
            if batch_hooks:
                callbacks.on_predict_batch_end(batch, {"outputs": outputs[-1]})
        callbacks.on_predict_end()
        return np.concatenate(outputs)

    # ---- weights and summary ---------------------------------------------------------------------------------
    def save_weights(self, filepath):
        """All weights, in `weights` order, to an .npz file."""
        with open(filepath, "wb") as f:
            np.savez(f, **{f"w{i}": v.numpy() for i, v in enumerate(self.weights)})

    def load_weights(self, filepath):
        """Weights saved by save_weights (the model must be built with the same architecture)."""
        with np.load(filepath) as data:
            values = [data[f"w{i}"] for i in range(len(data.files))]
        self.set_weights(values)

    def summary(self, print_fn=None):
        """TF's table of layers, output shapes and parameter counts."""
        (print_fn or print)(summary_text(self))


class Sequential(Model):
    """A stack of layers, each called on the previous one's output."""

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._layers = []
        self._input_shape = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if isinstance(layer, InputLayer):
            self._input_shape = layer.shape
            self.build(layer.shape)
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Only instances of `keras.Layer` can be added to a Sequential model. Received: {layer}")
        self._layers.append(layer)
        self._tracked.append(layer)
        if self._input_shape is None and layer._input_shape_arg is not None:
            self._input_shape = layer._input_shape_arg
        if self._input_shape is not None:
            self.built = False
            self.build(self._input_shape)

    def pop(self):
        layer = self._layers.pop()
        self._tracked.remove(layer)
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def build(self, input_shape=None):
        input_shape = self._input_shape if input_shape is None else tuple(input_shape)
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        self._input_shape = input_shape
        if self._layers:
            self.call(tf.zeros([1 if d is None else int(d) for d in input_shape]))
            self.built = True

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._layers:
            x = layer(x, training=training)
        return x


def _log_value(value):
    """A metric's result as logs hold it: a float, or a NumPy array for a vector (several thresholds)."""
    value = np.asarray(value)
    return float(value) if value.ndim == 0 else value


def num_rows(x):
    return len(x[0]) if isinstance(x, (list, tuple)) else len(x)


def _check_rows(x, y):
    """The number of samples of the arrays x and y (a list or tuple: several inputs), Keras's ValueError when one is
    not an array of samples or their first dims differ (rows past the shortest array were an IndexError)."""
    sizes = {}
    for name, value in (("x", x), ("y", y)):
        if value is None:
            continue
        for a in (value if isinstance(value, (list, tuple)) else [value]):
            shape = np.shape(a)
            if not shape or isinstance(a, (str, bytes)):
                raise ValueError(f"Unrecognized data type: {name}={value!r} (of type {type(value)}): expected "
                                 "arrays or tensors with the samples along their first dimension")
            sizes.setdefault(name, []).append(shape[0])
    if len({n for ns in sizes.values() for n in ns}) > 1:
        raise ValueError("Data cardinality is ambiguous. Make sure all arrays contain the same number of samples. "
                         + " ".join(f"'{k}' sizes: {', '.join(map(str, v))}" for k, v in sizes.items()))
    return sizes["x"][0]


def num_batches(x, batch_size):
    """The number of batches of an epoch; None for a dataset of unknown or infinite length."""
    if isinstance(x, Dataset):
        n = x._cardinality()
        return n if n >= 0 else None
    return -(-num_rows(x) // (batch_size or 32))


def check_dataset_args(x, y, batch_size):
    """Keras's errors for arguments a dataset makes meaningless: its elements are the batches and hold the targets."""
    if not isinstance(x, Dataset):
        return
    if y is not None:
        raise ValueError("When providing `x` as a tfn.data.Dataset, `y` should not be passed. Instead, the targets "
                         "should be included as part of the tfn.data.Dataset.")
    if batch_size is not None:
        raise ValueError(f"The `batch_size` argument must not be specified for the given input type: a dataset is "
                         f"already batched. Received input: {x!r}, batch_size: {batch_size}")
    if x._cardinality() == INFINITE_CARDINALITY:
        raise ValueError(f"The dataset {x!r} repeats forever, so an epoch over it never ends; bound it with "
                         "`.take(steps)` (steps_per_epoch is not supported)")


def batches(x, y, batch_size, shuffle, targets=True, strategy=None):
    """(x, y) batches of `batch_size` rows (32 by default; the last may be smaller), shuffled by the seeded NumPy
    generator when asked; for a dataset x, its elements in order (batch_size and shuffle do not apply). The one
    place fit/evaluate/predict read data from (y may be None; `targets=False`: only x is needed)."""
    if strategy is not None and strategy.num_replicas_in_sync > 1:  # this replica's shard of each global batch
        for xb, yb in _global_batches(x, y, batch_size, shuffle, targets, strategy):
            yield strategy.shard((xb, yb)) if yb is not None else (strategy.shard(xb), None)
        return
    yield from _global_batches(x, y, batch_size, shuffle, targets, None)


def _global_batches(x, y, batch_size, shuffle, targets, strategy):
    if isinstance(x, Dataset):
        yield from dataset_batches(x, targets)
        return
    n, size = _check_rows(x, y), batch_size or 32
    order = tfn_random.numpy_generator().permutation(n) if shuffle else np.arange(n)
    if strategy is not None:
        order = strategy.broadcast_order(order)  # every replica walks the same global batches
    xs = np.asarray(x)
    ys = None if y is None else np.asarray(y)
    for start in range(0, n, size):
        rows = order[start:start + size]
        yield xs[rows], (None if ys is None else ys[rows])


def dataset_batches(ds, targets):
    """(x, y) of each element of a dataset of (x, y) tuples, as NumPy arrays; with `targets=False` (predict) an
    element may also be x alone or (x, ...), as Keras unpacks it (y then None)."""
    ds._check_eager("fit/evaluate/predict")
    spec = ds.element_spec
    is_tuple = isinstance(spec, tuple)
    if targets and not (is_tuple and len(spec) == 2):
        raise ValueError(f"A dataset given to fit/evaluate must have (x, y) elements (inputs and targets), but its "
                         f"element spec is {spec!r}")
    for flat in ds._gen():
        element = data_structure.pack_numpy(spec, flat)
        if targets:
            yield element
        else:
            yield (element[0] if is_tuple else element), None


def _shape_text(layer):
    shape = getattr(layer, "_output_shape", None)
    return "?" if shape is None else "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _size_text(n_params):
    n = n_params * 4
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.2f} B"


def summary_text(model):
    """Keras's summary table (the column widths of an 80-character line)."""
    widths = (33, 24, 15)

    def row(cells, sep, right=(False, False, True)):
        parts = [(f" {c}".rjust(w - 1) if r else f" {c}".ljust(w - 1)) + " " for c, w, r in zip(cells, widths, right)]
        return sep + sep.join(p[:w] for p, w in zip(parts, widths)) + sep

    def rule(left, mid, right, ch):
        return left + mid.join(ch * w for w in widths) + right

    lines = [f'Model: "{model.name}"', rule("┏", "┳", "┓", "━"),
             row(("Layer (type)", "Output Shape", "Param #"), "┃"), rule("┡", "╇", "┩", "━")]
    layers = model.layers
    for i, layer in enumerate(layers):
        lines.append(row((f"{layer.name} ({type(layer).__name__})", _shape_text(layer),
                          f"{layer.count_params():,}"), "│"))
        if i + 1 < len(layers):
            lines.append(rule("├", "┼", "┤", "─"))
    lines.append(rule("└", "┴", "┘", "─"))
    total = model.count_params()
    trainable = int(sum(int(np.prod(v.shape)) for v in model.trainable_weights))
    lines += [f" Total params: {total:,} ({_size_text(total)})",
              f" Trainable params: {trainable:,} ({_size_text(trainable)})",
              f" Non-trainable params: {total - trainable:,} ({_size_text(total - trainable)})"]
    return "\n".join(lines)
