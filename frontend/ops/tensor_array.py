"""`tfn.TensorArray`: a list of same-shaped tensors written and read by (possibly run-time) index.

Its value is one buffer tensor of shape [capacity, *element_shape] (plus, when they can change at run time, an
int32 size and capacity), so a TensorArray used as a loop variable is carried through scf.while as tensors
(control_flow.py's composite protocol). A write is a tensor_scatter_update of one row, which bufferizes in place.
Writes return a new TensorArray (TF2's functional style: `ta = ta.write(i, x)`). With dynamic_size=True the
buffer doubles when a write goes past its capacity. The element shape comes from `element_shape` or the first
write; a TensorArray first written inside a loop gets its buffer before the loop (the body is traced again).
As in TF2, clear_after_read is accepted and ignored, and unwritten elements read as zeros.
"""
import numpy as np

from tfn import dtypes
from tfn.control_flow.while_loop import build_while
from tfn.core.tensor import SymbolicTensor, Tensor, TensorBase, constant, convert_to_tensor, known
from tfn.core.tensor_shape import TensorShape
from tfn.dialects.errors import InvalidArgumentError
from tfn.ops.array_ops import concat, expand_dims, reshape
from tfn.ops.fill_ops import zeros, zeros_like
from tfn.ops.math_ops import add, cast, less, maximum
from tfn.ops.reduction_ops import reduce_max
from tfn.ops.scatter_ops import tensor_scatter_nd_update
from tfn.ops.shape_ops import shape
from tfn.ops.slicing_ops import gather


def _static_int(x):
    """x as a Python int when known at trace time, else None."""
    x = known(x)
    if isinstance(x, SymbolicTensor):
        return None
    if isinstance(x, Tensor):
        return int(x.numpy())
    return int(x)


class TensorArray:
    """TF's TensorArray: write/read/stack/unstack/gather/scatter/concat/size, eagerly and inside tfn.function."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if size is None and not dynamic_size:
            raise ValueError("Size must be provided if handle is not provided")
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        shape = None if element_shape is None else TensorShape(element_shape)
        self._element_shape = None if shape is None or shape.rank is None else tuple(shape)
        self._buffer = None
        size = 0 if size is None else size
        if isinstance(size, TensorBase) and (size.ndim or not size.dtype.is_integer):
            raise ValueError(f"TensorArray size must be a scalar int32, got {size!r}")
        self._size = _static_int(size) if _static_int(size) is not None else cast(size, dtypes.int32)
        self._cap = None  # the buffer's leading dim as an int32 tensor (dynamic_size only)

    # --- properties ------------------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return TensorShape(self._element_shape)

    @property
    def dynamic_size(self):
        return self._dynamic_size

    def size(self, name=None):
        """The number of elements, an int32 scalar tensor."""
        return convert_to_tensor(self._size, dtypes.int32) if not isinstance(self._size, TensorBase) else self._size

    def identity(self):
        return self._copy(self._buffer, self._size, self._cap)

    def close(self, name=None):
        return None

    def __repr__(self):
        return (f"<tfn.TensorArray dtype={self._dtype.name} size={self._size!r} dynamic_size={self._dynamic_size} "
                f"element_shape={self.element_shape}>")

    # --- loop-value protocol (control_flow.py) ---------------------------------------------------------
    def _tfn_components(self):
        if self._buffer is None:
            return []
        extra = [self._size] if isinstance(self._size, TensorBase) else []
        return [self._buffer] + extra + ([self._cap] if self._dynamic_size else [])

    def _tfn_rebuild(self, tensors):
        if not tensors:
            return self._copy(None, self._size, self._cap)
        it = iter(tensors[1:])
        size = next(it) if isinstance(self._size, TensorBase) else self._size
        cap = next(it) if self._dynamic_size else None
        return self._copy(tensors[0], size, cap)

    def _tfn_structure(self):
        return ("TensorArray", self._dtype.name, self._dynamic_size)

    def _tfn_invariants(self):
        """The buffer's leading dim may change across iterations when the array can grow."""
        first = (None,) + self._element_shape if self._dynamic_size else None
        return [first] + [None] * (len(self._tfn_components()) - 1)

    def _tfn_learn(self, written):
        """Take the element shape that `written` (this array after a loop body) learned; allocate the buffer."""
        self._element_shape = written._element_shape
        self._allocate()

    # --- internals -------------------------------------------------------------------------------------
    def _copy(self, buffer, size, cap):
        ta = object.__new__(TensorArray)
        ta._dtype, ta._dynamic_size, ta._element_shape = self._dtype, self._dynamic_size, self._element_shape
        ta._buffer, ta._size, ta._cap = buffer, size, cap
        return ta

    def _allocate(self):
        """A zero buffer for the known element shape: [size] rows, at least one when the array can grow."""
        if self._element_shape is None or None in self._element_shape:
            raise ValueError(f"TensorArray element shape {self.element_shape} is not fully defined; pass a static "
                             "element_shape= to create the TensorArray")
        rows = _static_int(self._size)
        if rows is None:
            raise ValueError("a TensorArray whose size is computed at run time needs a static element_shape= and "
                             "a first write outside a loop")
        cap = max(rows, 1) if self._dynamic_size else rows
        self._buffer = zeros((cap,) + self._element_shape, self._dtype)
        if self._dynamic_size:
            self._size = convert_to_tensor(rows, dtypes.int32)
            self._cap = convert_to_tensor(cap, dtypes.int32)

    def _value_of(self, value, what):
        value = convert_to_tensor(value, preferred_dtype(value, self._dtype))
        if value.dtype is not self._dtype:
            raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is trying to {what} dtype "
                                       f"{value.dtype.name}")
        return value

    def _check_shape(self, shape, what):
        elem = self._element_shape
        if elem is None:
            return tuple(shape)
        if len(elem) != len(shape) or any(a is not None and b is not None and a != b for a, b in zip(elem, shape)):
            raise ValueError(f"Could not {what}: the value's element shape {TensorShape(shape)} is incompatible with "
                             f"the TensorArray's element shape {TensorShape(elem)}")
        return tuple(a if a is not None else b for a, b in zip(elem, shape))

    def _index(self, index, what):
        i = convert_to_tensor(index)
        if i.dtype not in (dtypes.int32, dtypes.int64) or i.ndim:
            raise TypeError(f"TensorArray {what} index must be a scalar int32/int64, got {index!r}")
        return i

    def _stacked(self):
        """The buffer without rows past the size (which only a growing array has)."""
        if not self._dynamic_size:
            return self._buffer
        return self._buffer[:self._size]

    # --- reads and writes ------------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """A TensorArray with element `index` set to `value`."""
        value = self._value_of(value, "write")
        i = self._index(index, "write")
        ta = self._copy(self._buffer, self._size, self._cap)
        ta._element_shape = self._check_shape(value.shape, f"write to TensorArray index {index}")
        if ta._buffer is None:
            ta._allocate()
        known = _static_int(i)
        if known is not None and known < 0:
            raise InvalidArgumentError(f"Tried to write to index {known} but it is negative")
        if not ta._dynamic_size:
            size = _static_int(ta._size)
            if known is not None and size is not None and known >= size:
                raise InvalidArgumentError(f"Tried to write to index {known} but array is not resizeable and size "
                                           f"is: {size}")
        else:
            ta._grow(add(cast(i, dtypes.int32), 1))
        ta._buffer = tensor_scatter_nd_update(ta._buffer, reshape(cast(i, dtypes.int32), [1, 1]),
                                                  expand_dims(value, 0))
        return ta

    def _grow(self, need):
        """Double the buffer until it holds `need` rows (int32 tensor); the size becomes max(size, need)."""
        inv = ((None,) + self._element_shape, None)
        # The loop of tfn.control_flow, not tfn.while_loop: a while loop's gradient keeps its values in TensorArrays
        # (tfn.gradients.while_gradient), so TensorArray cannot depend on the differentiable loop. Under a tape the
        # growth is a construct without a gradient: a gradient through a growing TensorArray raises, naming it.
        self._buffer, self._cap = build_while(
            lambda b, c: less(c, need), lambda b, c: (concat([b, zeros_like(b)], 0), c * 2),
            (self._buffer, self._cap), ("TensorArray buffer", "TensorArray capacity"), shape_invariants=inv)
        self._size = maximum(self._size, need)

    def read(self, index, name=None):
        """Element `index` (zeros if never written); an index past the size raises InvalidArgumentError."""
        i = self._index(index, "read")
        known, size = _static_int(i), _static_int(self._size)
        if known is not None and size is not None and not 0 <= known < size:
            raise InvalidArgumentError(f"Tried to read from index {known} but array size is: {size}")
        if self._buffer is None:
            return zeros(self._full_element_shape("read"), self._dtype)
        return gather(self._stacked(), i)

    def _full_element_shape(self, what):
        if self._element_shape is None or None in self._element_shape:
            raise ValueError(f"Could not {what} from the TensorArray: nothing was written to it and its element "
                             f"shape {self.element_shape} is not fully defined")
        return self._element_shape

    def stack(self, name=None):
        """All elements stacked into one tensor of shape [size, *element_shape]."""
        if self._buffer is None:
            rows = _static_int(self._size)
            return zeros((rows,) + self._full_element_shape("stack"), self._dtype)
        return self._stacked()

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        if self._buffer is None:
            return gather(self.stack(), indices)
        return gather(self._stacked(), indices)

    def concat(self, name=None):
        """All elements joined along their first dimension: shape [size * d0, *element_shape[1:]]."""
        stacked = self.stack()
        elem = stacked.shape.as_list()[1:]
        if not elem:
            raise ValueError("Concatenating scalars in a TensorArray is unsupported; stack them instead")
        if None in elem[1:]:
            raise ValueError(f"concat needs the element shape after its first dim known, got {TensorShape(elem)}")
        return reshape(stacked, [-1] + elem[1:])

    def unstack(self, value, name=None):
        """A TensorArray whose elements are the slices of `value` along its first dimension."""
        value = self._value_of(value, "unstack")
        if value.ndim == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0 for 'unstack'")
        ta = self._copy(value, None, None)
        ta._element_shape = self._check_shape(value.shape[1:], "unstack into the TensorArray")
        rows = value.shape[0]
        if self._dynamic_size:
            n = convert_to_tensor(rows, dtypes.int32) if rows is not None else _leading_dim(value)
            ta._size, ta._cap = n, n
        else:
            size = None if self._size is None else _static_int(self._size)
            if rows is not None and size is not None and rows > size:  # (TF's check; the rows past it were kept)
                raise ValueError(f"Cannot unstack {rows} tensors into a TensorArray of static size {size}")
            ta._size = rows if rows is not None else _leading_dim(value)
        return ta

    def scatter(self, indices, value, name=None):
        """A TensorArray with element indices[j] set to value[j]."""
        value = self._value_of(value, "scatter")
        idx = convert_to_tensor(indices)
        if idx.ndim != 1 or idx.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"TensorArray scatter indices must be a vector of int32/int64, got {indices!r}")
        ta = self._copy(self._buffer, self._size, self._cap)
        ta._element_shape = self._check_shape(value.shape[1:], "scatter into the TensorArray")
        if ta._buffer is None:
            ta._allocate()
        idx = cast(idx, dtypes.int32)
        if ta._dynamic_size:
            ta._grow(add(reduce_max(concat([idx, constant([-1])], 0)), 1))
        ta._buffer = tensor_scatter_nd_update(ta._buffer, expand_dims(idx, 1), value)
        return ta

    def split(self, value, lengths, name=None):
        """A TensorArray of the pieces of `value` along its first dim (all `lengths` must be equal here)."""
        lengths = known(lengths)
        lengths = [int(n) for n in np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths).ravel()]
        if len(set(lengths)) > 1:
            raise ValueError(f"tfn.TensorArray.split needs equal lengths (its elements share one shape), got {lengths}")
        value = self._value_of(value, "split")
        n = len(lengths)
        rest = value.shape.as_list()[1:]
        pieces = reshape(value, [n, lengths[0] if lengths else 0] + rest) if n else value
        return self.unstack(pieces)


def preferred_dtype(value, dtype):
    """Python values convert to the array's dtype; tensors keep theirs (and are checked)."""
    return None if isinstance(value, TensorBase) else dtype


def _leading_dim(value):
    """value.shape[0] as an int32 tensor when it is only known at run time."""
    return shape(value, out_type=dtypes.int32)[0]
