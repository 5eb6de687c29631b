"""Keras optimizers: slot variables are made lazily by the first `apply_gradients` (as Keras does), so the first
call inside a tfn.function creates them and a second function reaching a fresh optimizer raises TF's ValueError."""
from types import SimpleNamespace

import numpy as np

from tfn.keras import config
from tfn.keras._ops import tf
from tfn.state.variables import Variable, init_scope


class LearningRateSchedule:
    """A learning rate that is a function of the step (`schedule(step) -> scalar`)."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} does not define __call__(step)")


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps) (the exponent floored when staircase)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase = decay_rate, staircase

    def __call__(self, step):
        p = tf.cast(step, "float32") / float(self.decay_steps)
        if self.staircase:
            p = tf.math.floordiv(p, 1.0)
        return self.initial_learning_rate * tf.pow(tf.constant(np.float32(self.decay_rate)), p)


class Optimizer:
    """Base: `apply_gradients(zip(grads, vars))` clips, builds slots on first use, runs `update_step` per pair."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        config.record_init(cls)  # get_config returns the arguments an object was made with

    def get_config(self):
        """The arguments this was made with, by name (frontend/keras/config.py)."""
        return config.object_config(self)


    def __init__(self, learning_rate=0.001, weight_decay=None, clipnorm=None, global_clipnorm=None, name=None):
        if clipnorm is not None and global_clipnorm is not None:
            raise ValueError("Only one of `clipnorm` and `global_clipnorm` can be set.")
        self.name = name or type(self).__name__.lower()
        self.weight_decay, self.clipnorm, self.global_clipnorm = weight_decay, clipnorm, global_clipnorm
        self._schedule = learning_rate if isinstance(learning_rate, LearningRateSchedule) else None
        with init_scope():  # made with the optimizer, outside any function (Keras does the same)
            self.iterations = Variable(np.int64(0), trainable=False, name=f"{self.name}/iteration")
            self._learning_rate = None if self._schedule else Variable(
                np.float32(learning_rate), trainable=False, name=f"{self.name}/learning_rate")
        self._slots = {}  # id(variable) -> {slot name: Variable}
        self.built = False

    @property
    def learning_rate(self):
        """The current learning rate (the schedule's value at `iterations` when it is a schedule)."""
        return self._schedule(self.iterations) if self._schedule else self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if self._schedule:
            raise TypeError("This optimizer was created with a `LearningRateSchedule`; its learning rate can't be set")
        self._learning_rate.assign(np.float32(value))

    def add_variable_from_reference(self, variable, name, initial=0.0):
        """A zero-initialised slot of `variable`'s shape; inside a function this obeys the singleton rule."""
        slot = Variable(np.full(tuple(variable.shape), initial, variable.dtype.np), trainable=False,
                        name=f"{self.name}/{name}")
        self._slots.setdefault(id(variable), {})[name] = slot
        return slot

    def build(self, var_list):
        """Create the slot variables of each variable (none for the base class)."""
        self.built = True

    def slot(self, variable, name):
        return self._slots[id(variable)][name]

    @property
    def variables(self):
        return [self.iterations] + [s for slots in self._slots.values() for s in slots.values()]

    def build_slots(self, variables):
        """Make the slots of the variables that have none yet (what the first apply_gradients does; a checkpoint or
        a saved model restores into them before it)."""
        new = [v for v in variables if id(v) not in self._slots]
        if new or not self.built:
            self.build(new)
            for v in new:
                self._slots.setdefault(id(v), {})
            self.built = True

    def apply_gradients(self, grads_and_vars):
        """Apply one step of the update rule to each (gradient, variable) pair (None gradients are skipped)."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        self.build_slots([v for _, v in pairs])
        grads = self._clip([tf.convert_to_tensor(g) for g, _ in pairs])
        lr = tf.cast(self.learning_rate, "float32")
        for g, v in zip(grads, [v for _, v in pairs]):
            lr_v = tf.cast(lr, v.dtype)
            if self.weight_decay:
                v.assign_sub(v * (lr_v * self.weight_decay))
            self.update_step(tf.cast(g, v.dtype), v, lr_v)
            if getattr(v, "constraint", None) is not None:
                v.assign(v.constraint(v))
        self.iterations.assign_add(np.int64(1))
        return self.iterations

    def _clip(self, grads):
        if self.clipnorm is not None:
            return [g * (self.clipnorm / tf.maximum(tf.sqrt(tf.reduce_sum(g * g)), self.clipnorm)) for g in grads]
        if self.global_clipnorm is not None and grads:
            norm = tf.sqrt(sum(tf.reduce_sum(g * g) for g in grads))
            factor = self.global_clipnorm / tf.maximum(norm, self.global_clipnorm)
            return [g * factor for g in grads]
        return grads

    def update_step(self, gradient, variable, learning_rate):
        raise NotImplementedError(f"{type(self).__name__} does not define update_step")

    def minimize(self, loss, var_list, tape=None):
        """One step on `loss` (a tensor computed under `tape`, or a zero-argument callable)."""
        if tape is None:
            with tf.GradientTape() as tape:
                value = loss()
        else:
            value = loss
        self.apply_gradients(zip(tape.gradient(value, var_list), var_list))


class SGD(Optimizer):
    """v -= lr g; with momentum m = momentum m - lr g, v += m (Nesterov: v += momentum m - lr g)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum, self.nesterov = float(momentum), nesterov

    def build(self, var_list):
        if self.momentum:
            for v in var_list:
                self.add_variable_from_reference(v, "momentum")
        self.built = True

    def update_step(self, g, v, lr):
        if not self.momentum:
            v.assign_sub(lr * g)
            return
        m = self.slot(v, "momentum")
        m.assign(m * self.momentum - lr * g)
        if self.nesterov:
            v.assign_add(m * self.momentum - lr * g)
        else:
            v.assign_add(m)


class Adam(Optimizer):
    """Kingma & Ba: m, v moving moments; v -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad

    def build(self, var_list):
        for v in var_list:
            self.add_variable_from_reference(v, "m")
            self.add_variable_from_reference(v, "v")
            if self.amsgrad:
                self.add_variable_from_reference(v, "vhat")
        self.built = True

    def update_step(self, g, var, lr):
        t = tf.cast(self.iterations + 1, var.dtype)
        b1, b2 = tf.constant(np.float32(self.beta_1)), tf.constant(np.float32(self.beta_2))
        alpha = lr * tf.sqrt(1.0 - tf.pow(b2, t)) / (1.0 - tf.pow(b1, t))
        m, v = self.slot(var, "m"), self.slot(var, "v")
        m.assign_add((g - m) * (1.0 - self.beta_1))
        v.assign_add((tf.square(g) - v) * (1.0 - self.beta_2))
        denom = v
        if self.amsgrad:
            vhat = self.slot(var, "vhat")
            vhat.assign(tf.maximum(vhat, v))
            denom = vhat
        var.assign_sub(alpha * m / (tf.sqrt(denom) + self.epsilon))


class AdamW(Adam):
    """Adam with decoupled weight decay: v -= lr * weight_decay * v before each Adam step."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay=weight_decay, **kwargs)


class RMSprop(Optimizer):
    """ms = rho ms + (1 - rho) g^2; v -= lr g / sqrt(ms + eps) (centered: ms - mg^2; momentum as Keras)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def build(self, var_list):
        for v in var_list:
            self.add_variable_from_reference(v, "velocity")
            if self.momentum:
                self.add_variable_from_reference(v, "momentum")
            if self.centered:
                self.add_variable_from_reference(v, "average_gradient")
        self.built = True

    def update_step(self, g, var, lr):
        ms = self.slot(var, "velocity")
        ms.assign(ms * self.rho + tf.square(g) * (1.0 - self.rho))
        denom = ms
        if self.centered:
            mg = self.slot(var, "average_gradient")
            mg.assign(mg * self.rho + g * (1.0 - self.rho))
            denom = ms - tf.square(mg)
        increment = lr * g / tf.sqrt(denom + self.epsilon)
        if self.momentum:
            mom = self.slot(var, "momentum")
            mom.assign(mom * self.momentum + increment)
            increment = mom
        var.assign_sub(increment)


_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop}


def get(identifier):
    """An optimizer from a name ('adam', 'sgd', 'rmsprop', 'adamw') or an Optimizer."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


schedules = SimpleNamespace(ExponentialDecay=ExponentialDecay, LearningRateSchedule=LearningRateSchedule)
