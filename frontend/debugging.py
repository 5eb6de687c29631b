"""`tfn.debugging`: checks and float classes under TensorFlow's names, as the op families export them (core/api.py)."""
from tfn import ops as _ops  # noqa: F401  (the op families register their public functions)
from tfn.core import api as _api

globals().update(_api.namespace("debugging"))
__all__ = sorted(_api.namespace("debugging"))
