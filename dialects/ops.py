"""Every `tfn` op as a named OpDef: `from tfn.dialects import ops; ops.add`.

Importing this module fills the op table (one `ops_*` module per family) and binds each op under its name,
so a registration against a misspelled op (`ops.addd`) fails when its module is imported.
"""
from tfn.dialects import (  # noqa: F401  (each defines its family's ops)
    ops_check,
    ops_collective,
    ops_conv,
    ops_elementwise,
    ops_fill,
    ops_gather,
    ops_gather_nd,
    ops_linalg,
    ops_misc,
    ops_print,
    ops_random,
    ops_reduction,
    ops_scatter,
    ops_shape,
    ops_shape_of,
    ops_sort,
)
from tfn.dialects.optable import OPS

globals().update(OPS)
__all__ = sorted(OPS)


def __getattr__(name):
    """An op defined after this module was imported; a misspelled name raises AttributeError."""
    if name in OPS:
        return OPS[name]
    raise AttributeError(f"tfn has no op named {name!r} (tfn.dialects.ops.<name> is an op of the table)")
