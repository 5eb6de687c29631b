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

Not done, measured: loading MLIR's libraries on a second thread during `import tfn` (dlopen through ctypes, without
the GIL) saved nothing with glibc 2.36: while that dlopen holds the loader's lock (~45 ms for libLLVM and the C
API), the importing thread waits at its next dlopen or dlsym and at its first use of a library's dynamic TLS
(`__tls_get_addr` updating its slots takes the same lock), so import + first call stayed ~145-150 ms.
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
        with _lock:
            if type(self) is _Deferred and self.__name__ not in _running:
                _running.add(self.__name__)
                try:
                    self.__spec__.loader.exec_module(self)
                    self.__class__ = types.ModuleType
                finally:
                    _running.discard(self.__name__)
        return types.ModuleType.__getattribute__(self, name)


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


def is_loaded():
    """Whether MLIR's extension modules are loaded in this process."""
    return "mlir._mlir_libs._mlir" in sys.modules


install()
