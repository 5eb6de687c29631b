"""The background optimised build of tiered compilation (runtime/tiering.py), run as a child process by file path.

`python optimize_worker.py MODULE.mlirbc OUT.o OPT_LEVEL PRELOADS JIT_LIBS` reads an LLVM-dialect
module (MLIR bytecode), generates its code at OPT_LEVEL as runtime/compiler.py does in the process (LLVM's C API,
runtime/llvm_codegen.py, else MLIR's ExecutionEngine), and writes the object file OUT.o (its tmp name renamed into
place: a reader sees all of it or nothing). PRELOADS and JIT_LIBS are os.pathsep-separated shared libraries, for
the engine only: loaded into the global symbol scope first (it resolves every symbol it calls), and handed to it.
Without --relower it imports only the standard library, the MLIR bindings and llvm_codegen.py beside it, by path (not
tfn: starting costs ~0.2 s less, and tfn need not be importable by path).

With `--relower FILE` (runtime/tiering.py's optimised tier of tfn-pipeline) it lowers the traced module FILE holds
by FILE's pipeline first, importing tfn for its passes (~0.3 s more, off the first call's path), and builds that
instead of MODULE; where it cannot (tfn not importable, the pipeline failing), it says why on stderr and builds
MODULE, the quick tier's module: the same results, fewer products split over the workers.

Once OUT.o is written it prints `done` and waits for the parent to write `collected` and close its stdin. A thread
reads stdin from the start: should it end without `collected` (the parent died, whether before or after the object
was written), the child removes OUT's folder and exits: a killed parent leaves no half-built files.
"""
import ctypes
import importlib.util
import os
import shutil
import sys
import threading

from mlir import ir

COLLECTED = b"collected"


def _watch_parent(folder):
    """Exit once stdin ends: at once, removing `folder`, unless the parent said it collected the object."""
    said = sys.stdin.buffer.read()
    if said != COLLECTED:
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(3)
    os._exit(0)


def main(argv):
    relower = None
    if len(argv) == 7 and argv[5] == "--relower":
        argv, relower = argv[:5], argv[6]
    module_path, out, level, preloads, jit_libs = argv
    try:
        os.nice(10)  # the parent's quick build and calls first, where they compete for a core
    except OSError:
        pass
    threading.Thread(target=_watch_parent, args=(os.path.dirname(out),), daemon=True).start()
    codegen = _llvm_codegen()
    if relower is not None:
        lowered = _relowered(relower)
        if lowered is not None:
            with lowered.context:
                _write(codegen, lowered, out, level, preloads, jit_libs)
            return _done(out)
    with open(module_path, "rb") as f:
        data = f.read()
    with ir.Context():
        _write(codegen, ir.Module.parse(data), out, level, preloads, jit_libs)
    _done(out)


def _relowered(path):
    """The traced module of a --relower file lowered by its pipeline, with its target's features (an LLVM-dialect
    ir.Module in tfn's shared context), or None (said on stderr) where that cannot be done."""
    import json  # start-up cost: only with --relower

    try:  # optional dependency: tfn, where this child can import it (else the quick tier's module is built)
        with open(path) as f:
            job = json.load(f)
        sys.meta_path.insert(0, _PackageFinder(job["packages"]))
        from tfn.dialects import context as dialect_context  # optional dependency: as the try above says
        from tfn.passes import registry  # optional dependency
        from tfn.passes import target as target_mod  # optional dependency
        from tfn.runtime import compiler  # optional dependency

        target = target_mod.Target(*[tuple(tuple(x) if isinstance(x, list) else x for x in v)
                                     if isinstance(v, list) else v for v in job["target"]])
        with dialect_context.shared_context(), ir.Location.unknown():
            module = ir.Module.parse(job["module"])
            registry.run(job["pipeline"], module.operation, target)
            compiler.set_target_features(module, target)  # (no Libraries: the parent links and loads)
        return module
    except Exception as e:  # noqa: BLE001 -- the quick tier's module is built instead; its code is as correct
        sys.stderr.write(f"optimize_worker: the traced module was not lowered again ({type(e).__name__}: {e}); "
                         "building the quick tier's module\n")
        return None


class _PackageFinder:
    """Finds tfn and its first-level packages in the folders the parent imported them from ({name: folder}); their
    modules are then found through each package's __path__ as usual."""

    def __init__(self, packages):
        self.packages = packages

    def find_spec(self, name, path=None, target=None):
        folder = self.packages.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


def _write(codegen, module, out, level, preloads, jit_libs):
    if int(level) in codegen.LEVELS and codegen.available():
        codegen.write_object(module, out + ".tmp", int(level))
    else:
        _engine_object(module, out + ".tmp", int(level), preloads, jit_libs)


def _done(out):
    os.replace(out + ".tmp", out)
    sys.stdout.write("done\n")
    sys.stdout.flush()
    threading.Event().wait()  # the watching thread exits the process (no teardown of the engine and MLIR)


def _llvm_codegen():
    """runtime/llvm_codegen.py, loaded by path."""
    spec = importlib.util.spec_from_file_location(
        "tfn_llvm_codegen", os.path.join(os.path.dirname(os.path.abspath(__file__)), "llvm_codegen.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _engine_object(module, out, level, preloads, jit_libs):
    from mlir.execution_engine import ExecutionEngine  # start-up cost: only where LLVM's C API cannot be used

    for lib in filter(None, preloads.split(os.pathsep)):
        try:
            ctypes.CDLL(lib, mode=os.RTLD_GLOBAL)
        except OSError:  # as in the parent (toolchain.load_tls_runtime): the engine names what it then misses
            pass
    engine = ExecutionEngine(module, opt_level=level, shared_libs=list(filter(None, jit_libs.split(os.pathsep))),
                             enable_pic=True)
    engine.dump_to_object_file(out)


if __name__ == "__main__":
    main(sys.argv[1:])
