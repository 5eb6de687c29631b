"""Keras's attention layers on (batch, steps, features) inputs: MultiHeadAttention (per-head query/key/value
projections, scaled dot-product attention with attention/query/value masks and a causal mask, dropout on the
attention weights in training, the output projection) and Attention (Luong-style dot or concat scores)."""
import math

from tfn.keras._ops import tf
from tfn.keras.layers import Layer

_MASKED = -1e9  # Keras's softmax fills masked float32 scores with this before normalising


def _tensor(x):
    x = tf.convert_to_tensor(x)
    return tf.cast(x, "float32") if x.dtype.is_floating and x.dtype != tf.float32 else x


def _bool(mask):
    mask = tf.convert_to_tensor(mask)
    return mask if mask.dtype == "bool" else tf.not_equal(mask, tf.zeros_like(mask))


def _causal(t_steps, s_steps):
    """(T, S) booleans: query step i may attend to key steps j <= i."""
    return tf.greater_equal(tf.expand_dims(tf.range(t_steps), 1), tf.expand_dims(tf.range(s_steps), 0))


def _and(a, b):
    return b if a is None else (a if b is None else tf.logical_and(a, b))


def _masked_softmax(scores, mask):
    if mask is not None:  # broadcast by multiplying: the steps may be known only when the function runs
        keep = tf.cast(mask, "float32") * tf.ones_like(scores)
        scores = tf.where(keep > 0.5, scores, tf.zeros_like(scores) + _MASKED)
    return tf.nn.softmax(scores, -1)


class MultiHeadAttention(Layer):
    """Keras's MultiHeadAttention: `layer(query, value, key=None, attention_mask=None, ...)` on rank-3 inputs.
    Weights (Keras's names and shapes): query/kernel (dq, heads, key_dim), key/kernel (dk, heads, key_dim),
    value/kernel (dv, heads, value_dim), attention_output/kernel (heads, value_dim, out), each with a bias."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros", seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        for name, v in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"Received an invalid value for argument `{name}`, expected a positive integer, "
                                 f"got {v}.")
        if attention_axes not in (None, 1, (1,), [1], -2, (-2,), [-2]):
            raise ValueError(f"MultiHeadAttention in tfn.keras attends over the steps axis of rank-3 inputs only; "
                             f"received attention_axes={attention_axes}")
        if not 0 <= dropout <= 1:
            raise ValueError(f"Invalid value received for argument `dropout`. Expected a float value between 0 and 1. "
                             f"Received: dropout={dropout}")
        if output_shape is not None and not isinstance(output_shape, int):
            shape = tuple(output_shape)
            if len(shape) != 1:
                raise ValueError(f"MultiHeadAttention in tfn.keras supports an output_shape of one dimension; "
                                 f"received output_shape={output_shape}")
            output_shape = shape[0]
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = key_dim if value_dim is None else value_dim
        self.dropout, self.use_bias, self.output_shape_arg = float(dropout), use_bias, output_shape
        self.attention_axes = attention_axes
        self.kernel_initializer, self.bias_initializer, self.seed = kernel_initializer, bias_initializer, seed
        self._made = False

    def _build_on_first_call(self, input_shape):
        pass  # the weights need the value's and key's shapes too: made by the first call

    def _make(self, q_dim, k_dim, v_dim):
        n, kd, vd = self.num_heads, self.key_dim, self.value_dim
        out = self.output_shape_arg or q_dim

        def dense(name, shape, bias_shape):
            kernel = self.add_weight(shape, self.kernel_initializer, name=f"{name}/kernel")
            bias = self.add_weight(bias_shape, self.bias_initializer, name=f"{name}/bias") if self.use_bias else None
            return kernel, bias

        self.query_kernel, self.query_bias = dense("query", (q_dim, n, kd), (n, kd))
        self.key_kernel, self.key_bias = dense("key", (k_dim, n, kd), (n, kd))
        self.value_kernel, self.value_bias = dense("value", (v_dim, n, vd), (n, vd))
        self.output_kernel, self.output_bias = dense("attention_output", (n, vd, out), (out,))
        self._made = True

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        value = _tensor(value)
        key = value if key is None else _tensor(key)
        for what, x in (("query", query), ("value", value), ("key", key)):
            if len(x.shape) != 3 or x.shape[-1] is None:
                raise ValueError(f"MultiHeadAttention in tfn.keras takes rank-3 (batch, steps, features) inputs "
                                 f"with known features; the {what} has shape {tuple(x.shape)}")
        if not self._made:
            self._make(query.shape[-1], key.shape[-1], value.shape[-1])

        def project(x, kernel, bias):
            y = tf.einsum("bsd,dnh->bsnh", x, kernel)
            return y if bias is None else y + bias

        q = project(query, self.query_kernel, self.query_bias) * (1.0 / math.sqrt(self.key_dim))
        k = project(key, self.key_kernel, self.key_bias)
        v = project(value, self.value_kernel, self.value_bias)
        scores = tf.einsum("bsnh,btnh->bnts", k, q)  # (batch, heads, query steps, key steps)

        mask = None
        if query_mask is not None:
            mask = tf.expand_dims(_bool(query_mask), -1)
        if value_mask is not None:
            mask = _and(mask, tf.expand_dims(_bool(value_mask), 1))
        if key_mask is not None:
            mask = _and(mask, tf.expand_dims(_bool(key_mask), 1))
        if use_causal_mask:
            shape_q, shape_v = tf.shape(query), tf.shape(value)
            mask = _and(mask, tf.expand_dims(_causal(shape_q[1], shape_v[1]), 0))
        if attention_mask is not None:
            mask = _and(mask, _bool(attention_mask))
        if mask is not None:
            mask = tf.expand_dims(mask, 1)  # one mask for every head
        weights = _masked_softmax(scores, mask)
        used = weights
        if training and self.dropout > 0:
            used = tf.nn.dropout(weights, self.dropout, seed=self.seed)
        heads = tf.einsum("bnts,bsnh->btnh", used, v)
        output = tf.einsum("btnh,nhe->bte", heads, self.output_kernel)
        if self.output_bias is not None:
            output = output + self.output_bias
        return (output, weights) if return_attention_scores else output

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout, "use_bias": self.use_bias,
                "output_shape": self.output_shape_arg, "attention_axes": self.attention_axes,
                "kernel_initializer": self.kernel_initializer, "bias_initializer": self.bias_initializer,
                "seed": self.seed}


class Attention(Layer):
    """Keras's Attention on [query, value] or [query, value, key]: scores query . key (score_mode='dot', times a
    trainable `scale` with use_scale) or concat_score_weight * sum(tanh(scale * (query + key))) ('concat');
    softmax over the key steps (masked by `mask=[query_mask, value_mask]` and use_causal_mask), times value."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of {{'dot', 'concat'}}. Received: "
                             f"score_mode={score_mode}")
        self.use_scale, self.score_mode, self.dropout, self.seed = use_scale, score_mode, float(dropout), seed

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) not in (2, 3) or \
                not isinstance(input_shape[0], (list, tuple)):
            raise ValueError(f"Attention layer inputs must be a list of length 2 or 3: [query, value] or [query, "
                             f"value, key]. Received: {input_shape}")
        self.scale = self.add_weight((), "ones", name="scale") if self.use_scale else None
        self.concat_score_weight = self.add_weight((), "ones", name="concat_score_weight") \
            if self.score_mode == "concat" else None
        self.built = True

    def call(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        query, value = _tensor(inputs[0]), _tensor(inputs[1])
        key = _tensor(inputs[2]) if len(inputs) > 2 else value
        if self.score_mode == "dot":
            scores = tf.matmul(query, tf.transpose(key, [0, 2, 1]))
            if self.scale is not None:
                scores = scores * self.scale
        else:
            summed = tf.expand_dims(query, -2) + tf.expand_dims(key, -3)
            if self.scale is not None:
                summed = summed * self.scale
            scores = self.concat_score_weight * tf.reduce_sum(tf.tanh(summed), axis=-1)
        q_mask, v_mask = (mask if mask is not None else (None, None))
        keep = None
        if v_mask is not None:
            keep = tf.expand_dims(_bool(v_mask), -2)
        if use_causal_mask:
            keep = _and(keep, tf.expand_dims(_causal(tf.shape(scores)[1], tf.shape(scores)[2]), 0))
        if keep is not None:  # Keras subtracts 1e9 from the scores of masked-out keys
            scores = scores - 1e9 * (1.0 - tf.cast(keep, "float32"))
        weights = tf.nn.softmax(scores, -1)
        used = tf.nn.dropout(weights, self.dropout, seed=self.seed) if training and self.dropout > 0 else weights
        result = tf.matmul(used, value)
        if q_mask is not None:
            result = result * tf.cast(tf.expand_dims(_bool(q_mask), -1), "float32")
        return (result, weights) if return_attention_scores else result

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}
