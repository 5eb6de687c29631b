"""tf.nn.space_to_depth and depth_to_space (NHWC): blocks of block_size x block_size pixels moved into the channels
and back, one reshape, transpose and reshape each (so the gradient is the other one)."""
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops
from tfn.ops.composite import user_error


def _checked(op, input, block_size, data_format):  # noqa: A002
    if data_format != "NHWC":
        raise user_error(ValueError(f"{op} supports data_format='NHWC' only, got {data_format!r}"))
    if not isinstance(block_size, int) or block_size < 2:
        raise user_error(ValueError(f"{op}: block_size must be an int >= 2, got {block_size!r}"))
    x = convert_to_tensor(input)
    if x.ndim != 4 or None in x._shape[1:]:
        raise user_error(ValueError(f"{op} needs a 4-D NHWC input with static height, width and depth, got shape "
                                    f"{x.shape}"))
    return x


@export("nn.space_to_depth")
def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """[n, h, w, c] -> [n, h / b, w / b, b * b * c]: each b x b block's pixels, row by row, become channels."""
    x = _checked("SpaceToDepth", input, block_size, data_format)
    _, h, w, c = x._shape
    b = block_size
    if h % b or w % b:
        raise user_error(ValueError(f"SpaceToDepth: height {h} and width {w} must be multiples of block_size {b}"))
    y = array_ops.reshape(x, [-1, h // b, b, w // b, b, c])
    y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
    return array_ops.reshape(y, [-1, h // b, w // b, b * b * c])


@export("nn.depth_to_space")
def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """[n, h, w, b * b * c] -> [n, h * b, w * b, c]: space_to_depth undone."""
    x = _checked("DepthToSpace", input, block_size, data_format)
    _, h, w, c = x._shape
    b = block_size
    if c % (b * b):
        raise user_error(ValueError(f"DepthToSpace: depth {c} must be a multiple of block_size ** 2 = {b * b}"))
    y = array_ops.reshape(x, [-1, h, w, b, b, c // (b * b)])
    y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
    return array_ops.reshape(y, [-1, h * b, w * b, c // (b * b)])
