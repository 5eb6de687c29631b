"""What Keras objects were made with: each class's `__init__` records its call's arguments on the object (outermost
call only), so that `get_config()` can return them by parameter name without every class writing one.

Layers, models, optimizers and initializers install it from their base class's `__init_subclass__`
(`record_init`); frontend/keras/saving.py turns the arguments into JSON and back."""
import functools
import inspect

import numpy as np

from tfn.keras import activations


def record_init(cls):
    """Wrap cls's own __init__ (if it defines one) to keep the arguments of the first __init__ call an object gets:
    the most derived class's, since its __init__ runs first and calls the others."""
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_records_arguments", False):
        return

    @functools.wraps(init)
    def recording(self, *args, **kwargs):
        if "_init_arguments" not in self.__dict__:
            object.__setattr__(self, "_init_arguments", (args, dict(kwargs)))
        init(self, *args, **kwargs)
    recording._records_arguments = True
    cls.__init__ = recording


def init_arguments(obj):
    """{parameter: value} of the call that made obj (its class's __init__ signature; **kwargs merged in)."""
    args, kwargs = obj.__dict__.get("_init_arguments", ((), {}))
    signature = inspect.signature(type(obj).__init__)
    bound = signature.bind_partial(obj, *args, **kwargs)
    out = {}
    for name, value in bound.arguments.items():
        parameter = signature.parameters[name]
        if name == "self" or parameter.kind is parameter.VAR_POSITIONAL:
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


def _activation_name(fn):
    return next((name for name, f in activations._BY_NAME.items() if f is fn), None)


def serialize(value, where):
    """A JSON value for the config entry `where` names (errors name it): numbers, strings, lists, dicts and None
    as they are, one of tfn.keras.activations' functions as its name, an object with get_config() (a layer, an
    initializer, an optimizer, a loss) as {"class_name", "config"}; TypeError for anything else."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [serialize(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): serialize(v, f"{where}[{k!r}]") for k, v in value.items()}
    if callable(value) and _activation_name(value) is not None:
        return _activation_name(value)
    if hasattr(value, "get_config") and not isinstance(value, type):
        return {"class_name": type(value).__name__, "config": serialize(value.get_config(), where)}
    raise TypeError(f"Cannot save {where} = {value!r}: a config holds numbers, strings, lists, dicts, Keras "
                    "layers, initializers, optimizers, losses and activation names; give the class a get_config() "
                    "returning such values (and a from_config() if its constructor takes others)")


def object_config(obj):
    """get_config() of an object whose arguments record_init kept: those arguments, serialised."""
    name = type(obj).__name__
    return {k: serialize(v, f"{name}({k}=...)") for k, v in init_arguments(obj).items()}
