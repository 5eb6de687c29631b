"""Compile an LLVM-dialect module into a shared object."""
import os
import shutil
import subprocess

from mlir.execution_engine import ExecutionEngine

from tfn.dialects.errors import CompileError
from tfn.runtime import cache, toolchain


def uses_async_runtime(llvm_module):
    """Whether the module calls MLIR's async runtime (multi-threaded kernels, passes/tfn_parallelize.py)."""
    return any(op.name == "llvm.func" and op.attributes["sym_name"].value.startswith("mlirAsyncRuntime")
               for op in llvm_module.body.operations)


def build_shared_object(llvm_module, opt_level=3):
    """Code-generate `llvm_module` (LLVM dialect) and link it into a new .so; returns its path."""
    work = cache.scratch_dir()
    obj, so = os.path.join(work, "a.o"), os.path.join(work, "a.so")
    if uses_async_runtime(llvm_module):
        toolchain.load_async_runtime()  # the JIT resolves its symbols in the process (else LLVM aborts)
    try:
        engine = ExecutionEngine(llvm_module, opt_level=opt_level, shared_libs=[toolchain.C_RUNNER_UTILS],
                                 enable_pic=True)
        engine.dump_to_object_file(obj)
    except Exception as e:  # the engine reports LLVM failures as generic exceptions
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"LLVM code generation failed: {e}") from None
    cmd = [toolchain.linker(), "-shared", "-o", so, obj, f"-L{toolchain.MLIR_LIB}", "-lmlir_c_runner_utils",
           *(["-lmlir_async_runtime"] if uses_async_runtime(llvm_module) else []),
           f"-Wl,-rpath,{toolchain.MLIR_LIB}", "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"linking the compiled function failed: {proc.stderr.strip()}")
    os.unlink(obj)
    return so, work


def build_and_store(llvm_module, k):
    """Build the .so of `llvm_module` and store it under key k (the caller looked k up first).

    Returns (path, a scratch dir to remove once the .so is loaded, or None)."""
    so, work = build_shared_object(llvm_module)
    path = cache.store(k, so)
    if path != so:
        shutil.rmtree(work, ignore_errors=True)
        return path, None
    return path, work
