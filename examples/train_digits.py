"""Train a small CNN on scikit-learn's handwritten digits (8x8 images, bundled with scikit-learn: no download)
with tfn.keras; each batch runs one compiled train step. Run: python examples/train_digits.py [--epochs N]

Needs the `examples` extra (pip install -e '.[examples]'). Where TensorFlow is installed, the same model's epoch
time under tf.keras is printed beside tfn's."""
import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

import tfn as tf


def load(seed=0):
    """(x_train, y_train, x_test, y_test): 8x8x1 images scaled to [0, 1], a stratified 75/25 split."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 4
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def make_model(keras):
    """The CNN, in whichever Keras is given (tfn.keras or tf.keras)."""
    layers = keras.layers
    return keras.Sequential([
        keras.Input(shape=(8, 8, 1)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Flatten(),
        layers.Dropout(0.25),
        layers.Dense(10),
    ])


def train(keras, x, y, epochs, batch_size=32, verbose="auto"):
    """Compile and fit the CNN; (model, seconds per epoch after the first)."""
    model = make_model(keras)
    model.compile(optimizer=keras.optimizers.Adam(2e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    times = []
    for epoch in range(epochs):
        start = time.perf_counter()
        model.fit(x, y, batch_size=batch_size, epochs=epoch + 1, initial_epoch=epoch, verbose=verbose)
        times.append(time.perf_counter() - start)
    return model, float(np.mean(times[1:] if len(times) > 1 else times))


def _tensorflow():
    """TensorFlow's module where it is installed, else None; imported before tfn compiles anything (importing TF
    after tfn has compiled a large kernel can abort the process)."""
    try:
        import tensorflow  # optional dependency: only for the epoch-time comparison
    except ImportError:
        return None
    return tensorflow


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    tensorflow = _tensorflow()
    tf.random.set_seed(0)
    x_train, y_train, x_test, y_test = load()
    model, epoch_time = train(tf.keras, x_train, y_train, args.epochs)
    model.summary()
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"tfn.keras: test accuracy {accuracy:.4f}, test loss {loss:.4f}, {epoch_time * 1e3:.0f} ms per epoch")
    if tensorflow is None:
        return
    tensorflow.random.set_seed(0)
    tf_model, tf_time = train(tensorflow.keras, x_train, y_train, args.epochs, verbose=0)
    _, tf_accuracy = tf_model.evaluate(x_test, y_test, verbose=0)
    print(f"tf.keras:  test accuracy {tf_accuracy:.4f}, {tf_time * 1e3:.0f} ms per epoch "
          f"(tfn / tf.keras = {epoch_time / tf_time:.2f}x)")


if __name__ == "__main__":
    main()
