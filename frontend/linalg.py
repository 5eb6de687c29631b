"""`tfn.linalg`: linear algebra under TensorFlow's names."""
from tfn.linalg_ops import matmul  # noqa: F401
