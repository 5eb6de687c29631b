"""`tfn.saved_model.load(export_dir)`: the object a saved model describes, its functions callable with their
signatures and its variables restored as trainable `tfn.Variable`s, without the Python source that made them.

Each concrete function's stored native code is loaded when it was built for this machine as it is now (the same
toolchain and tfn source, target and CPU features: runtime.native_fingerprint); otherwise it is compiled again
from its stored IR (through the artifact cache). Under a GradientTape a loaded function runs its IR op by op
(replay.py), so that the tape records it."""
import inspect
import io
import os

import numpy as np
from mlir import ir

from tfn import nest, runtime
from tfn.core.tensor import Tensor, TensorBase, convert_to_tensor
from tfn.core.tensor_spec import TensorSpec
from tfn.dialects import context
from tfn.dialects.errors import DataLossError
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import tapes_here
from tfn.runtime import stored
from tfn.saved_model import encoding, manifest, prints, replay, save
from tfn.state import variables
from tfn.state.module import Module
from tfn.state.variables import Variable
from tfn.tracing import trace_type


class _Loaded(Module):
    """A loaded object: its attributes (variables, and objects holding them), functions and `signatures`."""

    _tfn_restored = True

    def __init__(self):
        super().__init__(name="loaded")

    def __call__(self, *args, **kwargs):
        fn = vars(self).get("__call__")
        if fn is None:
            raise TypeError("this loaded object was saved without a __call__ function and is not callable")
        return fn(*args, **kwargs)


class RestoredConcrete:
    """One loaded trace: binds a call to its parameters, runs its native code with the variables it uses."""

    def __init__(self, entry, ir_bytes, native, fingerprint, executable, variables, constants):
        self.name = entry["name"]
        self.symbol = entry["symbol"]
        self._entry, self._ir_bytes, self._native, self._fingerprint = entry, ir_bytes, native, fingerprint
        self._module = None
        self._executable = executable
        params = [(p["name"], save.SAVEABLE_KINDS[p["kind"]], encoding.from_param_type(p["type"]))
                  for p in entry["params"]]
        self.function_type = trace_type.FunctionType(params)
        self._in_types = [encoding.from_tensor_type(t) for t in entry["in_types"]]
        self._out_types = [encoding.from_tensor_type(t) for t in entry["out_types"]]
        self._captures = [variables[i] if kind == "variable" else constants[i] for kind, i in entry["captures"]]
        self._writebacks = [(variables[i], static) for i, static in entry["writebacks"]]
        self._locks = [v._lock for v in sorted({id(v): v for v, _ in self._writebacks}.values(),
                                               key=lambda v: v._uid)]
        self._structure = encoding.from_structure(entry["outputs"])
        self._leaves = [encoding.from_output_leaf(d) for d in entry["out_leaves"]]
        self._n_user = len(self._out_types) - len(self._writebacks)

    def module(self):
        """The stored IR, parsed (once) in tfn's context."""
        if self._module is None:
            self._module = parse_ir(self._ir_bytes, self.name)
        return self._module

    @property
    def structured_input_signature(self):
        params = self.function_type.params
        plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return (tuple(t for _, k, t in params if k in plain), {n: t for n, k, t in params if k not in plain})

    def _bind(self, args, kwargs):
        """(arrays of the tensor inputs, the values they came from) of a call, or a CastError/TypeError."""
        params = self.function_type.params
        positional = [i for i, (_, k, _) in enumerate(params) if k is not inspect.Parameter.KEYWORD_ONLY]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments but {len(args)} were given")
        values = dict(zip(positional, args))
        index = {n: i for i, (n, _, _) in enumerate(params)}
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None or params[i][1] is inspect.Parameter.POSITIONAL_ONLY:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{k}'")
            if i in values:
                raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
            values[i] = v
        arrays, sources = [], []
        for i, (name, _, t) in enumerate(params):
            if i not in values:
                if trace_type.has_tensors(t):
                    raise TypeError(f"{self.name}() missing required argument: '{name}'")
                continue  # a Python value keeps its traced value
            trace_type.cast(t, values[i], arrays)
            _tensor_sources(t, values[i], sources)
        return arrays, sources

    def __call__(self, *args, **kwargs):
        try:
            arrays, sources = self._bind(args, kwargs)
        except trace_type.CastError as e:
            return trace_type.bind_or_fallback(self.name, self.function_type, e, args, kwargs)
        return self._run(arrays, sources)

    def _run(self, arrays, sources):
        if _TAPES and tapes_here():
            return self._replay(arrays, sources)
        for lock in self._locks:
            lock.acquire()
        try:
            inputs = arrays + [c._current_array() if isinstance(c, Variable) else c for c in self._captures]
            results = self._executable(inputs)
            for (v, static), array in zip(self._writebacks, results[self._n_user:]):
                v._write_back(array) if static else v._write_back_checked(self.name, array)
        finally:
            for lock in reversed(self._locks):
                lock.release()
        return self._pack([Tensor._trusted(a, t.dtype) for a, t in zip(results, self._out_types)])

    def _replay(self, arrays, sources):
        """Run the stored IR op by op, eagerly, recorded on the tapes (replay.py)."""
        inputs = [s if isinstance(s, TensorBase) else Tensor._trusted(a, t.dtype)
                  for s, a, t in zip(sources, arrays, self._in_types)]
        inputs += [c if isinstance(c, Variable) else Tensor._trusted(c, t.dtype)
                   for c, t in zip(self._captures, self._in_types[len(arrays):])]
        results = replay.run(self.module(), self.symbol, self.name, inputs)
        for (v, _), value in zip(self._writebacks, results[self._n_user:]):
            v.assign(value)
        return self._pack(results)

    def _pack(self, results):
        leaves = [results[v] if kind == "result" else v for kind, v in self._leaves]
        return nest.pack_sequence_as(self._structure, leaves) if self._structure != 0 else leaves[0]

    def exported(self):
        """This trace as save.Exported, to save it again (with the variables' current values)."""
        native, fingerprint = self._native, self._fingerprint
        if native is None:  # compiled here from the IR: the artifact cache holds it
            native = runtime.native_code(self.module(), symbol=self.symbol, name=self.name)
            fingerprint = runtime.native_fingerprint()
        e = self._entry
        return save.Exported(self.name, self.symbol, self._ir_bytes, native, fingerprint,
                             list(self.function_type.params), self._in_types, self._out_types,
                             [c for c in self._captures], self._writebacks, e["outputs"], e["out_leaves"],
                             e.get("print_sites", 0))

    def __repr__(self):
        return f"<RestoredConcrete {self.name}{self.function_type.inputs_str()}>"


def _tensor_sources(t, x, out):
    """The values standing for the tensor leaves of type `t` in value `x`, in the order cast() reads them."""
    if isinstance(t, TensorSpec):
        out.append(x)
    elif type(t) is trace_type.Seq:
        for item, v in zip(t.items, x):
            _tensor_sources(item, v, out)
    elif type(t) is trace_type.Mapping:
        for k, item in t.items:
            _tensor_sources(item, x[k], out)


class RestoredFunction:
    """A loaded tfn.function: calls go to the first of its traces whose signature they fit."""

    _tfn_restored_function = True

    def __init__(self, name, concretes):
        self._name = name
        self._concretes = concretes

    @property
    def concrete_functions(self):
        return list(self._concretes)

    def __call__(self, *args, **kwargs):
        for c in self._concretes:
            try:
                arrays, sources = c._bind(args, kwargs)
            except (trace_type.CastError, TypeError):
                continue
            return c._run(arrays, sources)
        raise ValueError(_no_match_message(args, kwargs, self._concretes))

    def __repr__(self):
        return f"<RestoredFunction {self._name} with {len(self._concretes)} trace(s)>"


def _no_match_message(args, kwargs, concretes):
    """TF's message for a call that fits none of a loaded function's signatures."""
    def describe(args, kwargs):
        lines = [f"  Positional arguments ({len(args)} total):"]
        lines += [f"    * {a!r}" for a in args]
        lines.append(f"  Keyword arguments: {kwargs!r}")
        return lines
    lines = ["Could not find matching concrete function to call loaded from the SavedModel. Got:"]
    lines += describe(args, kwargs)
    lines += ["", f" Expected these arguments to match one of the following {len(concretes)} option(s):"]
    for i, c in enumerate(concretes, 1):
        lines += ["", f"Option {i}:", *describe(*c.structured_input_signature)]
    return "\n".join(lines)


class SignatureFunction:
    """`loaded.signatures[name]`: keyword tensors in, a dict of named tensors out (TF's signature functions)."""

    def __init__(self, name, concrete, inputs, outputs):
        self.name, self._concrete = name, concrete
        self._inputs = inputs  # [(input name, parameter name)]
        self._outputs = outputs
        specs = {p: t for p, _, t in concrete.function_type.params}
        self._specs = {i: specs[p] for i, p in inputs}

    @property
    def structured_input_signature(self):
        return ((), {i: TensorSpec(s.shape, s.dtype, i) for i, s in self._specs.items()})

    @property
    def structured_outputs(self):
        return {n: TensorSpec(t.shape, t.dtype, n) for n, t in zip(self._outputs, self._concrete._out_types)}

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError(f"signature_wrapper({', '.join(['*'] + [i for i, _ in self._inputs])}) takes 0 "
                            f"positional arguments but {len(args)} were given (signature functions take keyword "
                            "arguments)")
        unknown = sorted(set(kwargs) - set(self._specs))
        missing = [i for i, _ in self._inputs if i not in kwargs]
        if unknown or missing:
            raise TypeError(f"signature '{self.name}' takes the keyword arguments "
                            f"{', '.join(i for i, _ in self._inputs)}" + (f"; got unexpected {', '.join(unknown)}"
                                                                         if unknown else "")
                            + (f"; missing {', '.join(missing)}" if missing else ""))
        call = {p: convert_to_tensor(kwargs[i], self._specs[i].dtype) for i, p in self._inputs}
        result = self._concrete(**call)
        return dict(zip(self._outputs, nest.flatten(result)))

    def __repr__(self):
        return f"<SignatureFunction {self.name}({', '.join(i for i, _ in self._inputs)})>"


def parse_ir(data, name):
    """A saved function's traced IR (MLIR bytecode) as a module in tfn's context."""
    ctx = context.shared_context()
    try:
        with ctx:
            return ir.Module.parse(data)
    except (ir.MLIRError, ValueError) as e:
        raise ValueError(f"the stored IR of '{name}' cannot be read by this tfn (another version's tfn dialect?): "
                         f"{e}") from None


def _variable(entry, data):
    arr = np.load(io.BytesIO(data), allow_pickle=False)
    if arr.dtype.name != entry["dtype"] or not variables.fits(arr.shape, entry["shape"]):
        raise DataLossError(f"variable {entry['name']}: {entry['file']} holds a {arr.dtype} array of shape "
                            f"{arr.shape}, not the {entry['dtype']} {tuple(entry['shape'])} of its manifest")
    return variables.restored(arr, entry["shape"], entry["trainable"], entry["name"])


def _place(root, path, value):
    """Set `value` at attribute path `path` (save._variable_paths) below `root`, making the objects on the way."""
    def child(container, step, next_step):
        kind, key = step
        make = {"attr": _Loaded, "item": list, "key": dict}[next_step[0]]
        if kind == "attr":
            if key not in vars(container):
                setattr(container, key, make())
            return getattr(container, key)
        if kind == "item":
            while len(container) <= key:
                container.append(None)
            if container[key] is None:
                container[key] = make()
            return container[key]
        return container.setdefault(key, make())

    for step, next_step in zip(path, path[1:]):
        root = child(root, step, next_step)
    kind, key = path[-1]
    if kind == "attr":
        setattr(root, key, value)
    elif kind == "item":
        while len(root) <= key:
            root.append(None)
        root[key] = value
    else:
        root[key] = value


def load(export_dir, tags=None, options=None):
    """Load the module or function saved in `export_dir` (see tfn.saved_model.save).

    Loading runs the native code the folder holds (or compiles its IR): load only folders you trust. `tags` and
    `options` are accepted as TF's `load` takes them, and unused."""
    export_dir = os.fspath(export_dir)
    m = manifest.read(export_dir)
    files = {rel: manifest.read_file(export_dir, m, rel) for rel in sorted(m["files"])}
    try:
        return _restore(export_dir, m, files)
    except (KeyError, TypeError, IndexError) as e:
        raise DataLossError(f"the saved model at {export_dir} is damaged: its manifest does not describe it "
                            f"({type(e).__name__}: {e})") from None


def _restore(export_dir, m, files):
    variables = [_variable(v, files[v["file"]]) for v in m["variables"]]
    constants = {rel: np.load(io.BytesIO(files[rel]), allow_pickle=False)
                 for rel in files if rel.startswith("constants/")}
    here = runtime.native_fingerprint()
    concretes = []
    for entry in m["concrete_functions"]:
        in_types = [encoding.from_tensor_type(t) for t in entry["in_types"]]
        out_types = [encoding.from_tensor_type(t) for t in entry["out_types"]]
        ir_bytes, native, executable, module = files[entry["ir"]], None, None, None
        holder, handlers = {}, ()
        if entry.get("print_sites"):  # its tfn.print ops' handlers, rebuilt from their attributes in the IR
            module = parse_ir(ir_bytes, entry["name"])
            with module.context:
                handlers = prints.handlers(module, entry["print_sites"])
        if entry.get("native_fingerprint") == here:  # built for this machine as it is: load it
            try:
                executable = stored.load_native(files[entry["native"]],
                                                os.path.join(os.path.abspath(export_dir), entry["native"]),
                                                entry["symbol"], in_types, out_types,
                                                lambda h=holder: h["c"].module(), handlers)
                native = files[entry["native"]]
            except stored.StoredFileError:
                executable = None
        if executable is None:  # other CPU features, toolchain or tfn: compiled again from the stored IR
            module = module or parse_ir(ir_bytes, entry["name"])
            executable = runtime.compile(module, symbol=entry["symbol"], in_types=in_types, out_types=out_types,
                                         handlers=handlers, name=entry["name"])
        c = RestoredConcrete(entry, ir_bytes, native, here, executable, variables, constants)
        if getattr(executable, "upgrade", None) is not None:  # quick code: the optimised code replaces it when built
            executable.upgrade.on_ready(lambda exe, c=c: setattr(c, "_executable", exe))
        c._module = module  # parsed already when compiled here
        holder["c"] = c
        concretes.append(c)
    functions = {attr: RestoredFunction(attr, [concretes[i] for i in indices])
                 for attr, indices in m["functions"].items()}
    signatures = {name: SignatureFunction(name, concretes[s["concrete"]], [tuple(x) for x in s["inputs"]],
                                          s["outputs"]) for name, s in m["signatures"].items()}
    root = _Loaded()
    vars(root)["_tfn_variables"] = tuple(variables)
    for v, entry in zip(variables, m["variables"]):
        if entry.get("path"):
            _place(root, entry["path"], v)
    for attr, fn in functions.items():
        vars(root)[attr] = fn
    root.signatures = signatures
    return root
