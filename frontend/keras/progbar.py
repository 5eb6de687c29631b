"""The progress bar `fit`/`evaluate`/`predict` print (Keras's style) and the log line format."""
import sys
import time


def _format_value(value):
    if hasattr(value, "ndim") and value.ndim > 0:  # a vector metric (several thresholds): its values
        return "[" + " ".join(_format_value(float(v)) for v in value.ravel()) + "]"
    return f"{value:.4f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.4e}"


def format_logs(logs):
    """' - accuracy: 0.9123 - loss: 0.2345', in Keras's order (names sorted, validation ones after)."""
    keys = sorted(k for k in logs if not k.startswith("val_")) + sorted(k for k in logs if k.startswith("val_"))
    return "".join(f" - {k}: {_format_value(logs[k])}" for k in keys)


def _per_step(seconds):
    if seconds >= 1:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


class Progbar:
    """Keras's progress bar: redrawn in place on a terminal (verbose=1), else one line when the epoch ends;
    verbose=2 gives the one-line form always, verbose=0 nothing. `target` None: a step count of unknown length."""

    width = 20

    def __init__(self, target, verbose=1, stream=None):
        self.target, self.verbose = target, verbose
        self.stream = sys.stdout if stream is None else stream
        self.dynamic = verbose == 1 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self._last_draw = 0.0

    def _bar(self, current):
        done = self.width if self.target is None else int(self.width * current / max(self.target, 1))
        return "━" * done + " " * (self.width - done)

    def _line(self, current, logs, final):
        elapsed = time.perf_counter() - self.start
        per = _per_step(elapsed / max(current, 1))
        if self.target is None:  # a dataset of unknown length: Keras counts steps without a bar or ETA
            if self.verbose == 2:
                return f"{current}/Unknown - {elapsed:.0f}s - {per}{format_logs(logs)}"
            return f"{current:7d}/Unknown {elapsed:.0f}s {per}{format_logs(logs)}"
        if self.verbose == 2:
            return f"{current}/{self.target} - {elapsed:.0f}s - {per}{format_logs(logs)}"
        eta = elapsed if final else elapsed / max(current, 1) * (self.target - current)
        return f"{current}/{self.target} {self._bar(current)} {eta:.0f}s {per}{format_logs(logs)}"

    def update(self, current, logs):
        """Show progress after `current` steps (drawn at most 20 times a second on a terminal); `logs` is a dict
        or a callable giving one, called only when drawing."""
        if not self.dynamic:
            return
        now = time.perf_counter()
        if now - self._last_draw < 0.05 and (self.target is None or current < self.target):
            return
        self._last_draw = now
        logs = logs() if callable(logs) else logs
        self.stream.write("\r" + self._line(current, logs, False) + "\x1b[K")
        self.stream.flush()

    def finish(self, current, logs):
        """The epoch's final line; an unknown target becomes `current` (the length, now known) as in Keras."""
        if self.verbose == 0:
            return
        if self.target is None:
            self.target = current
        prefix = "\r" if self.dynamic else ""
        self.stream.write(prefix + self._line(current, logs, True) + ("\x1b[K" if self.dynamic else "") + "\n")
        self.stream.flush()
