"""Tiered compilation: a big function's first call runs quick code while its optimised code is built aside.

LLVM's O3 optimisation and code generation of a large function (a training step's ~12k LLVM instructions: ~1 s)
is most of its first call, while its O0 code (FastISel and the fast register allocator, runtime/llvm_codegen.py:
~80 ms with the link) runs at under half the speed, good enough until the O3 code is in place: the hot kernels
are vectorised and tiled by tfn's MLIR passes, before LLVM. So a function whose LLVM-dialect module is large
(MIN_BYTES of bytecode or more) and would be built at O3 is built at QUICK_LEVEL and runs at once; the same module
goes, as MLIR bytecode, to a child process (runtime/optimize_worker.py), started once the quick code is loaded,
generating its O3 object. A thread of
this process waits for the child (without the GIL), links the object and stores the .so in the artifact cache
under the function's usual key (the quick code is never stored: a new process loads the optimised code at once),
loads it and hands the new Executable to the listeners (the ConcreteFunction swaps it in: later calls run it).

The optimised tier of tfn-pipeline splits more products over the worker threads than the quick tier does, and fuses
more elementwise consumers into them: the child lowers the traced module itself (tfn-pipeline with tfn-pack-matmul's
min-parallel-flops lowered to OPTIMISED_MIN_PARALLEL_FLOPS and min-epilogue-elements to
OPTIMISED_MIN_EPILOGUE_ELEMENTS, optimised_pipeline) and generates its O3 code from that; every other function, and
every build made at once, gets the usual thresholds. Measured on case (h)'s training step (bench/run.py, AMD EPYC, 2
cores, both ISAs): splitting its three 2 x 128 x 256 x 256 products took the step from 1.15-1.42 to 0.86-0.99 ms,
but made tfn-pipeline ~45 ms slower (tfn-vectorize-kernels fusing each pack and fill into its scf.forall,
tfn-async-parallel's outlined task functions: ~20 % more LLVM-dialect IR) and its O0 build ~20 ms slower: a first
call 1.47-1.75x JAX's where the target is 1.5x. In the child that time is off the first call's path. Neither changes
a result: a split cuts rows and panels among tasks, never a dot product's k loop, and a fused consumer does the same
operations on the finished sums in registers, so the tiers still compute the same floats (no fast-math flags are set
where it would change them); a child that cannot lower the module (tfn not importable by it) builds the quick tier's
LLVM-dialect module at O3 instead. Either is stored under the function's usual key, as a build made at once (tiering
off: the usual threshold) is: the artifacts differ in how the work is shared among the threads and in where the
consumers run. A failed optimised build leaves the quick code in use; `wait()` reports it. At exit a build in flight
is killed and its files removed; the child also watches its parent (through its stdin), so a killed process leaves
no half-built files behind.

Off with TFN_TIERED_COMPILATION=0 or tfn.config.set_tiered_compilation(False): every build is then optimised at
once, as before.
"""
import atexit
import os
import re
import shutil
import sys
import threading
import time

from tfn.dialects.errors import CompileError
from tfn.runtime import cache, compiler, toolchain

ENV = "TFN_TIERED_COMPILATION"
# The quick tier's LLVM opt level, and the bytecode size of an LLVM-dialect module from which it is used: below,
# O3 costs too little more than O0 for a second build to pay. (Set with the ExecutionEngine's figures, whose "O0"
# generated code at O2: a 1,000-op elementwise chain: ~30 KB, 80 ms at O3, 60 at O0; the MLP training step:
# ~140 KB, 1,000 ms at O3, 320 at O0. Through LLVM's C API, runtime/llvm_codegen.py, the step's O0 build with its
# link takes ~80 ms: a lower threshold may now pay.)
QUICK_LEVEL = 0
MIN_BYTES = 64 * 1024
# tfn-pack-matmul's min-parallel-flops in the optimised tier of tfn-pipeline (the pass's default, 2 x 256^3, elsewhere)
OPTIMISED_MIN_PARALLEL_FLOPS = 1 << 24
# and its min-epilogue-elements (default 2^16): the 128 x 256 bias adds and ReLU masks of case (h)'s step computed in
# their products' register tiles too (their fusions cost the pipeline ~60 ms, now in the child). Measured with
# bench/tier_ab.py's method (one process, interleaved blocks of 100 steps, load ~1.1): medians 0.855 -> 0.820 and
# 0.864 -> 0.863 ms (AVX-512), 0.895 -> 0.879 and 1.078 -> 1.064 ms (AVX2); fastest blocks 2-4 % faster.
OPTIMISED_MIN_EPILOGUE_ELEMENTS = 1 << 15
OPTIMISED_PIPELINE = "tfn-pipeline"  # the pipeline whose optimised tier is lowered again (optimised_pipeline)
_COLLECTED = b"collected"  # what the child waits for (runtime/optimize_worker.py)
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimize_worker.py")
_setting = [None]  # set_enabled's choice; None: TFN_TIERED_COMPILATION decides (default on)
_lock = threading.Lock()
_pending = []  # this process's Upgrades not yet waited for


def enabled():
    """Whether big functions start on quick code (tfn.config.set_tiered_compilation, else TFN_TIERED_COMPILATION,
    default on)."""
    if _setting[0] is not None:
        return _setting[0]
    return os.environ.get(ENV, "1") != "0"


def set_enabled(on):
    """Turn tiered compilation on or off for the functions compiled from now on (None: as TFN_TIERED_COMPILATION
    says)."""
    _setting[0] = None if on is None else bool(on)


def optimised_pipeline(pipeline, target):
    """The pipeline text the optimised tier lowers a traced module with when it differs from `pipeline`'s (the
    quick tier's): tfn-pipeline spelled out for `target` with tfn-pack-matmul's min-parallel-flops and
    min-epilogue-elements at most OPTIMISED_MIN_PARALLEL_FLOPS and OPTIMISED_MIN_EPILOGUE_ELEMENTS; None for any
    other pipeline or where both are already that low."""
    if pipeline != OPTIMISED_PIPELINE:
        return None
    from tfn.passes import registry  # start-up cost: as in driver.lower, on a cache miss only

    spelled = lowered = registry.pipeline_text(pipeline, target)
    for option, most in (("min-parallel-flops", OPTIMISED_MIN_PARALLEL_FLOPS),
                         ("min-epilogue-elements", OPTIMISED_MIN_EPILOGUE_ELEMENTS)):
        lowered = re.sub(r"(tfn-pack-matmul\{[^}]*\b" + option + r"=)(\d+)",
                         lambda m, most=most: m.group(1) + str(min(int(m.group(2)), most)), lowered)
    return None if lowered == spelled else lowered


def plan(lowered, k, target, name, traced=None, pipeline=None):
    """The Upgrade building `lowered` (an LLVM-dialect module) at O3 in the background, or None when its code
    should be optimised at once: tiering off, a small module, or one calling MPI or CUDA (their libraries are
    this process's). Call with the module's context entered; the module gets the target's features. With
    `traced` (the traced module `lowered` was lowered from by `pipeline`) and an optimised_pipeline for it, the
    child lowers `traced` by that instead and builds its O3 code from the result."""
    if not enabled() or not sys.executable:
        return None
    libs = compiler.prepare(lowered, target)
    if libs.mpi or libs.cuda is not None:
        return None
    work = cache.scratch_dir()
    path = os.path.join(work, "module.mlirbc")
    try:
        with open(path, "wb") as f:
            lowered.operation.write_bytecode(f)
        small = os.path.getsize(path) < MIN_BYTES
    except OSError:
        small = True
    if small:
        shutil.rmtree(work, ignore_errors=True)
        return None
    relower = None if traced is None else optimised_pipeline(pipeline, target)
    if relower is not None:
        relower = _write_relowering(work, traced, relower, target)
    # collect() starts the child once the quick code is loaded: started here, it competed with the quick build (two
    # objects generated at once, on both of this machine's cores): case (h)'s first step measured 289-384 ms with
    # the child started here, 263-269 with it started then (medians of 5, interleaved, load ~2), the optimised code
    # in place ~50 ms later
    return Upgrade(name, k, work, path, libs, relower)


def _write_relowering(work, traced, pipeline, target):
    """Write what the child needs to lower `traced` by `pipeline` for `target` (runtime/optimize_worker.py's
    --relower): the module's text with its locations, the pipeline, the target's fields, where tfn's packages are
    (_tfn_packages: the child imports this process's tfn, however it was installed); returns the
    file's path, or None if it cannot be written (the child then builds the quick tier's module)."""
    import json  # start-up cost: a tiered build happens on a cache miss only

    path = os.path.join(work, "relower.json")
    try:
        with open(path, "w") as f:
            json.dump({"module": traced.operation.get_asm(enable_debug_info=True), "pipeline": pipeline,
                       "target": [getattr(target, n) for n in type(target)._fields],
                       "packages": _tfn_packages()}, f)
    except OSError:
        return None
    return path


def _tfn_packages():
    """{name: folder} of tfn and its packages one level down (tfn.passes, ...), as this process imported them (an
    editable install maps each to a folder of its own)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if (name == "tfn" or name.startswith("tfn.") and name.count(".") == 1) and getattr(module, "__path__", None):
            found[name] = list(module.__path__)[0]
    return found


class Upgrade:
    """The optimised build of one function: `collect(load)` (once the quick code is loaded) starts the child
    (`launch()`) and the thread waiting for it; `load(artifact)` makes the Executable of the optimised artifact.
    `libs`: the module's compiler.Libraries (prepared once: the quick build uses them too).
    `executable` (once ready), `error` (a CompileError if it failed), `seconds` (from launch to ready or failed)."""

    def __init__(self, name, k, work, module_path, libs, relower=None):
        self.name, self._key, self._work, self._module_path, self.libs = name, k, work, module_path, libs
        self._relower = relower  # optimize_worker.py's --relower file, or None
        self.executable = self.error = self.seconds = None
        self._done = threading.Event()
        self._listeners = []
        self._listening = threading.Lock()
        self._proc = self._thread = None
        self._object = os.path.join(work, "a.o")
        self._cancelled = False
        self._pid = os.getpid()

    def launch(self):
        """Start the child process (at low priority: the caller's quick build and calls come first)."""
        import subprocess  # start-up cost: a tiered build happens on a cache miss only

        self._started = time.perf_counter()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [toolchain.SITE, env.get("PYTHONPATH")]))
        preload = list(self.libs.preload)
        if self._relower is not None and toolchain.ASYNC_RUNTIME not in preload:
            preload.append(toolchain.ASYNC_RUNTIME)  # (for the engine) the module lowered again may run in parallel
        argv = [sys.executable, "-P", _WORKER, self._module_path, self._object, "3", os.pathsep.join(preload),
                os.pathsep.join(self.libs.jit)]
        if self._relower is not None:
            argv += ["--relower", self._relower]
        with _lock:
            _pending.append(self)
        try:
            with open(os.path.join(self._work, "stderr"), "wb") as err:
                self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                              env=env)
        except OSError as e:
            self._finish(error=CompileError(f"the optimised build of '{self.name}' could not start: {e}"))

    def collect(self, load):
        """Start the child, and the thread collecting its object: linked, stored, loaded by `load(artifact)`."""
        if self._proc is None and not self._done.is_set():
            self.launch()
        if self._proc is None:  # it could not start: wait() reports that
            return
        self._thread = threading.Thread(target=self._collect, args=(self._object, load),
                                        name=f"tfn-optimise-{self.name}", daemon=True)
        self._thread.start()

    def _collect(self, obj, load):
        exe = error = None
        try:
            said = self._proc.stdout.readline()  # `done`, or nothing if it failed; the GIL is free meanwhile
            if self._cancelled:
                return
            if said != b"done\n" or not os.path.exists(obj):
                self._proc.wait()
                raise CompileError(f"the optimised build of '{self.name}' failed (exit status "
                                   f"{self._proc.returncode})" + _tail(os.path.join(self._work, "stderr")))
            so = os.path.join(self._work, "a.so")
            failure = compiler.Link(so, obj, self.libs.link).wait()
            if failure is not None:
                raise CompileError(f"linking the optimised code of '{self.name}' failed: {failure}")
            if self._cancelled:
                return
            artifact = cache.store(self._key, so)
            with artifact:
                exe = load(artifact)
        except CompileError as e:
            error = e
        except Exception as e:  # noqa: BLE001 -- whatever went wrong, the quick code keeps running; wait() says it
            error = CompileError(f"the optimised build of '{self.name}' failed: {type(e).__name__}: {e}")
        finally:
            shutil.rmtree(self._work, ignore_errors=True)
            self._release()
            self._finish(exe, error)

    def _release(self):
        """Tell the child its files are collected (else it removes them) and let it exit."""
        try:
            self._proc.stdin.write(_COLLECTED)
            self._proc.stdin.close()
        except OSError:  # it has exited already
            pass
        self._proc.wait()
        self._proc.stdout.close()

    def _finish(self, exe=None, error=None):
        with self._listening:
            self.executable, self.error = exe, error
            self.seconds = time.perf_counter() - self._started
            listeners, self._listeners = self._listeners, None
            self._done.set()
        if exe is not None:
            for fn in listeners:
                fn(exe)

    def on_ready(self, fn):
        """Call fn(optimised Executable) once it is loaded (at once if it is already); never if the build fails."""
        with self._listening:
            if self._listeners is not None:
                self._listeners.append(fn)
                return
        if self.executable is not None:
            fn(self.executable)

    def done(self):
        return self._done.is_set()

    def wait(self, timeout=None):
        """Whether the build finished (ready or failed) within `timeout` seconds (None: however long it takes)."""
        return self._done.wait(timeout)

    def discard(self):
        """Stop a build whose quick code failed to build (no Executable will adopt it)."""
        self.cancel()
        with _lock:
            if self in _pending:
                _pending.remove(self)

    def cancel(self):
        """Stop the build: kill the child, let the thread remove its files."""
        self._cancelled = True
        if self._proc is not None:
            try:
                self._proc.kill()
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(10)
        elif self._proc is not None:
            self._release()
        shutil.rmtree(self._work, ignore_errors=True)


def pending():
    """This process's optimised builds started and not yet waited for (a forked child has none: its parent's
    threads and children are not its own)."""
    pid = os.getpid()
    with _lock:
        return [u for u in _pending if u._pid == pid]


def wait(timeout=None):
    """Wait until every optimised build started so far is in place (or has failed); raise the CompileError of the
    first that failed (each failure is reported once; its function keeps running its quick code). Returns whether
    all finished within `timeout` seconds (None: no limit)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    first_error = None
    for upgrade in pending():
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not upgrade.wait(left):
            return False
        with _lock:
            if upgrade in _pending:
                _pending.remove(upgrade)
        if upgrade.error is not None and first_error is None:
            first_error = upgrade.error
    if first_error is not None:
        raise first_error
    return True


def _tail(path):
    """`:` and the end of a failed child's error output, or nothing."""
    try:
        with open(path, "rb") as f:
            text = f.read()[-2000:].decode(errors="replace").strip()
    except OSError:
        return ""
    return f":\n{text}" if text else ""


@atexit.register
def _stop_at_exit():
    """Kill the builds in flight (their code would only be stored for a later process: not worth delaying exit)."""
    for upgrade in pending():
        if not upgrade.done():
            upgrade.cancel()
