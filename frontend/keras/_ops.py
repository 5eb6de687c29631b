"""The tfn functions the Keras room is written with, gathered from the op registry (core/api.py) in one namespace.

(`import tfn` here would be an import cycle: tfn imports keras.)"""
from types import SimpleNamespace

from tfn import dtypes
from tfn import ops as _families  # noqa: F401  (the op families register their public functions)
from tfn.core import api
from tfn.core.tensor import convert_to_tensor
from tfn.gradients.tape import GradientTape, stop_gradient
from tfn.state.variables import Variable

tf = SimpleNamespace(**api.namespace(""), nn=SimpleNamespace(**api.namespace("nn")),
                     math=SimpleNamespace(**api.namespace("math")),
                     convert_to_tensor=convert_to_tensor, stop_gradient=stop_gradient, GradientTape=GradientTape,
                     Variable=Variable, float32=dtypes.float32)
