"""Load MLIR's Python extension modules so that another LLVM already in the process cannot take their symbols.

TensorFlow (and anything else that loads LLVM with RTLD_GLOBAL) puts its own copies of LLVM's symbols in the
process's global scope. MLIR's extension modules loaded after it bind to those copies and crash in their
initialisers (`import tensorflow; import tfn` was a segmentation fault). When LLVM is already globally visible,
every MLIR extension module is loaded here, once, with RTLD_DEEPBIND: each library resolves its own symbols first.
Without such a library this module does nothing, and MLIR loads as usual on first use.
"""
import ctypes
import importlib
import os
import pathlib
import sys


def llvm_already_global():
    """Whether some library loaded with RTLD_GLOBAL already exports LLVM's C API."""
    return hasattr(ctypes.CDLL(None), "LLVMContextCreate")


def load_isolated():
    """Import every MLIR extension module with RTLD_DEEPBIND, restoring the interpreter's dlopen flags after."""
    spec = importlib.util.find_spec("mlir")
    libs = pathlib.Path(spec.submodule_search_locations[0]) / "_mlir_libs"
    names = sorted(p.name.split(".")[0] for p in libs.glob("_mlir*.so"))
    flags = sys.getdlopenflags()
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_DEEPBIND)
    try:
        importlib.import_module("mlir.ir")
        for name in names:
            importlib.import_module(f"mlir._mlir_libs.{name}")
    finally:
        sys.setdlopenflags(flags)


if "mlir._mlir_libs._mlir" not in sys.modules and llvm_already_global():
    load_isolated()
