"""`concrete.inference_fn`: a trace's compiled code called on flat tensors, without binding (TF's AtomicFunction)."""
from tfn.core.tensor import Tensor
from tfn.core.tensor_spec import shape_is_subtype
from tfn.dialects.errors import InvalidArgumentError


class AtomicFunction:
    """Calls one ConcreteFunction's executable with its flat tensor inputs, in order; returns its outputs."""

    __slots__ = ("_concrete", "_specs", "_symbol")

    def __init__(self, concrete):
        self._concrete = concrete
        self._specs = concrete._arg_specs
        self._symbol = concrete.graph.symbol

    @property
    def name(self):
        return self._symbol

    def __call__(self, *tensors):
        if len(tensors) != len(self._specs):
            raise TypeError(f"{self._symbol} takes {len(self._specs)} tensors ({', '.join(map(repr, self._specs))}), "
                            f"got {len(tensors)}")
        arrays = [self._array(i, x, spec) for i, (x, spec) in enumerate(zip(tensors, self._specs))]
        c = self._concrete
        return c._pack_outputs(c._call_flat(arrays))

    def _array(self, i, x, spec):
        """The array of input `i`, as TF's error when it is not a tensor of the input's dtype and shape."""
        if type(x) is not Tensor:
            raise InvalidArgumentError(f"cannot compute {self._symbol} as input #{i}(zero-based) was expected to be "
                                       f"a {spec.dtype.name} tensor but is a {type(x).__name__} "
                                       f"[Op:{self._symbol}]")
        if x._dtype is not spec.dtype:
            raise InvalidArgumentError(f"cannot compute {self._symbol} as input #{i}(zero-based) was expected to be "
                                       f"a {spec.dtype.name} tensor but is a {x._dtype.name} tensor "
                                       f"[Op:{self._symbol}]")
        if not shape_is_subtype(x._shape, spec.shape._dims):
            raise InvalidArgumentError(f"cannot compute {self._symbol} as input #{i}(zero-based) was expected to "
                                       f"have shape {spec.shape} but has shape {x.shape} [Op:{self._symbol}]")
        return x._value

    def __repr__(self):
        return f"<AtomicFunction {self._symbol}>"
