"""MLIR's Python modules load on first use, not at `import tfn`, and load isolated from any other LLVM.

Start-up cost. `mlir.ir` brings in MLIR's extension modules and, with them, libMLIRPythonCAPI and libLLVM (a
third of a GiB of shared objects, tens of thousands of symbol relocations): a quarter of the instructions of
`python -c "import numpy, tfn"` (173M of 694M). Eager ops run NumPy kernels and never need it; tracing and
compiling do. So `install()` (run first by `import tfn`) puts deferred module objects for the MLIR modules tfn
imports at module level (DEFERRED) in `sys.modules`: `from mlir import ir` binds such an object, and the first
attribute missing from it (`ir.Context`, ...) runs the real module in it, once, under a lock. Attributes the
import system sets (`__name__`, `__file__`, `__spec__`) are there from the start and load nothing.

Symbols. TensorFlow (and anything else that loads LLVM with RTLD_GLOBAL) puts its own copies of LLVM's symbols
in the process's global scope; MLIR's extension modules loaded after it bind to those copies and crash in their
initialisers (`import tensorflow; import tfn` was a segmentation fault). When LLVM is globally visible at the
moment the first MLIR extension module loads, every MLIR extension module is loaded with RTLD_DEEPBIND: each
library resolves its own symbols first. A finder first on `sys.meta_path` applies the flag, so it holds however
MLIR is reached (a deferred module, `mlir.dialects.scf`, a user's own `import mlir.ir` after tfn's). (RTLD_LAZY
would save a quarter of loading MLIR, but with it a later ValueError raised by MLIR's bindings aborted the
process in test_compile_driver.py: the flags are otherwise Python's.)

Preloading. Most of loading MLIR is the dynamic linker relocating libLLVM and libMLIRPythonCAPI (~45 of the ~60 ms
a first trace spent loading MLIR), work that needs no Python. `install()` starts a thread that opens those
libraries and the extension modules a trace needs (PRELOADED) with `dlopen` called through ctypes, which lets go
of the GIL: on a second core they load while `import tfn` and the program's own start run, and when MLIR's
modules are imported later their `dlopen` finds them loaded. The thread opens them with RTLD_DEEPBIND whatever
is loaded now, so a foreign LLVM made global while the thread runs (`import tfn; import tensorflow`) cannot
capture their symbols. A fork waits for the thread (a child must not inherit the linker's lock held), and
`TFN_PRELOAD_MLIR=0` turns it off (MLIR then loads at the first trace, as above).
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading
import types

# The MLIR modules that tfn's modules import at module level where eager use imports them: `import tfn` and
# eager ops (tfn.keras layers and tfn.data pipelines without traced functions included) load none of their
# code and none of MLIR's extension modules (test_mlir_loading.py).
DEFERRED = ("mlir.ir", "mlir.dialects.arith", "mlir.dialects.func", "mlir.dialects.irdl", "mlir.dialects.scf",
            "mlir.dialects.tensor")

# What the preloading thread opens, in order: what every trace needs first, then what a compile needs.
PRELOADED = ("libMLIRPythonCAPI.so", "libnanobind-mlir.so", "libMLIRPythonSupport-mlir.so", "_mlir",
             "_mlirRegisterEverything", "_mlirDialectsIRDL", "_mlirDialectsLLVM", "_mlirDialectsLinalg",
             "_mlirDialectsTransform", "_mlirTransformInterpreter", "_mlirExecutionEngine")

_lock = threading.RLock()
_running = set()  # names of the deferred modules whose code is running now (in the thread holding _lock)
_isolate = None  # whether MLIR's extension modules load with RTLD_DEEPBIND, decided when the first loads


def llvm_already_global():
    """Whether some library loaded with RTLD_GLOBAL already exports LLVM's C API."""
    return hasattr(ctypes.CDLL(None), "LLVMContextCreate")


class _ExtensionLoader:
    """Loads one of MLIR's extension modules (`mlir._mlir_libs._*.so`), isolated if need be (see above)."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        global _isolate
        with _lock:
            if _isolate is None:
                _isolate = llvm_already_global()
            if not _isolate:
                return self.loader.create_module(spec)
            saved = sys.getdlopenflags()
            sys.setdlopenflags(saved | os.RTLD_DEEPBIND)
            try:
                return self.loader.create_module(spec)
            finally:
                sys.setdlopenflags(saved)

    def exec_module(self, module):
        self.loader.exec_module(module)


class _ExtensionFinder:
    """On sys.meta_path: hands MLIR's extension modules to _ExtensionLoader."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if not name.startswith("mlir._mlir_libs._mlir"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return None  # (the finders after this one find it as usual)
        spec.loader = _ExtensionLoader(spec.loader)
        return spec


class _Deferred(types.ModuleType):
    """A module whose code runs when an attribute it lacks is first asked for (see the module docstring)."""

    def __getattr__(self, name):
        _load(self)
        return types.ModuleType.__getattribute__(self, name)


def _load(module):
    """Run a deferred module's code, once."""
    with _lock:
        if type(module) is _Deferred and module.__name__ not in _running:
            _running.add(module.__name__)
            try:
                module.__spec__.loader.exec_module(module)
                module.__class__ = types.ModuleType
            finally:
                _running.discard(module.__name__)


_preloading = None  # the thread preloading MLIR's libraries, while it runs

# The C library's functions tfn's modules call, resolved here, before the preloading thread starts: `dlsym` waits
# for the linker's lock, which a `dlopen` of libLLVM holds for tens of milliseconds.
LIBC = ctypes.CDLL(None)
LIBC.dlopen.restype, LIBC.dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
LIBC.free.restype, LIBC.free.argtypes = None, [ctypes.c_void_p]


def _library_paths():
    """The files of PRELOADED, found without importing anything of MLIR."""
    libs = importlib.util.find_spec("mlir._mlir_libs").submodule_search_locations[0]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    paths = [os.path.join(libs, name if name.endswith(".so") else name + suffix) for name in PRELOADED]
    hashlib = importlib.util.find_spec("_hashlib")  # (OpenSSL's: the artifact cache's keys load it)
    if hashlib is not None and hashlib.origin and hashlib.origin.endswith(".so"):
        paths.append(hashlib.origin)
    return paths


def _preload(paths, flags):
    for path in paths:
        LIBC.dlopen(os.fsencode(path), flags)  # (a handle never closed; a failure is Python's to report at import)


def _wait_for_preload():
    thread = _preloading
    if thread is not None and thread.ident is not None:  # (started)
        thread.join()


def _start_preload():
    global _preloading
    if os.environ.get("TFN_PRELOAD_MLIR", "1") == "0":
        return
    try:
        paths = _library_paths()
    except (ImportError, AttributeError, TypeError, IndexError):
        return  # no MLIR to preload: the import at first use says what is missing
    _preloading = threading.Thread(target=_preload, args=(paths, sys.getdlopenflags() | os.RTLD_DEEPBIND),
                                   name="tfn-preload-mlir", daemon=True)
    os.register_at_fork(before=_wait_for_preload)
    _preloading.start()


def _defer(name):
    spec = importlib.util.find_spec(name)
    module = _Deferred(name)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__package__ = spec.parent
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)  # (find_spec imported the parent package)


def install():
    """Load MLIR's extension modules through _ExtensionLoader and defer the modules in DEFERRED, unless MLIR is
    loaded already (then it is too late for either)."""
    if is_loaded():
        return
    with _lock:
        if _ExtensionFinder not in sys.meta_path:
            sys.meta_path.insert(0, _ExtensionFinder)
        for name in DEFERRED:
            if name not in sys.modules:
                _defer(name)
        if _preloading is None:
            _start_preload()


def finish_preload():
    """The end of `import tfn` when MLIR is being preloaded: wait for the libraries, then run the deferred modules'
    code, so that a first trace finds MLIR ready."""
    if _preloading is None:
        return
    _wait_for_preload()
    for name in DEFERRED:
        module = sys.modules.get(name)
        if isinstance(module, _Deferred):
            _load(module)
    from tfn.dialects import context  # start-up cost: only when preloading (this module is imported first)

    context.shared_context()


def is_loaded():
    """Whether MLIR's extension modules are loaded in this process."""
    return "mlir._mlir_libs._mlir" in sys.modules


install()
