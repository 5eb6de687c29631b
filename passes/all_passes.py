"""Import every tfn pass so the registry is complete."""
from tfn.passes import tfn_mark_readonly_args, tfn_to_linalg, tfn_verify  # noqa: F401
from tfn.passes import pipelines  # noqa: F401
