"""Whole-model saving (`Model.save("m.keras")`, `tfn.keras.models.load_model`) and the configs it stands on.

A `.keras` file here is a zip archive, as Keras's is, holding `config.json` (the model's class and config: a
Sequential's layers one by one, another model's get_config(); the input shape it was built for; how it was
compiled), `metadata.json`, and `model.weights.npz` (every weight in `model.weights` order, then the optimizer's
variables: its step count and slots). Not Keras's own files (their weights are HDF5): Keras cannot read these, nor
tfn Keras's.

Configs are the arguments each object was made with (frontend/keras/config.py) turned into JSON: numbers, strings,
lists, dicts, None; an activation given as one of tfn.keras.activations' functions as its name; a layer,
initializer, optimizer or loss object as {"class_name", "config"}. Anything else (a lambda, a NumPy generator, an
object of the user's own class not registered) makes saving a TypeError naming the argument. Loading finds classes
among tfn.keras's, then in `custom_objects` and the classes registered with `register_keras_serializable`.
"""
import datetime
import io
import json
import zipfile

import numpy as np

from tfn.keras import initializers, layers, losses, metrics, optimizers, regularizers
from tfn.keras.config import serialize
from tfn.keras.models import Model, Sequential
from tfn.state.variables import init_scope

FORMAT_VERSION = "tfn-keras-1"
_REGISTERED = {}


def register_keras_serializable(package="Custom", name=None):
    """Decorator: the class can be loaded by the name `package>name` (or its own name) without custom_objects."""
    def register(cls):
        key = f"{package}>{name or cls.__name__}"
        _REGISTERED[key] = cls
        _REGISTERED.setdefault(name or cls.__name__, cls)
        return cls
    return register


def get_registered_object(name, custom_objects=None):
    return (custom_objects or {}).get(name) or _REGISTERED.get(name)


def _class(name, custom_objects):
    for module in (layers, initializers, optimizers, losses, metrics, regularizers):
        cls = getattr(module, name, None)
        if isinstance(cls, type):
            return cls
    cls = get_registered_object(name, custom_objects)
    if cls is None:
        raise ValueError(f"Unknown class {name!r} in the saved config: pass it in custom_objects={{{name!r}: ...}} "
                         "or register it with tfn.keras.saving.register_keras_serializable()")
    return cls


def deserialize(value, custom_objects=None):
    """The object a serialize()d value stands for (configs of classes rebuilt, the rest as it is)."""
    if isinstance(value, list):
        return [deserialize(v, custom_objects) for v in value]
    if isinstance(value, dict):
        if set(value) == {"class_name", "config"}:
            cls = _class(value["class_name"], custom_objects)
            conf = deserialize(value["config"], custom_objects)
            return cls.from_config(conf) if hasattr(cls, "from_config") else cls(**conf)
        return {k: deserialize(v, custom_objects) for k, v in value.items()}
    return value


# --- whole models ---------------------------------------------------------------------------------------------

def _model_config(model):
    if isinstance(model, Sequential):
        entry = {"class_name": "Sequential", "config": {
            "name": model.name, "layers": [serialize(layer, f"layer {layer.name}") for layer in model.layers]}}
        shape = model._input_shape
    else:
        entry = serialize(model, f"model {model.name}")
        shape = getattr(model, "_build_shape", None) or model.__dict__.get("_build_input_shape")
    entry["build_input_shape"] = None if shape is None else [None if d is None else int(d) for d in shape]
    compile_args = model.__dict__.get("_compile_arguments")
    if compile_args is not None:
        entry["compile_config"] = serialize(compile_args, "compile()")
    return entry


def save_model(model, filepath, overwrite=True):
    """`model.save(filepath)`: filepath must end in `.keras` (ValueError otherwise, as Keras 3)."""
    filepath = str(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid filepath extension for saving. Please add either a `.keras` extension for the "
                         f"native Keras format (recommended) or a `.h5` extension. Received: filepath={filepath}")
    if not model.built:
        raise ValueError(f"The model {model.name} has not been built yet: call it on data (or build it) before "
                         "saving it")
    entry = _model_config(model)
    arrays = {f"w{i}": v.numpy() for i, v in enumerate(model.weights)}
    opt = model.optimizer if getattr(model, "optimizer", None) is not None else None
    if opt is not None and "compile_config" in entry:
        arrays.update({f"o{i}": v.numpy() for i, v in enumerate(opt.variables)})
    weights = io.BytesIO()
    np.savez(weights, **arrays)
    metadata = {"format": FORMAT_VERSION, "date_saved": datetime.datetime.now().isoformat(timespec="seconds")}
    with zipfile.ZipFile(filepath, "w" if overwrite else "x", zipfile.ZIP_DEFLATED) as z:
        z.writestr("metadata.json", json.dumps(metadata))
        z.writestr("config.json", json.dumps(entry, indent=1))
        z.writestr("model.weights.npz", weights.getvalue())


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002  (Keras's name)
    """The model a `.keras` file of Model.save holds: rebuilt from its config, built, its weights set, compiled as it
    was (with its optimizer's state) unless compile=False."""
    try:
        with zipfile.ZipFile(str(filepath)) as z:
            metadata = json.loads(z.read("metadata.json"))
            entry = json.loads(z.read("config.json"))
            with np.load(io.BytesIO(z.read("model.weights.npz"))) as data:
                arrays = {k: data[k] for k in data.files}
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise ValueError(f"{filepath} is not a model saved by tfn's Model.save: {e}") from None
    if metadata.get("format") != FORMAT_VERSION:
        raise ValueError(f"{filepath} holds format {metadata.get('format')!r}, not {FORMAT_VERSION!r}")
    shape = entry.get("build_input_shape")
    if entry["class_name"] == "Sequential":
        model = Sequential(name=entry["config"]["name"])
        for layer in entry["config"]["layers"]:
            model.add(deserialize(layer, custom_objects))
        if shape is not None and not model.built:
            model.build(shape)
    else:
        model = deserialize({"class_name": entry["class_name"], "config": entry["config"]}, custom_objects)
        if shape is not None:
            model.build(shape)
    weights = [arrays[f"w{i}"] for i in range(sum(1 for k in arrays if k.startswith("w")))]
    model.set_weights(weights)
    if compile and "compile_config" in entry:
        args = deserialize(entry["compile_config"], custom_objects)
        model.compile(**args)
        saved = [arrays[f"o{i}"] for i in range(sum(1 for k in arrays if k.startswith("o")))]
        if saved:
            _restore_optimizer(model.optimizer, model.trainable_variables, saved)
    return model


def _restore_optimizer(opt, variables, saved):
    """Make the optimizer's slots for the model's variables and set its state (step count, slots) from `saved`."""
    with init_scope():
        opt.build_slots(variables)
    if len(opt.variables) == len(saved):
        for var, value in zip(opt.variables, saved):
            var.assign(value)


def _save(self, filepath, overwrite=True, **kwargs):
    """Save the whole model (config, weights, optimizer state) to a `.keras` file (tfn.keras.saving)."""
    save_model(self, filepath, overwrite)


Model.save = _save  # (models.py, which holds the class, does not import this module)
