"""`tfn.experimental`: features outside TensorFlow's tf.function API — ahead-of-time compilation for C."""
from tfn.aot import aot_compile  # noqa: F401
