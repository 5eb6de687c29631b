"""The guide's opening promise: a tf.function "is required to use SavedModel". tfn.saved_model.save writes a
module's variables and its functions' traces (IR and native code) to a folder; tfn.saved_model.load gives them back,
callable and trainable, with no need for the Python that made them."""
import os
import tempfile

from common import section

import tfn as tf

section("SavedModel: save a module, load it without its source")


class Dense(tf.Module):
    def __init__(self, w, b):
        super().__init__()
        self.w = tf.Variable(w, name="w")
        self.b = tf.Variable(b, name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


export_dir = os.path.join(tempfile.mkdtemp(), "dense")
model = Dense([[1.0, -1.0], [2.0, 0.5]], [0.5, 0.0])
x = tf.constant([[1.0, 2.0], [3.0, -1.0]])
print("Before saving:", model(x).numpy().tolist())
tf.saved_model.save(model, export_dir)
del model, Dense  # the loaded model needs neither the object nor its class
for here, _, files in sorted(os.walk(export_dir)):
    for f in sorted(files):
        print("  " + os.path.relpath(os.path.join(here, f), export_dir))

loaded = tf.saved_model.load(export_dir)
print("Loaded:", loaded(x).numpy().tolist())
print("Variables:", [(v.name, v.shape.as_list(), v.trainable) for v in loaded.trainable_variables])
serving = loaded.signatures["serving_default"]
print("Signature inputs:", serving.structured_input_signature)
print("Signature outputs:", serving(x=x))

print()
print("Fine-tuning the loaded variables with a tape:")
target = tf.constant([[4.0, 0.0], [0.0, 0.0]])
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((loaded(x) - target) ** 2)
    for v, g in zip(loaded.trainable_variables, tape.gradient(loss, loaded.trainable_variables)):
        v.assign_sub(0.05 * g)
    print(f"  step {step}: loss {float(loss):.4f}")
tf.saved_model.save(loaded, export_dir + "-tuned")
reloaded = tf.saved_model.load(export_dir + "-tuned")
print("Saved again and reloaded:", [[round(float(v), 3) for v in row] for row in reloaded(x).numpy()])

print()
print("A call that fits no saved signature:")
try:
    loaded(tf.constant([1.0, 2.0]))
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])

print("A function that calls back into Python cannot be saved:")


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def with_callback(x):
    return tf.py_function(lambda t: t + 1, [x], tf.float32)


try:
    tf.saved_model.save(with_callback, export_dir + "-callback")
except ValueError as e:
    print("ValueError:", e)
