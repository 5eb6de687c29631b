"""The background optimised build of tiered compilation (runtime/tiering.py), run as a child process by file path.

`python optimize_worker.py PARENT_PID MODULE.mlirbc OUT.o OPT_LEVEL PRELOADS JIT_LIBS` reads an LLVM-dialect
module (MLIR bytecode), generates its code at OPT_LEVEL with MLIR's ExecutionEngine, as runtime/compiler.py does
in the process, and writes the object file OUT.o (its tmp name renamed into place: a reader sees all of it or
nothing). PRELOADS and JIT_LIBS are os.pathsep-separated shared libraries: loaded into the global symbol scope
first (the engine resolves every symbol it calls), and handed to the engine. It imports only the standard library
and the MLIR bindings (not tfn: starting costs ~0.2 s less, and tfn need not be importable by path). Should the
parent die, a watchdog thread removes OUT's folder and exits: a killed parent leaves no half-built files.
"""
import ctypes
import os
import shutil
import sys
import threading
import time


def _watch_parent(parent, folder):
    while True:
        time.sleep(0.2)
        if os.getppid() != parent:  # re-parented: the process that wants the object is gone
            shutil.rmtree(folder, ignore_errors=True)
            os._exit(3)


def main(argv):
    parent, module_path, out, level, preloads, jit_libs = argv
    threading.Thread(target=_watch_parent, args=(int(parent), os.path.dirname(out)), daemon=True).start()
    for lib in filter(None, preloads.split(os.pathsep)):
        try:
            ctypes.CDLL(lib, mode=os.RTLD_GLOBAL)
        except OSError:  # as in the parent (toolchain.load_tls_runtime): the engine names what it then misses
            pass
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine

    with open(module_path, "rb") as f:
        data = f.read()
    with ir.Context():
        module = ir.Module.parse(data)
        engine = ExecutionEngine(module, opt_level=int(level), shared_libs=list(filter(None, jit_libs.split(
            os.pathsep))), enable_pic=True)
        engine.dump_to_object_file(out + ".tmp")
    os.replace(out + ".tmp", out)
    sys.stdout.flush()
    os._exit(0)  # no teardown of the engine and MLIR: the object is written, nothing else is wanted


if __name__ == "__main__":
    main(sys.argv[1:])
