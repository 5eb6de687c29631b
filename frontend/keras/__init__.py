"""`tfn.keras`: layers, models, losses, metrics and optimizers in Keras's API, built on tfn ops, tfn.Variable,
tfn.GradientTape and tfn.function (fit runs one compiled train step per batch)."""
from types import SimpleNamespace

from tfn.keras import (  # noqa: F401
    activations,
    callbacks,
    initializers,
    layers,
    losses,
    metrics,
    optimizers,
    saving,
    utils,
)
from tfn.keras.layers import Input, Layer  # noqa: F401
from tfn.keras.models import Model, Sequential  # noqa: F401

models = SimpleNamespace(Model=Model, Sequential=Sequential, load_model=saving.load_model, save_model=saving.save_model)
backend = SimpleNamespace(floatx=utils.floatx, epsilon=utils.epsilon, image_data_format=utils.image_data_format,
                          clear_session=utils.clear_session)
preprocessing = SimpleNamespace(sequence=SimpleNamespace(pad_sequences=utils.pad_sequences),
                                timeseries_dataset_from_array=utils.timeseries_dataset_from_array)
