"""`tfn.autodiff`: TensorFlow's names for differentiation (`GradientTape`, `ForwardAccumulator`)."""
from tfn.gradients.forward import ForwardAccumulator  # noqa: F401
from tfn.gradients.tape import GradientTape  # noqa: F401
