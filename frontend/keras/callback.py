"""`Callback` (the hooks fit/evaluate/predict call between compiled steps), `CallbackList` (calls them in order),
`History`, `ProgbarLogger` and `LambdaCallback`.

Every hook runs in Python, outside any trace: a callback may read or set weights, the optimizer's learning rate
(a variable the compiled step reads, so setting it never retraces) or `model.stop_training`."""
from tfn.keras.progbar import Progbar

HOOKS = ("on_batch_begin", "on_batch_end", "on_epoch_begin", "on_epoch_end",
         "on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin", "on_test_batch_end",
         "on_predict_batch_begin", "on_predict_batch_end", "on_train_begin", "on_train_end",
         "on_test_begin", "on_test_end", "on_predict_begin", "on_predict_end")


class Callback:
    """Base class: override the hooks you need. `self.model` is the model being trained, evaluated or run;
    `self.params` holds {'verbose', 'epochs', 'steps'}. Each hook gets a `logs` dict: per batch the running
    metric values, at an epoch's end the epoch's (validation ones prefixed `val_`)."""

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """A training batch begins (what on_train_batch_begin calls unless overridden)."""

    def on_batch_end(self, batch, logs=None):
        """A training batch ended (what on_train_batch_end calls unless overridden)."""

    def on_epoch_begin(self, epoch, logs=None):
        """An epoch of fit begins (`epoch` counts from 0)."""

    def on_epoch_end(self, epoch, logs=None):
        """An epoch of fit ended: `logs` holds its metrics and, with validation data, the `val_` ones."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """A batch of evaluate (or of fit's validation) begins."""

    def on_test_batch_end(self, batch, logs=None):
        """A batch of evaluate (or of fit's validation) ended."""

    def on_predict_batch_begin(self, batch, logs=None):
        """A batch of predict begins."""

    def on_predict_batch_end(self, batch, logs=None):
        """A batch of predict ended: logs['outputs'] holds its outputs."""

    def on_train_begin(self, logs=None):
        """fit begins."""

    def on_train_end(self, logs=None):
        """fit ended: `logs` holds the last epoch's."""

    def on_test_begin(self, logs=None):
        """evaluate (or fit's validation) begins."""

    def on_test_end(self, logs=None):
        """evaluate (or fit's validation) ended."""

    def on_predict_begin(self, logs=None):
        """predict begins."""

    def on_predict_end(self, logs=None):
        """predict ended."""


def overrides(callback, hook):
    """Whether `callback` does something at `hook` (a subclass method or a LambdaCallback's function)."""
    if hook in vars(callback):
        return True
    method = getattr(type(callback), hook, None)
    if method is None or method is not getattr(Callback, hook):
        return True
    if hook in ("on_train_batch_begin", "on_train_batch_end"):  # the defaults call on_batch_begin/end
        return overrides(callback, hook.replace("train_", ""))
    return False


class CallbackList(Callback):
    """Calls each hook of every callback in order; with add_history/add_progbar, appends a History and a
    ProgbarLogger (unless given) as Keras does, so user callbacks see, and may add to, the logs first."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        callbacks = [] if callbacks is None else callbacks
        if isinstance(callbacks, Callback):
            callbacks = [callbacks]
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"Each callback must be an instance of `keras.callbacks.Callback`. "
                                f"Received: {cb!r} of type {type(cb).__name__}")
        self._history = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        self._progbar = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        self.set_model(model)
        self.set_params(params)

    def set_params(self, params):
        self.params = params
        if params:
            for cb in self.callbacks:
                cb.set_params(params)

    def set_model(self, model):
        if model is None:
            return
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def has_batch_hooks(self, mode):
        """Whether any callback acts on `mode`'s ('train', 'test', 'predict') batches: if none does, the loop
        skips the calls and never reads the metrics per batch."""
        names = (f"on_{mode}_batch_begin", f"on_{mode}_batch_end")
        return any(overrides(cb, n) for cb in self.callbacks for n in names)

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def _call_batch(self, hook, batch, logs):
        """`logs` may be a function giving the dict: called once, and only if a callback other than the
        progress bar (which reads it only when it redraws) acts on this hook."""
        resolved = None if callable(logs) else (logs if logs is not None else {})
        for cb in self.callbacks:
            if not overrides(cb, hook):
                continue
            if resolved is None and not getattr(cb, "lazy_logs", False):
                resolved = logs()
            getattr(cb, hook)(batch, resolved if resolved is not None else logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch("on_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch("on_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch("on_predict_batch_end", batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, {} if logs is None else logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, {} if logs is None else logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", {} if logs is None else logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", {} if logs is None else logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", {} if logs is None else logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", {} if logs is None else logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", {} if logs is None else logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", {} if logs is None else logs)

    def __iter__(self):
        return iter(self.callbacks)


class History(Callback):
    """`history.history`: each logged quantity's per-epoch values; `history.epoch`: the epoch numbers. fit adds
    one to its callbacks and returns it (also `model.history`)."""

    def __init__(self):
        super().__init__()
        self.history, self.epoch = {}, []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints fit's 'Epoch i/N' and progress bar per epoch, evaluate's and predict's bar (verbose from params)."""

    lazy_logs = True  # batch logs may come as a function: read only when the bar is redrawn

    def __init__(self):
        super().__init__()
        self.verbose, self.epochs, self.target = 1, 1, None
        self.bar, self.seen, self._in_fit = None, 0, False

    def set_params(self, params):
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs, self.target = params.get("epochs", 1), params.get("steps")

    def _start(self):
        self.bar, self.seen = Progbar(self.target, self.verbose), 0

    def _update(self, batch, logs):
        if self.bar is None:
            self._start()
        self.seen = batch + 1
        self.bar.update(self.seen, logs if logs is not None else {})

    def _finish(self, logs):
        if self.bar is None:
            self._start()
        if self.target is None:
            self.target = self.seen  # an unknown length, learnt by the first pass
        self.bar.finish(self.seen, logs or {})
        self.bar = None

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)
        self._start()

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        if not self._in_fit:
            self._start()

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._finish(logs)

    def on_predict_begin(self, logs=None):
        self._start()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, {})

    def on_predict_end(self, logs=None):
        self._finish({})


class LambdaCallback(Callback):
    """A callback made of functions: on_epoch_begin/on_epoch_end(epoch, logs), on_train_batch_begin/end and
    on_batch_begin/end(batch, logs), on_train_begin/on_train_end(logs), and any other hook by keyword."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in given.items():
            if fn is None:
                continue
            if name in HOOKS and not callable(fn):
                raise TypeError(f"LambdaCallback's `{name}` must be callable. Received: {fn!r}")
            setattr(self, name, fn)
