"""`tfn.keras`: layers, models, losses, metrics and optimizers in Keras's API, built on tfn ops, tfn.Variable,
tfn.GradientTape and tfn.function (fit runs one compiled train step per batch)."""
from types import SimpleNamespace

from tfn.keras import activations, callbacks, initializers, layers, losses, metrics, optimizers, saving  # noqa: F401
from tfn.keras.layers import Input, Layer  # noqa: F401
from tfn.keras.models import Model, Sequential  # noqa: F401

models = SimpleNamespace(Model=Model, Sequential=Sequential, load_model=saving.load_model, save_model=saving.save_model)
