"""`tfn.experimental.aot_compile`: a concrete function compiled ahead of time into a C library (TF's tfcompile role).

The library (`lib<name>.so`) and its header (`<name>.h`) are built by runtime/aot.py; this module decides what of
the traced function they hold:
- arguments: the function's tensor arguments, in order, with static shapes (a None dimension is refused: the
  caller could not know its outputs' sizes); outputs: the function's tensor results, flattened (nest order);
- captured variables and large captured tensors are frozen: their values at compile time become constants of the
  library (as tfcompile's frozen graphs); a function that assigns to a variable is refused (a library has no state);
- anything that calls back into Python (tfn.print, tfn.py_function, string tensors) is refused, naming the op.
"""
import keyword
import os
import re

import numpy as np

from tfn.core.tensor import Tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.types import TensorType
from tfn.runtime import aot as runtime_aot
from tfn.state import variables
from tfn.tracing.function import ConcreteFunction, graph_output_types
from tfn.tracing.polymorphic import PolymorphicFunction

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "bool true false _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert "
    "_Thread_local NULL main".split())
# Names the generated entry point uses besides its parameters (runtime/aot_c.py), never given to an argument.
_RESERVED = frozenset("memcpy memset size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uintptr_t".split())
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Library = runtime_aot.Library


def aot_compile(function, out_dir, name=None, *, target_features=None):
    """Compile `function` ahead of time into `out_dir/lib<name>.so` and `out_dir/<name>.h`; returns a Library
    (`.library`, `.header`: the two paths).

    function: a ConcreteFunction (`f.get_concrete_function(...)`), or a tfn.function with an input_signature.
    name: the C entry point and library name (default: the function's name); a C identifier.
    target_features: the instruction-set level to generate code for (`native`, `avx2`, `sse`, ... as
    TFN_TARGET_FEATURES; default: that variable, else this machine's): the library runs on CPUs that have it.

    The entry point is `int <name>(const T *arg, ..., T *out0, ...)` (see the header for shapes and the error
    convention). Captured variables are frozen at their current values."""
    concrete = _concrete(function)
    name = _c_name(name, "name") if name is not None else _c_name(concrete.name, "the function's name", "; pass name=")
    if not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"out_dir must be a path, got {type(out_dir).__name__}")
    g = concrete.graph
    if concrete._initializer is not None or g.created_variables:
        raise ValueError(f"cannot compile '{concrete.name}' ahead of time: it creates variables when it is "
                         "traced; create them outside (in a tfn.Module or before the function) and trace again")
    if g.writebacks:
        raise ValueError(f"cannot compile '{concrete.name}' ahead of time: it assigns to a variable, and a library "
                         "compiled ahead of time holds no state (its captured variables are frozen constants); "
                         "return the new value instead")
    runtime_aot.refuse_callbacks(g.module, concrete.name)
    n_args = len(g.inputs) - len(g.captures)
    sources = variables.capture_sources(g)
    frozen = {n_args + i: np.ascontiguousarray(read()) for i, read in enumerate(sources)}
    in_types = [TensorType(t._shape, t._dtype) for t in g.inputs[:n_args]]
    out_types = graph_output_types(g)
    in_names = _argument_names(g.inputs[:n_args])
    for n, t in zip(in_names, in_types):
        _check_type(concrete.name, f"argument '{n}'", t, "give the input_signature (or the TensorSpec traced with) "
                    "a fully defined shape")
    outputs = []
    for i, (kind, value) in enumerate(concrete._out_leaves):
        if kind == "result":
            outputs.append(value)
            _check_type(concrete.name, f"output {i}", out_types[value], "its shape depends on the values of the "
                        "arguments")
        elif isinstance(value, Tensor):  # a constant tensor returned as it is: the library returns its value
            _check_type(concrete.name, f"output {i}", TensorType(value.shape, value.dtype), "")
            outputs.append(np.ascontiguousarray(value._value))
        else:
            raise ValueError(f"cannot compile '{concrete.name}' ahead of time: its output {i} is the Python value "
                             f"{value!r}, not a tensor; return tensors only")
    module = runtime_aot.freeze(g.module, g.symbol, frozen) if frozen else g.module
    return runtime_aot.build_library(module, symbol=g.symbol, in_types=in_types, out_types=out_types,
                                     outputs=outputs, in_names=in_names, out_dir=os.fspath(out_dir), name=name,
                                     function_name=concrete.name, features=target_features)


def _concrete(function):
    if isinstance(function, ConcreteFunction):
        return function
    if isinstance(function, PolymorphicFunction):
        if function.input_signature is None:
            raise ValueError(f"aot_compile needs a concrete function: '{function._name}' has no input_signature; "
                             "pass f.get_concrete_function(tfn.TensorSpec(shape, dtype), ...)")
        return function.get_concrete_function()
    raise TypeError(f"aot_compile expects a ConcreteFunction or a tfn.function with an input_signature, "
                    f"got {type(function).__name__}")


def _c_name(text, what, hint=""):
    if not isinstance(text, str) or not _IDENTIFIER.match(text) or text in _C_KEYWORDS or keyword.iskeyword(text):
        raise ValueError(f"aot_compile: {what} {text!r} is not usable as a C identifier (letters, digits and '_', "
                         f"not starting with a digit, not a C keyword){hint}")
    return text


def _argument_names(inputs):
    """C identifiers for the arguments: their trace names, made valid and unique (`out<i>` is an output's)."""
    names, taken = [], set()
    for i, t in enumerate(inputs):
        base = re.sub(r"[^A-Za-z0-9_]", "_", t._name.rsplit(":", 1)[0]) or f"arg{i}"
        if (base[0].isdigit() or base in _C_KEYWORDS or base in _RESERVED
                or re.match(r"out\d+\Z|tfn_|_mlir", base, re.IGNORECASE)):
            base = f"arg_{base}"
        name, k = base, 1
        while name.upper() in taken:  # the header's macros spell names in capitals
            name, k = f"{base}_{k}", k + 1
        taken.add(name.upper())
        names.append(name)
    return names


def _check_type(function_name, what, t, hint):
    if t.dtype.is_string:
        raise ValueError(f"cannot compile '{function_name}' ahead of time: its {what} is a string tensor, which "
                         "needs the Python runtime")
    if any(d is None for d in t.shape):
        spec = TensorSpec(t.shape, t.dtype)
        raise ValueError(f"cannot compile '{function_name}' ahead of time: its {what} has the dynamic shape "
                         f"{spec.shape} ({spec!r}); a library compiled ahead of time takes static shapes: {hint}")
