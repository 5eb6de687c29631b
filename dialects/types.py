"""Tensor types as the op table sees them, and their MLIR spelling."""
import functools
import os

from mlir import ir

from tfn.dialects import dtypes
from tfn.dialects.errors import InvalidArgumentError, ResourceExhaustedError

INT64_MAX = 2 ** 63 - 1
_SMALL = 1 << 26  # elements: no overflow, and less memory than any machine that runs tfn has


def check_size(shape, dtype):
    """Raise TF's errors when the static dims of `shape` count more than INT64_MAX elements (InvalidArgumentError)
    or bytes (ResourceExhaustedError): MLIR's size computations are int64 and the wheels abort on overflow."""
    n = 1
    for d in shape:
        if d:  # (None: dynamic)
            n *= d
    if n < _SMALL:  # the common case, cheap: every tensor type of a trace and every eager op comes here
        return
    n = 1
    for d in shape:
        if d is None or d < 0:
            continue
        if n * d > INT64_MAX:
            raise InvalidArgumentError(f"Encountered overflow when multiplying {n} with {d}, result: -1")
        n *= d
    if n * dtype.np.itemsize > INT64_MAX:
        dims = ",".join("?" if d is None or d < 0 else str(d) for d in shape)
        raise ResourceExhaustedError(f"OOM when allocating tensor with shape[{dims}] and type {dtype.name}: "
                                     "its size in bytes does not fit in int64")


@functools.lru_cache(maxsize=None)
def memory_bytes():
    """The machine's physical memory in bytes: a buffer larger than this cannot be allocated (malloc fails)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return INT64_MAX


def oom_message(shape, dtype):
    """TF's message for an allocation that fails."""
    dims = ",".join("?" if d is None else str(d) for d in shape)
    return f"OOM when allocating tensor with shape[{dims}] and type {dtype.name} on /device:CPU:0 by allocator cpu"


def check_memory(tt):
    """Raise TF's ResourceExhaustedError when a tensor of type tt (its static dims) needs more bytes than the machine
    has: eager NumPy would raise MemoryError, and compiled code must not call malloc for it."""
    n = 1
    for d in tt.shape:
        if d:
            n *= d
    if n < _SMALL:
        return
    n *= tt.dtype.np.itemsize
    if n > memory_bytes():
        raise ResourceExhaustedError(oom_message(tt.shape, tt.dtype))


def oversized(t):
    """The error message when an MLIR shaped type's static size overflows int64 (see check_size), else None."""
    if not isinstance(t, ir.ShapedType) or not t.has_rank:
        return None
    t = ir.ShapedType(t)
    width = t.element_type.width if isinstance(t.element_type, (ir.IntegerType, ir.FloatType)) else 64
    n, bits = 1, max(8, width)
    for i in range(t.rank):
        if not t.is_dynamic_dim(i):
            n *= t.get_dim_size(i)
    if n > INT64_MAX or n * (bits // 8) > INT64_MAX:
        return f"type {t} has more elements or bytes than int64 can count"
    return None


class TensorType:
    """A ranked tensor type: `shape` is a tuple of ints, None for a dynamic dimension."""

    __slots__ = ("shape", "dtype", "_shared_mlir")

    def __init__(self, shape, dtype):
        self.shape = tuple(None if d is None or d < 0 else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self._shared_mlir = None  # the MLIR type in the shared context, once asked for (see to_mlir)
        check_size(self.shape, self.dtype)

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

    def __reduce__(self):  # (copies and pickles leave the remembered MLIR type behind)
        return TensorType, (self.shape, self.dtype)

    def mlir_str(self):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype.mlir}>"

    def to_mlir(self):
        """The `tensor<...>` MLIR type (needs an active Context)."""
        if _shared_context is None or ir.Context.current is not _shared_context:
            return ir.Type.parse(self.mlir_str())
        t = self._shared_mlir
        if t is None:
            key = (self.shape, self.dtype)
            t = _SHARED_TYPES.get(key)
            if t is None:
                t = _SHARED_TYPES[key] = ir.Type.parse(self.mlir_str())
            self._shared_mlir = t
        return t

    @staticmethod
    def from_mlir(t):
        """The TensorType of MLIR type `t`; remembered for types of the shared context (uniqued, never freed: a
        verified 1,000-op function converts the same few types ~10,000 times)."""
        shared = _shared_context is not None and t.context is _shared_context
        if shared:
            found = _FROM_SHARED.get(t)
            if found is not None:
                return found
        r = ir.RankedTensorType(t)
        shape = [None if r.is_dynamic_dim(i) else r.get_dim_size(i) for i in range(r.rank)]
        found = TensorType(shape, dtypes.as_dtype(str(r.element_type)))
        if shared:
            _FROM_SHARED[t] = found
        return found


def tensor_type(shape, dtype):
    """TensorType(shape, dtype), the same object each time for a hashable shape (types are immutable values):
    tracing makes the same few types again and again."""
    key = (shape, dtype)
    try:
        t = _TYPES.get(key)
    except TypeError:  # an unhashable shape (a list)
        return TensorType(shape, dtype)
    if t is None:
        t = TensorType(shape, dtype)
        if len(_TYPES) >= _TYPES_KEPT:
            _TYPES.clear()
        _TYPES[key] = t
    return t


_TYPES = {}
_TYPES_KEPT = 4096

# Each TensorType's MLIR type in the shared context (dialects/context.py names it here when it makes it), which
# lives as long as the process: parsing one costs more than a tenth of tracing an elementwise op. Other contexts
# parse each time (a type keeps its context alive).
_SHARED_TYPES = {}
_FROM_SHARED = {}  # MLIR type of the shared context -> its TensorType (from_mlir)
_ELEMENT_TYPES = {}  # dtype -> its element type after lowering in the shared context (element_type)
_shared_context = None


def in_shared_context():
    """Whether the MLIR context entered now is the shared one (dialects/context.py): what is made in it can be
    kept for the life of the process."""
    return _shared_context is not None and ir.Context.current is _shared_context


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
    shared = _shared_context is not None and ir.Context.current is _shared_context
    t = _ELEMENT_TYPES.get(dtype) if shared else None
    if t is None:
        t = ir.Type.parse(dtype.mlir.replace("ui", "i"))  # parsing costs ~30 us: remembered in the shared context
        if shared:
            _ELEMENT_TYPES[dtype] = t
    return t


def lowered_tensor_type(tt):
    """The tensor type a tfn tensor type has after lowering (see element_type)."""
    return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in tt.shape],
                                   element_type(tt.dtype), loc=ir.Location.unknown())
