"""Keras's layer wrappers: Bidirectional (a recurrent layer run forwards and, as a copy made from its config with
go_backwards flipped, backwards; the two outputs merged) and TimeDistributed (a layer applied to every time step, as
one call on the steps folded into the batch)."""
from tfn.keras import layers as layers_mod
from tfn.keras._ops import tf
from tfn.keras.layers import Layer

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def serialize(layer):
    """{"class_name", "config"} of a layer (Keras's serialized form)."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize(config):
    """A new layer from `serialize`'s dictionary (a class of tfn.keras.layers), or the layer itself if given one."""
    if isinstance(config, Layer):
        return config
    cls = getattr(layers_mod, config.get("class_name", ""), None) if isinstance(config, dict) else None
    if not (isinstance(cls, type) and issubclass(cls, Layer)):
        raise ValueError(f"Could not deserialize a layer from {config!r}: expected a tfn.keras.layers class name")
    return cls.from_config(dict(config["config"]))


def _strip(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


class Bidirectional(Layer):
    """`layer` (a SimpleRNN, LSTM or GRU) over the sequence forwards, and a copy over it backwards (its sequence
    output flipped back into time order); merge_mode 'concat' (default), 'sum', 'ave', 'mul', or None (both
    outputs). With return_state the forward states follow, then the backward ones."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                             f"{backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             f'{{"sum", "mul", "ave", "concat", None}}')
        if not hasattr(layer, "go_backwards"):
            raise ValueError(f"`Bidirectional` wraps a recurrent layer (one with `go_backwards`); received {layer}")
        super().__init__(**kwargs)
        config = layer.get_config()
        self.forward_layer = type(layer).from_config({**config, "name": "forward_" + _strip(layer.name, "forward_")})
        if backward_layer is None:
            backward_layer = type(layer).from_config({**config, "go_backwards": not config["go_backwards"],
                                                      "name": "backward_" + _strip(layer.name, "backward_")})
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(f"Forward layer and backward layer should have different `go_backwards` value. Received: "
                             f"forward_layer.go_backwards {self.forward_layer.go_backwards}, "
                             f"backward_layer.go_backwards={self.backward_layer.go_backwards}")
        for a in ("return_sequences", "return_state"):
            if getattr(self.forward_layer, a) != getattr(self.backward_layer, a):
                raise ValueError(f'Forward layer and backward layer are expected to have the same value for attribute '
                                 f'"{a}", got "{getattr(self.forward_layer, a)}" for forward layer and '
                                 f'"{getattr(self.backward_layer, a)}" for backward layer')
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state

    def call(self, inputs, initial_state=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer(inputs, initial_state=forward_state, training=training)
        y_rev = self.backward_layer(inputs, initial_state=backward_state, training=training)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = tf.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = [tf.concat([y, y_rev], axis=-1)]
        elif self.merge_mode == "sum":
            output = [y + y_rev]
        elif self.merge_mode == "ave":
            output = [(y + y_rev) / 2.0]
        elif self.merge_mode == "mul":
            output = [y * y_rev]
        else:
            output = [y, y_rev]
        if self.return_state or self.merge_mode is None:
            return output + states
        return output[0]

    def get_config(self):
        return {**super().get_config(), "layer": serialize(self.forward_layer), "merge_mode": self.merge_mode,
                "backward_layer": serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = deserialize(config.pop("layer"))
        backward = config.pop("backward_layer", None)
        return cls(layer, backward_layer=None if backward is None else deserialize(backward), **config)


class TimeDistributed(Layer):
    """`layer` applied to every slice inputs[:, t] (one set of weights for all steps): (batch, steps, ...) ->
    (batch, steps, ...the layer's output)."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 dimensions, "
                             f"received: {tuple(input_shape)}")
        self.built = True

    def call(self, inputs, training=None):
        shape = list(inputs.shape)
        rest = shape[2:]
        if None in rest:
            raise ValueError(f"TimeDistributed needs the dimensions after the time axis defined; received input shape "
                             f"{tuple(shape)}")
        folded = tf.reshape(inputs, [-1, *rest])
        y = self.layer(folded, training=training)
        dims = tf.shape(inputs)
        out = [dims[0], dims[1]] + [tf.constant(d, "int32") for d in list(y.shape)[1:]]
        return tf.reshape(y, tf.stack(out))

    def get_config(self):
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(deserialize(config.pop("layer")), **config)
