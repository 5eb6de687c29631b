"""TF dtypes and their NumPy and MLIR element types."""
import numpy as np


class DType:
    """A tensor element type named as in TensorFlow (`tfn.float32`)."""

    __slots__ = ("name", "np", "mlir", "is_floating", "is_integer", "is_unsigned", "is_bool", "is_string")

    def __init__(self, name, np_type, mlir, kind):
        self.name = name
        self.np = np.dtype(np_type)
        self.mlir = mlir
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_unsigned = kind == "u"
        self.is_bool = kind == "b"
        self.is_string = kind == "s"

    @property
    def as_numpy_dtype(self):
        return self.np.type

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer

    def __repr__(self):
        return f"tfn.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


bool_ = DType("bool", np.bool_, "i1", "b")
int8 = DType("int8", np.int8, "i8", "i")
int16 = DType("int16", np.int16, "i16", "i")
int32 = DType("int32", np.int32, "i32", "i")
int64 = DType("int64", np.int64, "i64", "i")
uint8 = DType("uint8", np.uint8, "ui8", "u")
float16 = DType("float16", np.float16, "f16", "f")
float32 = DType("float32", np.float32, "f32", "f")
float64 = DType("float64", np.float64, "f64", "f")
string = DType("string", np.object_, "!tfn.string", "s")

ALL = (bool_, int8, int16, int32, int64, uint8, float16, float32, float64, string)
NUMERIC = tuple(d for d in ALL if d.is_numeric)
FLOATS = tuple(d for d in ALL if d.is_floating)
INTEGERS = tuple(d for d in ALL if d.is_integer)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL if not d.is_string}
_BY_MLIR = {d.mlir: d for d in ALL}


def as_dtype(x):
    """A DType from a DType, its name, a NumPy dtype/type, or an MLIR element type string."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        if x in _BY_NAME:
            return _BY_NAME[x]
        if x in _BY_MLIR:
            return _BY_MLIR[x]
        raise TypeError(f"Cannot convert {x!r} to a tfn dtype")
    if x is bool:
        return bool_
    if x is float:
        return float32
    if x is int:
        return int32
    if x is str or x is bytes:
        return string
    try:
        npd = np.dtype(x)
    except TypeError:
        raise TypeError(f"Cannot convert {x!r} to a tfn dtype") from None
    if npd.kind in "SUO":
        return string
    if npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(f"Unsupported dtype {npd} (tfn supports {', '.join(_BY_NAME)})")
