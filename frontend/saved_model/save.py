"""`tfn.saved_model.save(obj, export_dir, signatures=None)`: write a module's variables and its functions' traces
(IR and native code) to a folder that `tfn.saved_model.load` reads in another process (see manifest.py)."""
import functools
import inspect
import io
import os
import platform
import sys

import numpy as np

from tfn import runtime
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects.types import TensorType
from tfn.saved_model import encoding, manifest, prints
from tfn.saved_model.encoding import NotSaveable
from tfn.state.module import Module
from tfn.state.variables import Variable
from tfn.tracing import trace_type
from tfn.tracing.function import ConcreteFunction, graph_output_types
from tfn.tracing.polymorphic import PolymorphicFunction
from tfn.version import __version__

SAVEABLE_KINDS = {k.name: k for k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      inspect.Parameter.KEYWORD_ONLY)}
DEFAULT_SIGNATURE = "serving_default"


class Exported:
    """What a saved model stores of one concrete function: a live trace's, or a loaded one's (saved again)."""

    def __init__(self, name, symbol, ir, native, native_fingerprint, params, in_types, out_types, captures,
                 writebacks, outputs, out_leaves, prints=0):
        self.name, self.symbol, self.ir, self.native = name, symbol, ir, native
        self.native_fingerprint = native_fingerprint  # what `native` was built for (runtime.native_fingerprint)
        self.params = params            # [(name, inspect kind, trace type)]
        self.in_types, self.out_types = in_types, out_types  # TensorTypes of the compiled code's flat inputs/results
        self.captures = captures        # per input after the arguments': a Variable or a constant array
        self.writebacks = writebacks    # per result after the user's: (Variable, shape known at trace time)
        self.outputs, self.out_leaves = outputs, out_leaves  # JSON forms (encoding.structure, encoding.output_leaf)
        self.prints = prints            # callback sites, all tfn.print ops (prints.py)


def from_concrete(c):
    """The Exported form of a traced ConcreteFunction; NotSaveable naming what cannot be saved."""
    n_callbacks = len(c.graph.callbacks)
    if n_callbacks:
        with c.graph.module.context:
            printed = prints.sites(c.graph.module)
        if set(printed) != set(range(n_callbacks)):
            raise NotSaveable(f"it calls back into Python ({n_callbacks - len(printed)} tfn.py_function or other "
                              "callback site(s)): the Python code it runs is not part of the trace")
    params = []
    for name, kind, t in c.function_type.params:
        if kind.name not in SAVEABLE_KINDS:
            raise NotSaveable(f"its parameter '{name}' is {kind.description}")
        try:
            encoding.param_type(t)
        except NotSaveable as e:
            raise NotSaveable(f"its parameter '{name}': {e}") from None
        params.append((name, kind, t))
    captures = []
    for src, _, _ in c.graph.captures:
        if isinstance(src, Variable):
            if src._array is None:
                raise NotSaveable(f"the variable {src.name} it uses has no value yet (call the function first)")
            captures.append(src)
        else:
            captures.append(src._value)
    writebacks = []
    for setter in c._writebacks:  # variables.written_state: a bound _write_back, or a partial of the checked one
        if isinstance(setter, functools.partial):
            writebacks.append((setter.func.__self__, False))
        else:
            writebacks.append((setter.__self__, True))
    buf = io.BytesIO()
    c.graph.module.operation.write_bytecode(buf)
    native = runtime.native_code(c.graph.module, symbol=c.graph.symbol, name=c.name)
    in_types = [runtime_type(t) for t in c.graph.inputs]
    return Exported(c.name, c.graph.symbol, buf.getvalue(), native, runtime.native_fingerprint(), params, in_types,
                    graph_output_types(c.graph), captures, writebacks, encoding.structure(c._out_structure),
                    [encoding.output_leaf(kind, v) for kind, v in c._out_leaves], n_callbacks)


def runtime_type(t):
    return TensorType(t._shape, t._dtype)


def _concretes_of(fn, attr):
    """The concrete functions of a tfn.function to save: its traces, tracing its input_signature if none yet."""
    if isinstance(fn, PolymorphicFunction):
        if not fn._concretes and fn.input_signature is not None:
            fn.get_concrete_function()
        out = []
        for c in fn._concretes:
            if not isinstance(c, ConcreteFunction):
                raise NotSaveable(f"tfn.function '{attr}' has a trace of unknown rank, which cannot be saved; give "
                                  "its input_signature a rank")
            out.append(c)
        return out
    return list(fn._concretes)  # a loaded function (load.RestoredFunction), saved again


def _exported(c, where):
    if isinstance(c, ConcreteFunction):
        try:
            return from_concrete(c)
        except NotSaveable as e:
            raise ValueError(f"tfn.saved_model.save cannot save tfn.function '{c.name}' ({where}): {e}") from None
    return c.exported()


def _functions(obj):
    """{attribute name: tfn.function or loaded function} of the object to save."""
    if isinstance(obj, PolymorphicFunction) or _restored_function(obj):
        return {"__call__": obj}
    found = {}
    for name in sorted(set(dir(type(obj)))):
        if isinstance(inspect.getattr_static(type(obj), name, None), PolymorphicFunction):
            found[name] = getattr(obj, name)  # bound to obj: its traces are obj's
    for name, value in vars(obj).items():
        if isinstance(value, PolymorphicFunction) or _restored_function(value):
            found[name] = value
    return found


def _restored_function(x):
    """Whether x is a loaded function (load.RestoredFunction; load.py imports this module)."""
    return getattr(type(x), "_tfn_restored_function", False)


def _variable_paths(module):
    """[(variable, attribute path)] of a module's variables, breadth first as Module.variables finds them; a path
    is a list of ["attr", name], ["item", index] or ["key", key] steps."""
    out, seen, found = [], {id(module)}, set()
    queue = [(module, [])]
    while queue:
        obj, path = queue.pop(0)
        for key in sorted(vars(obj)):
            if key == "_tfn_variables":  # a loaded object's list of all its variables: not where they live
                continue
            stack = [(vars(obj)[key], path + [["attr", key]])]
            while stack:
                value, at = stack.pop(0)
                if isinstance(value, Variable):
                    if id(value) not in found:
                        found.add(id(value))
                        out.append((value, at))
                elif isinstance(value, Module):
                    if id(value) not in seen:
                        seen.add(id(value))
                        queue.append((value, at))
                elif type(value) in (list, tuple):
                    stack += [(v, at + [["item", i]]) for i, v in enumerate(value)]
                elif type(value) is dict:
                    stack += [(value[k], at + [["key", k]]) for k in sorted(value, key=str) if isinstance(k, str)]
    return out


def _signature_concretes(obj, functions, signatures):
    """{signature name: concrete function} (live or loaded) as TF chooses them."""
    if signatures is None:
        with_signature = {n: f for n, f in functions.items()
                          if isinstance(f, PolymorphicFunction) and f.input_signature is not None}
        if len(with_signature) == 1:
            (fn,) = with_signature.values()
            return {DEFAULT_SIGNATURE: (fn.get_concrete_function(), _spec_names(fn))}
        inherited = getattr(obj, "signatures", None)  # a loaded object saved again keeps its signatures
        if not isinstance(inherited, dict):
            return {}
        return {n: (s._concrete, [i for i, _ in s._inputs]) for n, s in inherited.items()}
    if not isinstance(signatures, dict):
        signatures = {DEFAULT_SIGNATURE: signatures}
    out = {}
    for name, s in signatures.items():
        if isinstance(s, PolymorphicFunction):
            if s.input_signature is None:
                raise ValueError(f"signature '{name}': tfn.function '{s._name}' has no input_signature; pass its "
                                 "concrete function (f.get_concrete_function(tfn.TensorSpec(...)))")
            s, names = s.get_concrete_function(), _spec_names(s)
        elif not isinstance(s, ConcreteFunction) and not hasattr(s, "exported"):
            raise ValueError(f"signature '{name}' must be a tfn.function with an input_signature or a concrete "
                             f"function, got {type(s).__name__}")
        else:
            names = None
        out[name] = (s, names)
    return out


def _spec_names(fn):
    """The input names a tfn.function's input_signature gives its tensor parameters (None where unnamed)."""
    return [spec.name for spec in fn.input_signature]


def _signature_entry(name, exported, index, names):
    """The manifest entry of a signature: keyword tensor inputs by parameter name, outputs by TF's names."""
    inputs = []
    for i, (pname, _, t) in enumerate(exported.params):
        if isinstance(t, TensorSpec):
            inputs.append([(names[i] if names and i < len(names) else None) or t.name or pname, pname])
        elif type(t) is not trace_type.Literal:  # a Python value keeps its traced value
            raise ValueError(f"signature '{name}' of '{exported.name}': parameter '{pname}' is {t!r}; a signature "
                             "takes tensors only")
    s = exported.outputs
    n = len(exported.out_leaves)
    if s == 0:
        outputs = ["output_0"]
    elif "dict" in s and all(v == 0 for _, v in s["dict"]):
        outputs = [k for k, _ in s["dict"]]
    elif ("list" in s or "tuple" in s) and all(v == 0 for v in next(iter(s.values()))):
        outputs = [f"output_{i}" for i in range(n)]
    else:
        raise ValueError(f"signature '{name}' of '{exported.name}' returns a nested structure; a signature returns "
                         "a tensor, a flat list/tuple of tensors or a flat dict of tensors")
    return {"concrete": index, "inputs": inputs, "outputs": outputs}


def save(obj, export_dir, signatures=None, options=None):
    """Save a tfn.Module (its variables and the traces of its tfn.functions) or a tfn.function to `export_dir`.

    A tfn.function with an input_signature is traced for it if it has no trace yet; one without is saved with
    the traces its calls made. `signatures`: a tfn.function with an input_signature, a concrete function, or a
    dict of them by name (default: the only tfn.function with an input_signature, as 'serving_default')."""
    bare = isinstance(obj, PolymorphicFunction) or _restored_function(obj)
    if not bare and not isinstance(obj, Module):
        raise ValueError(f"Expected an object of type `tfn.Module` or a `tfn.function` to save, got {obj!r} of "
                         f"type {type(obj).__name__}")
    export_dir = os.fspath(export_dir)
    functions = _functions(obj)
    exported, index_of = [], {}

    def add(c, where):
        if id(c) not in index_of:
            index_of[id(c)] = len(exported)
            exported.append(_exported(c, where))
        return index_of[id(c)]

    function_entries = {attr: [add(c, f"attribute '{attr}'") for c in _concretes_of(fn, attr)]
                        for attr, fn in functions.items()}
    signature_concretes = _signature_concretes(obj, functions, signatures)
    signature_entries = {n: _signature_entry(n, exported[i], i, names)
                         for n, i, names in ((n, add(c, f"signature '{n}'"), names)
                                             for n, (c, names) in signature_concretes.items())}

    variables = _variable_paths(obj) if isinstance(obj, Module) else []
    known = {id(v) for v, _ in variables}
    for e in exported:  # variables the functions use that no attribute holds are saved too (without a path)
        for v in [c for c in e.captures if isinstance(c, Variable)] + [v for v, _ in e.writebacks]:
            if id(v) not in known:
                known.add(id(v))
                variables.append((v, None))
    var_index = {id(v): i for i, (v, _) in enumerate(variables)}

    files, constants = {}, []
    var_entries = []
    for i, (v, path) in enumerate(variables):
        if v.dtype.is_string:
            raise ValueError(f"tfn.saved_model.save cannot save the string variable {v.name} yet")
        rel = f"variables/{i}.npy"
        files[rel] = _npy(v._array)
        var_entries.append({"name": v.name.rsplit(":", 1)[0], "dtype": v.dtype.name, "shape": list(v._shape),
                            "trainable": v.trainable, "path": path, "file": rel})
    concrete_entries = []
    for i, e in enumerate(exported):
        captures = []
        for c in e.captures:
            if isinstance(c, Variable):
                captures.append(["variable", var_index[id(c)]])
            else:
                rel = f"constants/{len(constants)}.npy"
                files[rel] = _npy(c)
                constants.append(rel)
                captures.append(["constant", rel])
        files[f"functions/{i}.mlirbc"] = e.ir
        files[f"functions/{i}.so"] = e.native
        concrete_entries.append({
            "name": e.name, "symbol": e.symbol, "ir": f"functions/{i}.mlirbc", "native": f"functions/{i}.so",
            "native_fingerprint": e.native_fingerprint,
            "params": [{"name": n, "kind": k.name, "type": encoding.param_type(t)} for n, k, t in e.params],
            "in_types": [encoding.tensor_type(t) for t in e.in_types],
            "out_types": [encoding.tensor_type(t) for t in e.out_types],
            "captures": captures, "writebacks": [[var_index[id(v)], static] for v, static in e.writebacks],
            "print_sites": e.prints,
            "outputs": e.outputs, "out_leaves": e.out_leaves})
    target = runtime.current_target()
    manifest.write(export_dir, files, {
        "tfn_version": _tfn_version(), "kind": "function" if bare else "module",
        "target": {"triple": _triple(target.arch), "arch": target.arch, "os": sys.platform,
                   "isa": target.isa, "cpu": target.cpu,
                   "llvm_features": list(target.llvm_features), "cpu_features": _cpu_features(),
                   "python": platform.python_version()},
        "variables": var_entries, "functions": function_entries, "concrete_functions": concrete_entries,
        "signatures": signature_entries})


def _npy(array):
    buf = io.BytesIO()
    np.save(buf, np.array(array, order="C"), allow_pickle=False)  # (ascontiguousarray makes 0-d 1-d)
    return buf.getvalue()


def _tfn_version():
    return __version__



def _triple(arch):
    return {"linux": f"{arch}-unknown-linux-gnu", "darwin": f"{arch}-apple-darwin"}.get(sys.platform,
                                                                                     f"{arch}-unknown-{sys.platform}")


def _cpu_features():
    host = runtime.native_fingerprint()["host"]  # "<os>-<arch>;<feature flags>"
    return host.partition(";")[2].split()
