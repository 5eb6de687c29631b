"""`tfn.saved_model`: a module's (or a function's) compiled traces and variables in a folder that another process
loads and calls without the Python source that made them (`tf.saved_model.save` / `tf.saved_model.load`)."""
from tfn.saved_model.load import load
from tfn.saved_model.save import save

__all__ = ["load", "save"]
