"""tfn: TensorFlow's tf.function rebuilt as a compiler on MLIR. `import tfn as tf` runs the guide's programs.

The op functions (`tfn.add`, `tfn.reshape`, ...) are the ones the op families export (core/api.py); the rest
of the public names are imported below.

`tfn.autodiff`, `tfn.data`, `tfn.distribute`, `tfn.image`, `tfn.keras`, `tfn.random`, `tfn.saved_model`,
`tfn.summary` and `tfn.train` load on first use (module __getattr__ below): together they were a fifth of
`import tfn`, and a program that only compiles functions never needs them.
"""
import importlib

from tfn.dialects import mlir_loading  # noqa: F401  (first: MLIR loads on first use, isolated if need be)

# isort: split
from tfn import (  # noqa: F401
    autograph,
    config,
    debugging,
    dtypes,
    errors,
    linalg,
    math,
    nest,
    nn,
    ops,
    types,
)
from tfn.config import executing_eagerly  # noqa: F401
from tfn.core import api as _api
from tfn.core.device_scope import device  # noqa: F401
from tfn.core.name_scope import name_scope  # noqa: F401
from tfn.core.tensor import Tensor, convert_to_tensor, is_tensor  # noqa: F401
from tfn.core.tensor_shape import TensorShape  # noqa: F401
from tfn.core.tensor_spec import TensorSpec  # noqa: F401
from tfn.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from tfn.ops.control_flow import cond, while_loop  # noqa: F401
from tfn.ops.py_function import py_function  # noqa: F401
from tfn.ops.tensor_array import TensorArray  # noqa: F401
from tfn.state.module import Module  # noqa: F401
from tfn.state.variables import Variable, init_scope  # noqa: F401
from tfn.tracing.function import ConcreteFunction  # noqa: F401
from tfn.tracing.polymorphic import PolymorphicFunction, function  # noqa: F401

globals().update(_api.namespace(""))

# Gradients: the tape (the rules registered beside the ops' public functions load with the first gradient).
from tfn import experimental  # noqa: E402,F401
from tfn.gradients.custom import custom_gradient  # noqa: E402,F401
from tfn.gradients.tape import GradientTape, UnconnectedGradients, stop_gradient  # noqa: E402,F401
from tfn.version import __version__  # noqa: E402,F401

# Submodules loaded on first use: `tfn.keras.layers.Dense`, `from tfn import data`, `import tfn.random` all work.
_LAZY = ("autodiff", "data", "distribute", "image", "keras", "random", "saved_model", "summary", "train")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f"tfn.{name}")  # binds tfn.<name>: __getattr__ is not asked again
    raise AttributeError(f"module 'tfn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
