"""The guide's Keras programs, run by tfn.keras: two optimizers with one function, several models with one
function, and a small model trained with compile/fit (one compiled train step per batch), from arrays and
from a tfn.data.Dataset."""
import os
import tempfile
from contextlib import contextmanager

import numpy as np
from common import section

import tfn as tf


@contextmanager
def assert_raises(error_class):
    try:
        yield
    except error_class as e:
        print(f"Caught expected exception \n  {error_class}:\n{e}")
    else:
        raise AssertionError(f"Expected {error_class!r} to be raised but no exception was raised.")


section("Known issues: using with multiple Keras optimizers")

opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(w, x, y, optimizer):
    with tf.GradientTape() as tape:
        L = tf.reduce_sum(tf.square(w * x - y))
    gradients = tape.gradient(L, [w])
    optimizer.apply_gradients(zip(gradients, [w]))


w = tf.Variable(2.)
x = tf.constant([-1.])
y = tf.constant([2.])

train_step(w, x, y, opt1)
print("Calling `train_step` with different optimizer...")
with assert_raises(ValueError):
    train_step(w, x, y, opt2)


class TrainStep(tf.Module):
    def __init__(self, optimizer):
        self.optimizer = optimizer

    @tf.function
    def __call__(self, w, x, y):
        with tf.GradientTape() as tape:
            L = tf.reduce_sum(tf.square(w * x - y))
        gradients = tape.gradient(L, [w])
        self.optimizer.apply_gradients(zip(gradients, [w]))


opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)

train_o1 = TrainStep(opt1)
train_o2 = TrainStep(opt2)

train_o1(w, x, y)
train_o2(w, x, y)
print("A tfn.Module per optimizer: w =", round(float(w), 5))

opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)


# Not a tf.function.
def train_step(w, x, y, optimizer):
    with tf.GradientTape() as tape:
        L = tf.reduce_sum(tf.square(w * x - y))
    gradients = tape.gradient(L, [w])
    optimizer.apply_gradients(zip(gradients, [w]))


w = tf.Variable(2.)
x = tf.constant([-1.])
y = tf.constant([2.])

# Make a new tf.function and ConcreteFunction for each optimizer.
train_step_1 = tf.function(train_step)
train_step_2 = tf.function(train_step)
for i in range(10):
    if i % 2 == 0:
        train_step_1(w, x, y, opt1)
    else:
        train_step_2(w, x, y, opt2)
print("A tfn.function per optimizer: w =", round(float(w), 5), "after", int(opt1.iterations), "+",
      int(opt2.iterations), "steps")

section("Known issues: using with multiple Keras models")


@tf.function
def predict(model, x):
    return model(x)


x = tf.ones([2, 3])
predict(tf.keras.Sequential([tf.keras.layers.Dense(2)]), x)
with assert_raises(ValueError):
    predict(tf.keras.Sequential([tf.keras.layers.Dense(2)]), x)

model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
model.build((None, 3))  # the weights exist before the function runs: no error
print("After model.build((None, 3)):", predict(model, x).shape)

section("Keras training: compile, fit, evaluate (one compiled train step per batch)")

tf.random.set_seed(0)
rng = np.random.default_rng(0)
centres = np.array([[2, 2], [-2, 2], [0, -2.5]], np.float32)
labels = rng.integers(0, 3, 300).astype(np.int32)
points = centres[labels] + rng.normal(size=(300, 2)).astype(np.float32) * 0.6

model = tf.keras.Sequential([
    tf.keras.Input(shape=(2,)),
    tf.keras.layers.Dense(16, activation="relu", name="hidden"),
    tf.keras.layers.Dropout(0.1, name="dropout"),
    tf.keras.layers.Dense(3, name="logits"),
], name="blobs")  # names given: Keras numbers default names process-wide
model.summary()
model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(points[:240], labels[:240], batch_size=40, epochs=5, validation_data=(points[240:], labels[240:]),
                    verbose=0)
for epoch, (loss, accuracy) in enumerate(zip(history.history["loss"], history.history["accuracy"])):
    print(f"epoch {epoch + 1}: loss {loss:.2f}, accuracy {accuracy:.2f}")
loss, accuracy = model.evaluate(points[240:], labels[240:], verbose=0)
print(f"held-out accuracy {accuracy:.2f}")
print("predicted classes:", model.predict(points[240:246]).argmax(axis=1), "labels:", labels[240:246])

section("Keras training fed by a tfn.data.Dataset")

# The dataset's elements are the batches, so fit takes no batch_size; validation_data may be a dataset too.
train_ds = tf.data.Dataset.from_tensor_slices((points[:240], labels[:240])).shuffle(240, seed=1).batch(40)
val_ds = tf.data.Dataset.from_tensor_slices((points[240:], labels[240:])).batch(30)
tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(3)])
model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(train_ds, epochs=3, validation_data=val_ds, verbose=0)
print("batches per epoch:", int(train_ds.cardinality()))
print("loss per epoch:", [f"{v:.2f}" for v in history.history["loss"]],
      "val_accuracy:", [f"{v:.2f}" for v in history.history["val_accuracy"]])
loss, accuracy = model.evaluate(val_ds, verbose=0)
print(f"evaluate(val_ds): accuracy {accuracy:.2f}")
print("predict(val_ds):", model.predict(val_ds).shape)

section("Random numbers and Dropout with a None batch dimension")

# A shape known only when the function runs (tf.shape(x), a shape tensor, or a list mixing ints and scalar tensors)
# is read then: one trace serves every batch size, and a seed draws the numbers a static shape draws.
@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def noisy(x):
    noise = tf.random.normal([tf.shape(x)[0], 3], stddev=0.1, seed=1)
    return tf.nn.dropout(x + noise, 0.5, seed=2)


print("shapes:", noisy(tf.ones([2, 3])).shape, noisy(tf.ones([5, 3])).shape,
      "traces:", noisy.experimental_get_tracing_count())
tf.random.set_seed(3)
static = tf.random.uniform([2, 3], seed=4).numpy()
tf.random.set_seed(3)
runtime = tf.function(lambda shape: tf.random.uniform(shape, seed=4))(tf.constant([2, 3])).numpy()
print("a run-time shape draws the same numbers:", np.array_equal(static, runtime))

# A Keras model with Dropout, its train step compiled once for batches of any size.
model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dropout(0.3), tf.keras.layers.Dense(3)])
model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
step = tf.function(model.train_step, input_signature=[tf.TensorSpec([None, 2], tf.float32),
                                                      tf.TensorSpec([None], tf.int32)])
step(points[:70], labels[:70])  # (its first trace also makes Adam's slot variables)
traces = step.experimental_get_tracing_count()
for start in range(70, 240, 70):  # batches of 70, 70 and 30
    step(points[start:start + 70], labels[start:start + 70])
print("new traces for batches of 70, 70 and 30:", step.experimental_get_tracing_count() - traces)

section("Checkpoints: tf.train.Checkpoint and CheckpointManager")
# The model and its optimizer (Adam's moments too) saved mid-training, then restored into fresh objects.
with tempfile.TemporaryDirectory() as folder:
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer), folder,
                                         max_to_keep=2)
    for _ in range(3):
        step(points[:70], labels[:70])
        saved = manager.save()
    print("kept:", [os.path.basename(p) for p in manager.checkpoints])
    copy = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(16, activation="relu"),
                                tf.keras.layers.Dropout(0.3), tf.keras.layers.Dense(3)])
    copy.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                 loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    status = tf.train.Checkpoint(model=copy, optimizer=copy.optimizer).restore(tf.train.latest_checkpoint(folder))
    status.assert_consumed()
    same = all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(model.weights, copy.weights))
    print("restored", os.path.basename(saved), "| same weights:", same, "| optimizer steps:",
          int(copy.optimizer.iterations.numpy()))
    # The whole model in one file: its layers' configs, weights, compile arguments and optimizer state.
    model.save(os.path.join(folder, "model.keras"))
    reloaded = tf.keras.models.load_model(os.path.join(folder, "model.keras"))
    print("model.save / load_model:", [type(layer).__name__ for layer in reloaded.layers],
          "| same predictions:", np.array_equal(model.predict(points[:8]), reloaded.predict(points[:8])))

section("More Keras layers: causal 1-D convolutions, normalisation, a GRU, merges")

# Does a random walk end above zero? A causal Conv1D (each output sees only earlier steps), LayerNormalization
# and a GRU (unrolled over the 12 steps, so its gradients are ordinary ones) learn it inside fit's compiled step.
tf.random.set_seed(0)
rng = np.random.default_rng(1)
walks = rng.normal(size=(256, 12, 1)).astype(np.float32)
ends_up = (walks[:, :, 0].sum(axis=1) > 0).astype(np.int32)
model = tf.keras.Sequential([
    tf.keras.Input(shape=(12, 1)),
    tf.keras.layers.Conv1D(8, 3, padding="causal", activation="relu", name="conv"),
    tf.keras.layers.LayerNormalization(name="norm"),
    tf.keras.layers.GRU(8, name="gru"),
    tf.keras.layers.Dense(2, name="logits"),
], name="walks")
model.summary()
model.compile(optimizer=tf.keras.optimizers.Adam(0.02),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(walks[:192], ends_up[:192], batch_size=32, epochs=6, verbose=0)
print("loss per epoch:", [f"{v:.2f}" for v in history.history["loss"]])
loss, accuracy = model.evaluate(walks[192:], ends_up[192:], verbose=0)
print(f"held-out accuracy {accuracy:.2f}")

# Merge layers take a list of tensors (tfn.keras has no functional graph: use them in a subclassed model's call).
a, b = tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])
print("add:", tf.keras.layers.add([a, b]).numpy(), "concatenate:", tf.keras.layers.concatenate([a, b]).numpy(),
      "cosine:", tf.keras.layers.Dot(axes=1, normalize=True)([a, b]).numpy().round(4))
