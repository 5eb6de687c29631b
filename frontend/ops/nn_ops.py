"""Public neural-network functions (`tfn.nn.conv2d`)."""
from tfn.core.api import op_api
from tfn.core.dispatch import apply, tensors
from tfn.dialects import ops


def _pair(value, what):
    """TF's 1, 2 or 4-element int list for NHWC (N and C entries must be 1) as an (h, w) pair."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * 2
    elif len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise ValueError(f"{what} in the batch and depth dimensions must be 1, got {values}")
        values = values[1:3]
    if len(values) != 2 or any(not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{what} must be a positive int or a list of 1, 2 or 4 positive ints, got {value!r}")
    return tuple(values)


@op_api(ops.conv2d, exports=("nn.conv2d",))
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv2d: NHWC input, [height, width, in, out] filters, 'SAME' or 'VALID' padding."""
    if data_format != "NHWC":
        raise ValueError(f"conv2d supports data_format='NHWC' only, got {data_format!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    x, w = tensors(input, filters)
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(1 if dilations is None else dilations, "dilations")
    if (sh > 1 or sw > 1) and (dh > 1 or dw > 1):
        raise ValueError("strides > 1 not supported in conjunction with dilations > 1")
    attrs = {"strides": (sh, sw), "dilations": (dh, dw), "same": padding.upper() == "SAME"}
    return apply(ops.conv2d, [x, w], attrs)
