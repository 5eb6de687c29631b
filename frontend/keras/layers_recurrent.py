"""Keras's recurrent layers SimpleRNN, LSTM and GRU on (batch, steps, features) inputs: return_sequences,
return_state, go_backwards, initial_state, dropout and recurrent_dropout (training only).

The recurrence is unrolled over the (static) time steps when the layer is called, as Keras's `unroll=True`: each
step is a few matmuls and elementwise ops, so the whole sequence traces into one compiled function whose gradients
are ordinary ones. (A tfn.while_loop would keep long sequences' programs small, but gradients through
tensor-dependent loops are not supported in compiled code yet.) The input projection of all steps is one matmul."""
import numpy as np

from tfn.keras import activations, initializers
from tfn.keras._ops import tf
from tfn.keras.layers import Layer
from tfn.keras.layers_reshape import check_ndim


def _rate(value, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{name}`. Expected a float value between 0 and 1. "
                         f"Received: {name}={value}")
    return float(value)


class _RNN(Layer):
    gates = 1  # blocks of `units` columns in the kernels
    n_states = 1

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, got "
                             f"{units}.")
        if stateful:
            raise ValueError(f"{type(self).__name__}(stateful=True) is not supported by tfn.keras: pass the last "
                             f"states back as `initial_state` instead")
        self.units = units
        self.activation, self.activation_arg = activations.get(activation), activation
        self.use_bias = use_bias
        self.kernel_initializer, self.recurrent_initializer = kernel_initializer, recurrent_initializer
        self.bias_initializer = bias_initializer
        self.dropout, self.recurrent_dropout = _rate(dropout, "dropout"), _rate(recurrent_dropout,
                                                                                  "recurrent_dropout")
        self.return_sequences, self.return_state, self.go_backwards = return_sequences, return_state, go_backwards
        self.unroll, self.seed = unroll, seed

    def build(self, input_shape):
        check_ndim(self, input_shape, 3)
        if input_shape[-1] is None:
            raise ValueError(f"The last dimension of the inputs to {type(self).__name__} should be defined. Found "
                             f"None. Full input shape received: {tuple(input_shape)}")
        width = self.gates * self.units
        self.kernel = self.add_weight((input_shape[-1], width), self.kernel_initializer, name="kernel")
        self.recurrent_kernel = self.add_weight((self.units, width), self.recurrent_initializer,
                                                name="recurrent_kernel")
        self.bias = self.add_weight(self._bias_shape(), self._bias_initializer(), name="bias") \
            if self.use_bias else None
        self.built = True

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def call(self, inputs, initial_state=None, training=False):
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError(f"{type(self).__name__} in tfn.keras unrolls the recurrence, so it needs a static number "
                             f"of time steps; received input shape {tuple(inputs.shape)}")
        batch = tf.shape(inputs)[0]
        states = self._initial_states(initial_state, batch)
        x = inputs if inputs.dtype.is_floating else tf.cast(inputs, "float32")
        if training and 0 < self.dropout < 1:  # one mask per sequence, shared by every step (as Keras)
            mask = tf.nn.dropout(tf.ones(tf.stack([batch, x.shape[-1]])), self.dropout, seed=self.seed)
            x = x * tf.expand_dims(mask, 1)
        rec_mask = None
        if training and 0 < self.recurrent_dropout < 1:
            rec_mask = tf.nn.dropout(tf.ones(tf.stack([batch, self.units])), self.recurrent_dropout, seed=self.seed)
        projected = tf.reshape(tf.matmul(tf.reshape(x, [-1, x.shape[-1]]), self.kernel),
                               tf.stack([batch, steps, self.gates * self.units]))
        if self.bias is not None:
            projected = projected + self._input_bias()
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs = []
        for t in order:
            states = self._step(projected[:, t], states, rec_mask)
            outputs.append(states[0])
        output = tf.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [output, *states] if self.return_state else output

    def _initial_states(self, initial_state, batch):
        if initial_state is None:
            zeros = tf.zeros(tf.stack([batch, self.units]))
            return [zeros] * self.n_states
        given = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if len(given) != self.n_states:
            raise ValueError(f"An initial_state was passed that is not compatible with the cell's state size: "
                             f"{type(self).__name__} expects {self.n_states} state tensor(s) of shape (batch, "
                             f"{self.units}), received {len(given)}")
        out = []
        for s in given:
            s = tf.cast(tf.convert_to_tensor(s), "float32")
            if len(s.shape) != 2 or s.shape[-1] != self.units:
                raise ValueError(f"Each initial state of {type(self).__name__} must have shape (batch, {self.units}); "
                                 f"received {tuple(s.shape)}")
            out.append(s)
        return out

    def _input_bias(self):
        return self.bias

    def _recurrent(self, h, rec_mask):
        return h if rec_mask is None else h * rec_mask

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": self.activation_arg,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "recurrent_initializer": self.recurrent_initializer, "bias_initializer": self.bias_initializer,
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "unroll": self.unroll, "seed": self.seed}


class SimpleRNN(_RNN):
    """h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)."""

    def _step(self, xw, states, rec_mask):
        return [self.activation(xw + tf.matmul(self._recurrent(states[0], rec_mask), self.recurrent_kernel))]


class LSTM(_RNN):
    """Gates i, f, c, o (Keras's column order): c_t = f * c_{t-1} + i * activation(candidate),
    h_t = o * activation(c_t); states [h, c]. unit_forget_bias starts the forget gate's bias at one."""
    gates, n_states = 4, 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.recurrent_activation_arg = recurrent_activation
        self.unit_forget_bias = unit_forget_bias

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        def init(shape, dtype="float32"):
            base = initializers.get(self.bias_initializer)
            u = self.units
            return np.concatenate([base((u,), dtype), np.ones((u,), dtype), base((2 * u,), dtype)])
        return init

    def _step(self, xw, states, rec_mask):
        h, c = states
        z = xw + tf.matmul(self._recurrent(h, rec_mask), self.recurrent_kernel)
        i, f, g, o = tf.split(z, 4, axis=-1)
        c = self.recurrent_activation(f) * c + self.recurrent_activation(i) * self.activation(g)
        return [self.recurrent_activation(o) * self.activation(c), c]

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": self.recurrent_activation_arg,
                "unit_forget_bias": self.unit_forget_bias}


class GRU(_RNN):
    """Gates z, r and the candidate (Keras's column order): h_t = z * h_{t-1} + (1 - z) * candidate. With
    reset_after=True (Keras's default) the bias is (2, 3 * units), input and recurrent rows, and the reset gate
    multiplies the recurrent projection; with reset_after=False it multiplies h_{t-1} before it."""
    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", reset_after=True, **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.recurrent_activation_arg = recurrent_activation
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self):
        return self.bias[0] if self.reset_after else self.bias

    def _step(self, xw, states, rec_mask):
        h = states[0]
        hr = self._recurrent(h, rec_mask)
        x_z, x_r, x_h = tf.split(xw, 3, axis=-1)
        u = self.units
        if self.reset_after:
            inner = tf.matmul(hr, self.recurrent_kernel)
            if self.bias is not None:
                inner = inner + self.bias[1]
            r_z, r_r, r_h = tf.split(inner, 3, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            candidate = self.activation(x_h + r * r_h)
        else:
            r_z, r_r = tf.split(tf.matmul(hr, self.recurrent_kernel[:, :2 * u]), 2, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            candidate = self.activation(x_h + tf.matmul(r * hr, self.recurrent_kernel[:, 2 * u:]))
        return [z * h + (1 - z) * candidate]

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": self.recurrent_activation_arg,
                "reset_after": self.reset_after}
