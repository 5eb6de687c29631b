"""Shared pieces of the type rules: dtype checks and broadcasting."""
from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError
from tfn.dialects.types import tensor_type

_KIND_WORD = {"f": "float", "i": "int", "u": "uint", "b": "bool", "s": "string"}


def _kind(dt):
    if dt.is_floating:
        return "float"
    if dt.is_unsigned:
        return "uint"
    if dt.is_integer:
        return "int"
    return "bool" if dt.is_bool else "string"


def same_dtype(op, types):
    """All operands share one dtype (TF never promotes); returns it."""
    first = types[0].dtype
    for i, t in enumerate(types[1:], start=1):
        if t.dtype is not first:
            raise InvalidArgumentError(
                f"cannot compute {op} as input #{i}(zero-based) was expected to be a {first.name} tensor "
                f"but is a {t.dtype.name} tensor [Op:{op}]")
    return first


def allowed(op, dtype, allowed_dtypes):
    """The dtype is one the op accepts."""
    if dtype not in allowed_dtypes:
        names = ", ".join(d.name for d in allowed_dtypes)
        raise InvalidArgumentError(f"{op} does not support dtype {dtype.name} (allowed: {names}) [Op:{op}]")
    return dtype


def broadcast_shapes(op, *shapes):
    """NumPy/TF broadcasting of shapes whose dims may be None (dynamic: assumed to match, never 1)."""
    if len(shapes) == 2:  # the common cases, cheap: equal shapes, or one a scalar
        a, b = shapes
        if a == b or not b:
            return tuple(a)
        if not a:
            return tuple(b)
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            pretty = " vs. ".join(str(list(s)) for s in shapes)
            raise InvalidArgumentError(f"Incompatible shapes: {pretty} [Op:{op}]")
        if known:
            out.append(known.pop())
        elif None in dims:
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def normalize_axis(op, axis, rank, extra=0):
    """An axis in [-rank-extra, rank+extra) as a non-negative int."""
    bound = rank + extra
    if not -bound <= axis < bound:
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for a tensor of rank {rank} [Op:{op}]")
    return axis % bound if bound else 0


def tensor(shape, dtype):
    return tensor_type(shape, dtype)


NUMERIC = dtypes.NUMERIC
FLOATS = dtypes.FLOATS
INTEGERS = dtypes.INTEGERS
SIGNED = tuple(d for d in dtypes.NUMERIC if not d.is_unsigned)
BOOL = (dtypes.bool_,)
ORDERED = dtypes.NUMERIC
ANY = dtypes.ALL
