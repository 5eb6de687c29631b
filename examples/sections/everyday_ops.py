"""Everyday TensorFlow functions beyond the guide (einsum, masks, top_k, segment sums, clipping, checks), the
same eagerly and compiled, on sizes known only when the function runs."""
import numpy as np
from common import section

import tfn as tf

section("Everyday ops: attention scores with a length mask, top-k, segment sums, clipped gradients")


@tf.function(input_signature=[tf.TensorSpec([None, None, 4], tf.float32), tf.TensorSpec([None], tf.int32)])
def masked_scores(tokens, lengths):
    scores = tf.einsum("btd,bsd->bts", tokens, tokens) / tf.sqrt(4.0)
    mask = tf.sequence_mask(lengths, maxlen=tf.shape(tokens)[1])
    scores = tf.where(mask[:, None, :], scores, -1e9)
    log_norm = tf.reduce_logsumexp(scores, axis=-1, keepdims=True)
    return tf.debugging.check_numerics(tf.exp(scores - log_norm), "attention weights")


tokens = tf.reshape(tf.linspace(-1.0, 1.0, 24), [2, 3, 4])
lengths = tf.constant([3, 2])
weights = masked_scores(tokens, lengths)
print("Rows sum to 1:", np.allclose(tf.reduce_sum(weights, -1).numpy(), 1.0))
print("Masked weights:", weights[1, :, 2].numpy())

values, indices = tf.math.top_k(tf.constant([0.1, 2.5, -1.0, 2.5, 0.7]), k=3)
print("top_k:", values.numpy(), indices.numpy())
print("sort/argsort:", tf.sort([3, 1, 2]).numpy(), tf.argsort([3, 1, 2], direction="DESCENDING").numpy())

pick = tf.function(lambda x: tf.boolean_mask(x, x > 0))
print("boolean_mask (size known when it runs):", pick(tf.constant([-1.0, 2.0, 0.0, 5.0])).numpy())
print("segment sums:", tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0, 4.0]),
                                                    tf.constant([0, 2, 0, 1]), num_segments=3).numpy())
print("cumsum, roll, split:", tf.cumsum([1, 2, 3, 4]).numpy(), tf.roll([1, 2, 3, 4], 1, 0).numpy(),
      [t.numpy().tolist() for t in tf.split(tf.range(6), [2, -1])])

w = tf.Variable([[3.0, 4.0]])


@tf.function
def clipped_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w, transpose_b=True)))
    grads, norm = tf.clip_by_global_norm(tape.gradient(loss, [w]), 1.0)
    w.assign_sub(0.1 * grads[0])
    return norm


print("Gradient norm before clipping:", clipped_step(tf.constant([[1.0, 1.0]])).numpy())
print("Weights after one clipped step:", w.numpy())

try:
    masked_scores(tf.fill([1, 2, 4], np.nan), tf.constant([2]))
except tf.errors.InvalidArgumentError as e:
    print("check_numerics at run time:", str(e).splitlines()[0])
