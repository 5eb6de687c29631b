"""Fill the op table: importing this module defines every `tfn` op."""
from tfn.dialects import (  # noqa: F401  # noqa: F401  # noqa: F401
    ops_conv,
    ops_elementwise,
    ops_fill,
    ops_gather,
    ops_linalg,
    ops_misc,
    ops_print,
    ops_reduction,
    ops_scatter,
    ops_shape,  # noqa: F401
    ops_shape_of,
)
