"""A small classifier to compile ahead of time: `tfn-aot examples/aot/model.py:model.predict -o build/aot`.

Its weights are variables of a tfn.Module, made from a fixed seed here (a real model would load trained values,
e.g. with `load_weights`); tfn-aot freezes them into the library at their values when it compiles.
"""
import numpy as np

import tfn


class Classifier(tfn.Module):
    def __init__(self, features=4, hidden=16, classes=3, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w1 = tfn.Variable(rng.standard_normal((features, hidden)).astype(np.float32) * 0.5)
        self.b1 = tfn.Variable(np.zeros(hidden, np.float32))
        self.w2 = tfn.Variable(rng.standard_normal((hidden, classes)).astype(np.float32) * 0.5)
        self.b2 = tfn.Variable(np.zeros(classes, np.float32))

    @tfn.function(input_signature=[tfn.TensorSpec([1, 4], tfn.float32)])
    def predict(self, x):
        hidden = tfn.nn.relu(tfn.matmul(x, self.w1) + self.b1)
        probabilities = tfn.nn.softmax(tfn.matmul(hidden, self.w2) + self.b2)
        return probabilities, tfn.argmax(probabilities, axis=1)


model = Classifier()

if __name__ == "__main__":
    probabilities, label = model.predict(np.array([[0.5, -1.0, 2.0, 0.25]], np.float32))
    print("probabilities:", " ".join(f"{p:.6f}" for p in probabilities.numpy()[0]))
    print("class:", int(label.numpy()[0]))
