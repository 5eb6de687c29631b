"""tfn in a process where another library already put LLVM in the global symbol scope (TensorFlow does)."""
import importlib.util
import os
import subprocess
import sys

import pytest

_PROGRAM = """
import tfn
from tfn.dialects import mlir_loading
@tfn.function
def f(x):
    return tfn.reduce_sum(tfn.exp(x) * 2.0)
print(mlir_loading.llvm_already_global(), round(float(f(tfn.ones([3]))), 5))
"""


def _run(prelude):
    out = subprocess.run([sys.executable, "-c", prelude + _PROGRAM], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()[-2:]


def test_mlir_is_loaded_isolated_when_llvm_is_already_global():
    import llvm
    lib = os.path.join(os.path.dirname(llvm.__file__), "lib", "libLLVM.so")
    prelude = f"import ctypes\nctypes.CDLL({lib!r}, mode=ctypes.RTLD_GLOBAL)\n"
    assert _run(prelude) == ["True", "16.30969"]


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_import_tensorflow_then_tfn():
    # TensorFlow's LLVM and MLIR, loaded globally first, used to crash MLIR's extension modules on import
    assert _run("import tensorflow\n")[1] == "16.30969"


def test_llvm_made_global_after_import_tfn_before_the_first_trace():
    # MLIR loads at the first trace: the check for a global LLVM is made then, not at `import tfn`
    import llvm
    lib = os.path.join(os.path.dirname(llvm.__file__), "lib", "libLLVM.so")
    prelude = f"import tfn\nimport ctypes\nctypes.CDLL({lib!r}, mode=ctypes.RTLD_GLOBAL)\n"
    assert _run(prelude) == ["True", "16.30969"]
