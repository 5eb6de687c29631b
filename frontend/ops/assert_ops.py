"""`tfn.debugging.assert_*` and `tfn.debugging.Assert`: conditions on tensors, raising InvalidArgumentError with
TF's message when they do not hold. Eagerly the check runs at once; in a tfn.function it is the `check` op, which
compiled code runs when the function runs (its result unused: the op is never dropped), and a condition decided
while tracing (static shapes, ranks, dtypes) raises then. They return None, as TF 2's do eagerly."""
import numpy as np

from tfn import dtypes
from tfn.core.api import export
from tfn.core.dispatch import apply
from tfn.core.tensor import SymbolicTensor, convert_to_tensor
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops import array_ops, math_ops, reduction_ops, shape_ops
from tfn.ops.composite import user_error


def literal(message):
    """A message for the check op, whose `{n}` fields are its run-time details: braces of the user's doubled."""
    return message.replace("{", "{{").replace("}", "}}")


def require(ok, message, details=()):
    """Raise InvalidArgumentError(message) unless `ok` (a bool scalar tensor) holds: now if it is known, else when
    the function runs (the check op, `details` int64 scalars shown as {0}, {1}, ...)."""
    ok = convert_to_tensor(ok)
    if not isinstance(ok, SymbolicTensor):
        if not bool(ok.numpy()):
            shown = message.format(*[int(convert_to_tensor(d).numpy()) for d in details])
            raise user_error(InvalidArgumentError(shown))
        return None
    apply("check", [ok, ok, *[math_ops.cast(d, dtypes.int64) for d in details]], {"message": message})
    return None


def _prefix(message):
    return f"{message}\n" if message else ""


def _compare(x, y, op, symbol, message, what="x", other="y"):
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if x.dtype != y.dtype:
        y = math_ops.cast(y, x.dtype) if not y.dtype.is_bool else y
    holds = op(x, y)
    if holds.ndim == 0:
        return require(holds, literal(_prefix(message) + f"Condition {what} {symbol} {other} did not hold."))
    flat = array_ops.reshape(holds, [-1])
    failed = math_ops.logical_not(flat)
    first = reduction_ops.argmax(math_ops.cast(failed, dtypes.int32), axis=0)
    text = literal(_prefix(message) + f"Condition {what} {symbol} {other} did not hold element-wise: ")
    return require(reduction_ops.reduce_all(flat), text + "first failing element at flat index {0}.", [first])


@export("debugging.assert_equal", "assert_equal")
def assert_equal(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.equal, "==", message)


@export("debugging.assert_none_equal")
def assert_none_equal(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.not_equal, "!=", message)


@export("debugging.assert_less", "assert_less")
def assert_less(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.less, "<", message)


@export("debugging.assert_less_equal")
def assert_less_equal(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.less_equal, "<=", message)


@export("debugging.assert_greater", "assert_greater")
def assert_greater(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.greater, ">", message)


@export("debugging.assert_greater_equal")
def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    return _compare(x, y, math_ops.greater_equal, ">=", message)


@export("debugging.assert_positive")
def assert_positive(x, message=None, summarize=None, name=None):
    return _compare(x, 0, math_ops.greater, ">", message, other="0")


@export("debugging.assert_negative")
def assert_negative(x, message=None, summarize=None, name=None):
    return _compare(x, 0, math_ops.less, "<", message, other="0")


@export("debugging.assert_non_negative")
def assert_non_negative(x, message=None, summarize=None, name=None):
    return _compare(x, 0, math_ops.greater_equal, ">=", message, other="0")


@export("debugging.assert_non_positive")
def assert_non_positive(x, message=None, summarize=None, name=None):
    return _compare(x, 0, math_ops.less_equal, "<=", message, other="0")


@export("debugging.assert_near")
def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| element-wise (default tolerances: 10 eps of the dtype)."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    eps = float(np.finfo(x.dtype.np).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol

    def close(a, b):
        return math_ops.less_equal(math_ops.abs(a - b), atol + rtol * math_ops.abs(b))
    return _compare(x, y, close, "~=", message)


@export("debugging.assert_rank", "assert_rank")
def assert_rank(x, rank, message=None, name=None):
    """x's rank is `rank` (ValueError while tracing or eagerly: ranks are always known)."""
    x = convert_to_tensor(x)
    if x.ndim != int(rank):
        raise user_error(ValueError(f"{_prefix(message)}Tensor must have rank {int(rank)}. Received rank {x.ndim}, "
                                    f"shape {list(x.shape)}"))


@export("debugging.assert_rank_at_least")
def assert_rank_at_least(x, rank, message=None, name=None):
    x = convert_to_tensor(x)
    if x.ndim < int(rank):
        raise user_error(ValueError(f"{_prefix(message)}Tensor must have rank at least {int(rank)}. Received rank "
                                    f"{x.ndim}, shape {list(x.shape)}"))


@export("debugging.assert_type")
def assert_type(tensor, tf_type, message=None, name=None):
    t = convert_to_tensor(tensor)
    want = dtypes.as_dtype(tf_type)
    if t.dtype != want:
        raise user_error(TypeError(f"{_prefix(message)}{t!r} must be of type {want.name}; got {t.dtype.name}"))


@export("debugging.Assert", "Assert")
def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TF's name)
    """InvalidArgumentError unless the bool scalar `condition` holds; the message shows `data` (its strings, and
    eagerly its values)."""
    condition = convert_to_tensor(condition)
    if condition.ndim != 0 or not condition.dtype.is_bool:
        raise user_error(ValueError(f"Assert: condition must be a bool scalar, got {condition!r}"))
    parts = []
    for d in data:
        if isinstance(d, (str, bytes)):
            parts.append(d.decode() if isinstance(d, bytes) else d)
        elif not isinstance(convert_to_tensor(d), SymbolicTensor):
            parts.append(str(convert_to_tensor(d).numpy()))
        else:
            parts.append(repr(d))
    return require(condition, literal("assertion failed: [" + "] [".join(parts) + "]"))


@export("debugging.assert_shapes")
def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Each (tensor, dims) pair's shape matches dims: ints, names that must mean one size across all the tensors,
    None or '.' for any size, and a leading '...' or '*' for any leading dims. Sizes known while tracing are checked
    then (ValueError); sizes known only when the function runs, then (InvalidArgumentError)."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes, runtime = {}, []
    for tensor, spec in pairs:
        x = convert_to_tensor(tensor)
        spec = [spec] if isinstance(spec, (str, int)) and spec not in ("...", "*") else list(spec)
        leading = spec and spec[0] in ("...", "*")
        spec = spec[1:] if leading else spec
        if x.ndim < len(spec) or (not leading and x.ndim != len(spec)):
            raise user_error(ValueError(f"{_prefix(message)}Specified by tensor of shape {list(x.shape)}: its rank "
                                        f"{x.ndim} does not match the shape {spec}"))
        dims = list(range(x.ndim - len(spec), x.ndim))
        for d, want in zip(dims, spec):
            if want is None or want == ".":
                continue
            have = x.shape[d] if x.shape[d] is not None else shape_ops.shape(x, dtypes.int64)[d]
            target = sizes.setdefault(want, have) if isinstance(want, str) else int(want)
            if isinstance(have, int) and isinstance(target, int):
                if have != target:
                    raise user_error(ValueError(f"{_prefix(message)}Specified by tensor of shape {list(x.shape)} "
                                                f"dimension {d}: expected size {target} ({want!r}), got {have}"))
            else:
                runtime.append((math_ops.equal(math_ops.cast(have, dtypes.int64), math_ops.cast(target, dtypes.int64)),
                                d, want))
    for ok, d, want in runtime:
        require(ok, literal(f"{_prefix(message)}Dimension {d} does not have the size {want!r} names."))
