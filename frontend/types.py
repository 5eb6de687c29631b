"""`tfn.types`: the public type names of tfn.function, under `tfn.types.experimental` as in TensorFlow."""
import sys
import types as _pytypes

from tfn.core.tensor_spec import TensorSpec
from tfn.tracing.function import ConcreteFunction
from tfn.tracing.polymorphic import PolymorphicFunction
from tfn.tracing.trace import PlaceholderContext, TraceType
from tfn.tracing.trace_type import FunctionType

# A module object (not a package folder) so `tfn.types.experimental.X` and
# `from tfn.types.experimental import X` both work without a new entry in pyproject.toml.
experimental = _pytypes.ModuleType("tfn.types.experimental", "TensorFlow's tf.types.experimental names in tfn.")
experimental.TraceType = TraceType
experimental.FunctionType = FunctionType
experimental.TensorSpec = TensorSpec
experimental.PolymorphicFunction = PolymorphicFunction
experimental.GenericFunction = PolymorphicFunction
experimental.ConcreteFunction = ConcreteFunction
experimental.PlaceholderContext = PlaceholderContext
experimental.__all__ = ["ConcreteFunction", "FunctionType", "GenericFunction", "PlaceholderContext",
                        "PolymorphicFunction", "TensorSpec", "TraceType"]
sys.modules[experimental.__name__] = experimental
