"""Import every tfn pass so the registry is complete."""
from tfn.passes import (  # noqa: F401
    pipelines,  # noqa: F401
    tfn_mark_readonly_args,
    tfn_to_linalg,
    tfn_verify,
)
