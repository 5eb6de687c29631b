"""`tfn.keras`: layers, models, losses, metrics and optimizers in Keras's API, built on tfn ops, tfn.Variable,
tfn.GradientTape and tfn.function (fit runs one compiled train step per batch)."""
from types import SimpleNamespace

from tfn.keras import (  # noqa: F401
    activations,
    callbacks,
    initializers,
    layers,
    layers_activation,
    layers_attention,
    layers_conv1d,
    layers_conv2d,
    layers_image,
    layers_merge,
    layers_noise,
    layers_norm,
    layers_preprocessing,
    layers_recurrent,
    layers_reshape,
    layers_wrappers,
    losses,
    metrics,
    optimizers,
    regularizers,
    saving,
    utils,
)
from tfn.keras.layers import Input, Layer  # noqa: F401
from tfn.keras.models import Model, Sequential  # noqa: F401

# The layer families written in their own files (they import layers.py's Layer) are exported as tfn.keras.layers.X,
# with the merge layers' functional forms (tfn.keras.layers.add([a, b]), ...)
_FAMILIES = (layers_activation, layers_attention, layers_conv1d, layers_conv2d, layers_image, layers_merge,
             layers_noise, layers_norm, layers_preprocessing, layers_recurrent, layers_reshape, layers_wrappers)
for _family in _FAMILIES:
    for _name, _value in vars(_family).items():
        if isinstance(_value, type) and issubclass(_value, layers.Layer) and not _name.startswith("_"):
            setattr(layers, _name, _value)
for _name in layers_merge.FUNCTIONAL_FORMS:
    setattr(layers, _name, getattr(layers_merge, _name))

models = SimpleNamespace(Model=Model, Sequential=Sequential, load_model=saving.load_model, save_model=saving.save_model)
backend = SimpleNamespace(floatx=utils.floatx, epsilon=utils.epsilon, image_data_format=utils.image_data_format,
                          clear_session=utils.clear_session)
preprocessing = SimpleNamespace(sequence=SimpleNamespace(pad_sequences=utils.pad_sequences),
                                timeseries_dataset_from_array=utils.timeseries_dataset_from_array)
constraints = SimpleNamespace(Constraint=regularizers.Constraint, MaxNorm=regularizers.MaxNorm,
                              NonNeg=regularizers.NonNeg, UnitNorm=regularizers.UnitNorm,
                              MinMaxNorm=regularizers.MinMaxNorm, max_norm=regularizers.max_norm,
                              non_neg=regularizers.non_neg, unit_norm=regularizers.unit_norm,
                              min_max_norm=regularizers.min_max_norm, get=regularizers.get_constraint)
