"""Tensor types as the op table sees them, and their MLIR spelling."""
from mlir import ir

from tfn.dialects import dtypes


class TensorType:
    """A ranked tensor type: `shape` is a tuple of ints, None for a dynamic dimension."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(None if d is None or d < 0 else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_static(self):
        return None not in self.shape

    def __eq__(self, other):
        return isinstance(other, TensorType) and self.shape == other.shape and self.dtype is other.dtype

    def __hash__(self):
        return hash((self.shape, self.dtype.name))

    def __repr__(self):
        return f"TensorType({self.shape}, {self.dtype.name})"

    def mlir_str(self):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype.mlir}>"

    def to_mlir(self):
        """The `tensor<...>` MLIR type (needs an active Context)."""
        if _shared_context is None or ir.Context.current is not _shared_context:
            return ir.Type.parse(self.mlir_str())
        key = (self.shape, self.dtype)
        t = _SHARED_TYPES.get(key)
        if t is None:
            t = _SHARED_TYPES[key] = ir.Type.parse(self.mlir_str())
        return t

    @staticmethod
    def from_mlir(t):
        t = ir.RankedTensorType(t)
        shape = [None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)]
        return TensorType(shape, dtypes.as_dtype(str(t.element_type)))


# Each TensorType's MLIR type in the shared context (dialects/context.py names it here when it makes it), which
# lives as long as the process: parsing one costs more than a tenth of tracing an elementwise op. Other contexts
# parse each time (a type keeps its context alive).
_SHARED_TYPES = {}
_shared_context = None


def keep_types_in(ctx):
    """Let `to_mlir` remember the types it parses in `ctx` (the shared context: it is never destroyed)."""
    global _shared_context
    _shared_context = ctx


def element_type(dtype):
    """The MLIR element type of a dtype's storage after lowering: unsigned becomes signless, and bool
    becomes i8 (NumPy's 1-byte bools; memrefs of i1 cannot be lowered to LLVM); a string is an i64 handle
    into the runtime's string table (runtime/callbacks.py)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_string:
        return ir.IntegerType.get_signless(64)
    if dtype.is_bool:
        return ir.IntegerType.get_signless(8)
    return ir.Type.parse(dtype.mlir.replace("ui", "i"))


def lowered_tensor_type(tt):
    """The tensor type a tfn tensor type has after lowering (see element_type)."""
    return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in tt.shape],
                                   element_type(tt.dtype), loc=ir.Location.unknown())
