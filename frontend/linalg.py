"""`tfn.linalg`: linear algebra under TensorFlow's names."""
from tfn.ops.linalg_ops import matmul  # noqa: F401
