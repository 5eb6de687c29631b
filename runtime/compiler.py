"""Compile an LLVM-dialect module into a shared object."""
import _ctypes
import ctypes
import os
import shutil

from mlir import ir

from tfn.dialects.errors import CompileError
from tfn.passes import target as target_mod
from tfn.runtime import async_runtime, cache, cuda_driver, llvm_codegen, toolchain


def declared_functions(llvm_module):
    """Names of the functions the module calls but does not define (resolved at link and load time)."""
    return [op.attributes["sym_name"].value for op in llvm_module.body.operations
            if op.name == "llvm.func" and not op.regions[0].blocks]


ASYNC_PREFIX = "mlirAsyncRuntim"  # (MLIR spells one of them mlirAsyncRuntimGetNumWorkerThreads)


def uses_async_runtime(declared):
    """Whether the module calls the async runtime (multi-threaded kernels, passes/tfn_parallelize.py)."""
    return any(name.startswith(ASYNC_PREFIX) for name in declared)


def _uses_cuda_runtime(declared):
    """Whether the module is the host side of GPU code: it calls MLIR's CUDA runtime wrappers (mgpu*)."""
    return any(name.startswith("mgpu") for name in declared)


def _needs_runner_utils(declared):
    """Whether the module calls a function this process cannot resolve yet (not libc/libm, nor the async runtime
    when loaded): one of MLIR's runner utils, such as memrefCopy.

    Only then is libmlir_c_runner_utils handed to the JIT, which loads it, with libMLIR and libLLVM, into the
    process's global symbol scope: a TensorFlow imported afterwards then binds its own LLVM's calls to ours and
    aborts (an LLVM assertion in its command-line option registry)."""
    process = ctypes.CDLL(None)
    return any(not name.startswith((ASYNC_PREFIX, "MPI_")) and not hasattr(process, name) for name in declared)


def _uses_mpi(declared):
    """Whether the module calls MPI (collective ops, passes/lowering/collective.py): linked to the MPI library."""
    return any(name.startswith("MPI_") for name in declared)


def set_target_features(llvm_module, target):
    """Give every function `llvm_module` defines the target's LLVM features (none for the host's own level).

    Code is generated for the host CPU (runtime/llvm_codegen.py, as the ExecutionEngine does); a function's
    target-features attribute replaces the host's features for that function, in LLVM's vectorisers as in code
    generation."""
    if not target.llvm_features:
        return
    import json  # start-up cost: needed when code is built (a cache miss), not at `import tfn`

    attr = ir.Attribute.parse(f"#llvm.target_features<{json.dumps(list(target.llvm_features))}>",
                              context=llvm_module.context)
    for op in llvm_module.body.operations:
        if op.name == "llvm.func" and op.regions[0].blocks:
            op.attributes["target_features"] = attr


def build_shared_object(llvm_module, opt_level=3, target=None, libs=None):
    """Code-generate `llvm_module` (LLVM dialect) for `target` (default: target.current(), see passes/target.py)
    and link it into a new .so; returns (its path, its scratch dir). libs: the module's Libraries if prepare()
    ran already (for this target)."""
    engine, objs, work, libs = _generate_object(llvm_module, opt_level, target, libs)
    so = os.path.join(work, "a.so")
    link = Link(so, objs, libs)
    del engine  # tearing the JIT down (~3 ms) overlaps the linker's run
    error = link.wait()
    if error is not None:
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"linking the compiled function failed: {error}")
    for obj in objs:
        os.unlink(obj)
    return so, work


def build_object(llvm_module, opt_level=3, target=None):
    """Code-generate `llvm_module` (LLVM dialect) for `target` into an object file (position-independent).

    Returns (its path, the scratch dir holding it, the shared libraries its code calls: MLIR's runner utils when
    it calls one of them)."""
    engine, objs, work, libs = _generate_object(llvm_module, opt_level, target, None, split=False)
    del engine
    return objs[0], work, libs


class Libraries:
    """The shared libraries code generation and linking of an LLVM-dialect module need: `preload` (loaded into the
    process's global symbol scope before the JIT resolves symbols: by the optimiser's child process, which loads
    MLIR's async runtime only for its engine to resolve names), `jit` (handed to the engine), `link` (the .so is
    linked against them); `cuda`: the CUDA runtime (runtime/cuda_driver.py) when the module calls it.

    The async runtime is not linked: the .so binds its functions to the runtime runtime/async_runtime.py loads into
    the process's global scope (loaded here for the JIT and the check that the linked .so loads, and by
    executable.py before it loads a library that needs it)."""

    def __init__(self, llvm_module):
        declared = declared_functions(llvm_module)
        parallel = uses_async_runtime(declared)
        mpi = _uses_mpi(declared)
        self.cuda = cuda_driver.runtime() if _uses_cuda_runtime(declared) else None  # NotFoundError without one
        self.mpi = mpi
        self.preload = [toolchain.TLS_RUNTIME, *([toolchain.ASYNC_RUNTIME] if parallel else [])]
        # the engine resolves every symbol: MPI's from the library mpi4py loaded
        self.jit = ([toolchain.C_RUNNER_UTILS] if _needs_runner_utils(declared) else []) + \
            ([toolchain.mpi_library()] if mpi else [])
        self.link = [toolchain.C_RUNNER_UTILS, *([toolchain.mpi_library()] if mpi else []),
                     *([self.cuda.library] if self.cuda is not None else [])]
        if parallel:
            async_runtime.load()  # the JIT resolves its symbols in the process (else LLVM aborts)
        toolchain.load_tls_runtime()  # the engine's emulated TLS (its JIT resolves __emutls_get_address)


def prepare(llvm_module, target=None):
    """Ready `llvm_module` for code generation for `target` (default: target.current()): its functions get the
    target's features; returns its Libraries."""
    set_target_features(llvm_module, target_mod.current() if target is None else target)
    return Libraries(llvm_module)


def _generate_object(llvm_module, opt_level, target, libs, split=True):
    """(the ExecutionEngine or None, object paths, scratch dir, libraries to link) for build_shared_object and
    build_object: LLVM's C API generates the code (runtime/llvm_codegen.py; a big module's O0 code as two objects
    generated at once unless `split` is false), the engine where that cannot."""
    if libs is None:
        libs = prepare(llvm_module, target)
    work = cache.scratch_dir()
    obj = os.path.join(work, "a.o")
    engine = None
    try:
        if opt_level in llvm_codegen.LEVELS and llvm_codegen.available():
            objs = llvm_codegen.write_objects(llvm_module, obj, opt_level, split)
        else:
            from mlir.execution_engine import ExecutionEngine  # start-up cost: needed on a cache miss only

            engine = ExecutionEngine(llvm_module, opt_level=opt_level, shared_libs=libs.jit, enable_pic=True)
            engine.dump_to_object_file(obj)
            objs = [obj]
    except Exception as e:  # the engine reports LLVM failures as generic exceptions
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"LLVM code generation failed: {e}") from None
    return engine, objs, work, libs.link


def driver_link_command(so, objs, libs, rpath=None, extra=()):
    """The argv linking object files `objs` into shared object `so` through the C compiler driver (libc and libm
    included), against `libs` (shared-library paths, needed only if used), found at run time through `rpath`
    (default: MLIR's folder and those of `libs`)."""
    rpaths = toolchain.rpaths(libs) if rpath is None else [rpath]
    return [toolchain.linker(), "-shared", "-o", so, *objs, *extra, "-Wl,--as-needed", *libs,
            *[f"-Wl,-rpath,{d}" for d in rpaths], "-lm"]


class Link:
    """Links object file `obj` (a path, or a list of them) into the shared object `so` against `libs`
    (shared-library paths).

    The lean link (toolchain.direct_link_command: ld without the C compiler driver, libc and libm) starts at once;
    its .so is loaded once to prove every symbol binds in this process. Should that fail, the driver links
    (`cc -shared ... -lm`, libc included) and is used from then on, and its error message is the one reported."""

    def __init__(self, so, obj, libs):
        import subprocess  # start-up cost: linking happens on a cache miss only (subprocess takes ~3 ms to load)

        self.so, self.objs, self.libs = so, [obj] if isinstance(obj, str) else list(obj), libs
        self._direct = toolchain.direct_link_command(so, self.objs, libs)
        self._proc = None
        if self._direct is not None:
            try:
                self._proc = subprocess.Popen(self._direct, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
            except OSError:
                pass

    def wait(self):
        """None once `so` is linked, else the driver's error message."""
        import subprocess  # start-up cost: as in __init__

        keep = cuda_driver.CUDA_RUNTIME not in self.libs
        if self._proc is not None and self._proc.wait() == 0 and _loads(self.so, keep):
            return None
        proc = subprocess.run(driver_link_command(self.so, self.objs, self.libs), capture_output=True, text=True)
        if proc.returncode != 0:
            return proc.stderr.strip()
        if self._direct is not None:  # the driver links where the lean link failed: stop using that
            toolchain.forget_direct_link()
        return None


def _loads(so, keep=True):
    """Whether `so` loads into this process (all its symbols bind); with `keep` it stays loaded, so the Executable
    that opens it next (under its cache name: the same file, renamed) costs nothing more. GPU code is closed again:
    loading it loads its kernels (a constructor), and a library left open unloads them at exit, after the CUDA
    driver's teardown, which prints an error (runtime/device_executable.py closes the libraries it opened)."""
    try:
        lib = ctypes.CDLL(so)
    except OSError:
        return False
    if not keep:
        _ctypes.dlclose(lib._handle)
    return True


# Work (see opt_level) below which a function's code is generated at O0: at O3 LLVM spends ~9 ms more on even a
# few ops (most of a small function's first call), while a call of code this small costs the same at O0.
TINY_WORK = 1024


def opt_level(func_op):
    """The LLVM opt level for a traced function (func.func of tfn ops): 0 if its work is tiny, else 3.

    Tiny: only tfn ops with static tensor types and no regions (no loops), and a sum over the ops of
    (elements of the largest operand) x (elements of the largest result) of at most TINY_WORK; that product
    bounds an op's work, matmuls and convolutions included. Code generation does not change results."""
    ops = func_op.regions[0].blocks[0].operations
    if len(ops) > TINY_WORK:  # each op but an empty one adds at least 1: no need to look at them
        return 3
    work = 0
    for op in ops:
        name = op.operation.name
        if len(op.operation.regions) or not (name.startswith("tfn.") or name == "func.return"):
            return 3
        ins = [_elements(v.type) for v in op.operands]
        outs = [_elements(v.type) for v in op.results]
        if None in ins or None in outs:
            return 3
        work += max(ins, default=1) * max(outs, default=1)
        if work > TINY_WORK:
            return 3
    return 0


def _elements(t):
    """The element count of a static tensor type, else None."""
    try:
        t = ir.RankedTensorType(t)
    except ValueError:
        return None
    if not t.has_static_shape:
        return None
    n = 1
    for d in t.shape:
        n *= d
    return n


def build_and_store(llvm_module, k, opt_level=3, target=None):
    """Build the .so of `llvm_module` for `target` (default: the current one) and store it under key k (the caller
    looked k up first, with the target's cache_key in it).

    Returns (the open cache.Artifact to load, a scratch dir to remove once it is loaded)."""
    so, work = build_shared_object(llvm_module, opt_level, target)
    try:
        return cache.store(k, so), work
    except OSError as e:
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"the compiled function cannot be read back: {e}") from None
