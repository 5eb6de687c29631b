"""Fill the op table: importing this module defines every `tfn` op."""
from tfn.dialects import ops_elementwise, ops_misc  # noqa: F401
