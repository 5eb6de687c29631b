"""The background optimised build of tiered compilation (runtime/tiering.py), run as a child process by file path.

`python optimize_worker.py MODULE.mlirbc OUT.o OPT_LEVEL PRELOADS JIT_LIBS` reads an LLVM-dialect
module (MLIR bytecode), generates its code at OPT_LEVEL with MLIR's ExecutionEngine, as runtime/compiler.py does
in the process, and writes the object file OUT.o (its tmp name renamed into place: a reader sees all of it or
nothing). PRELOADS and JIT_LIBS are os.pathsep-separated shared libraries: loaded into the global symbol scope
first (the engine resolves every symbol it calls), and handed to the engine. It imports only the standard library
and the MLIR bindings (not tfn: starting costs ~0.2 s less, and tfn need not be importable by path).

Once OUT.o is written it prints `done` and waits for the parent to write `collected` and close its stdin. A thread
reads stdin from the start: should it end without `collected` (the parent died, whether before or after the object
was written), the child removes OUT's folder and exits: a killed parent leaves no half-built files.
"""
import ctypes
import os
import shutil
import sys
import threading

from mlir import ir
from mlir.execution_engine import ExecutionEngine

COLLECTED = b"collected"


def _watch_parent(folder):
    """Exit once stdin ends: at once, removing `folder`, unless the parent said it collected the object."""
    said = sys.stdin.buffer.read()
    if said != COLLECTED:
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(3)
    os._exit(0)


def main(argv):
    module_path, out, level, preloads, jit_libs = argv
    try:
        os.nice(10)  # the parent's quick build and calls first, where they compete for a core
    except OSError:
        pass
    threading.Thread(target=_watch_parent, args=(os.path.dirname(out),), daemon=True).start()
    for lib in filter(None, preloads.split(os.pathsep)):
        try:
            ctypes.CDLL(lib, mode=os.RTLD_GLOBAL)
        except OSError:  # as in the parent (toolchain.load_tls_runtime): the engine names what it then misses
            pass
    with open(module_path, "rb") as f:
        data = f.read()
    with ir.Context():
        module = ir.Module.parse(data)
        engine = ExecutionEngine(module, opt_level=int(level), shared_libs=list(filter(None, jit_libs.split(
            os.pathsep))), enable_pic=True)
        engine.dump_to_object_file(out + ".tmp")
    os.replace(out + ".tmp", out)
    sys.stdout.write("done\n")
    sys.stdout.flush()
    threading.Event().wait()  # the watching thread exits the process (no teardown of the engine and MLIR)


if __name__ == "__main__":
    main(sys.argv[1:])
