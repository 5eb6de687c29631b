"""The compile driver: a traced tfn module in, a loaded Executable out (cache key, pipeline, build, store, load).

The frontend hands over the module it traced (which keeps the user's source locations) and what the Executable
needs to call it; everything between, and the message of a run-time error the compiled code reports, happens here.
"""
import os
import shutil
import threading

from mlir import ir

from tfn.dialects.context import new_context
from tfn.dialects.errors import CompileError, InvalidArgumentError, UnimplementedError
from tfn.dialects.frozen import Frozen
from tfn.passes import pipelines
from tfn.passes import target as target_mod
from tfn.runtime import cache, compiler, cuda_driver, devices, tiering, toolchain
from tfn.runtime.cachedir import read_fd
from tfn.runtime.device_executable import DeviceExecutable
from tfn.runtime.executable import Executable

STAGES = pipelines.STAGES


class CompileOptions(Frozen):
    """How to compile: the pipeline (a name in passes/pipelines.py, or pipeline text), the LLVM opt level (None:
    chosen per function by compiler.opt_level), the target (None: passes/target.py's current one, detected once)
    and extra key material. The pipeline spelled out for the target (its passes' options), the target's CPU
    features and `target_key` name the artifact with the IR: code built for one target is never loaded for
    another."""

    _fields = ("pipeline", "opt_level", "target", "target_key")

    def __init__(self, pipeline="tfn-pipeline", opt_level=None, target=None, target_key=""):
        self._set(pipeline=pipeline, opt_level=opt_level, target=target, target_key=target_key)


DEFAULT_OPTIONS = CompileOptions()
# The context (made on first use) and lock of the lowering that names the op of a failed allocation (error_describer).
_DESCRIBING = threading.Lock()
_DESCRIBING_CONTEXT = []


def gpu_pipeline(device):
    """The pipeline text compiling a traced module for GPU `device` (passes/gpu.py), with tfn-gpu-device-abi as its
    host side: arguments and results in device memory, every host<->device copy left to the runtime. The emulated
    GPU's turns the mapped gpu.launch IR into CPU loops (an ordinary CPU library); a CUDA GPU's ends in NVVM and a
    fatbin for its chip (TFN_GPU_CHIP, else from its compute capability)."""
    from tfn.passes import gpu  # start-up cost: the GPU pipelines are built for a GPU function only

    if device.backend == devices.EMULATED:
        text = gpu.pipeline_for("emulate")
    else:
        text = gpu.pipeline_for("nvvm", chip=os.environ.get(target_mod.GPU_ENV) or _chip(device))
    return text.replace("tfn-gpu-device-buffers", "tfn-gpu-device-abi")


def _chip(device):
    major, minor = cuda_driver.probe().gpus[device.index].compute_capability
    if major < 8:
        raise UnimplementedError(f"{device.name} has compute capability {major}.{minor}; tfn generates GPU code for "
                                 "sm_80 and later")
    return "sm_80" if major == 8 else "sm_90"  # a newer GPU JIT-compiles the fatbin's PTX


def compile(module, options=DEFAULT_OPTIONS, *, symbol, in_types, out_types, handlers=(), name=None, device=None,
            tiered=True, trace_key=None):
    """The Executable of function `symbol` of traced `module` (tfn dialect, left unchanged), from the artifact cache
    or built and stored there. in_types/out_types: TensorTypes of its flat arguments and results; handlers: its
    callback sites' handlers; name: the function's name in compile errors (default: symbol); device: a GPU
    (runtime/devices.py) to compile for, giving a DeviceExecutable, or None / the CPU.

    tiered (and tiering on, opt level chosen per function): a big function not in the cache gets quick code, and
    its optimised code is built in the background (runtime/tiering.py): the Executable's `upgrade` then says when
    that is loaded (`upgrade.on_ready(fn)` hands it over).

    trace_key: the key of a trace recorded without MLIR (frontend/core/record_key.py); `module` is then a function
    returning the module, called only when the artifact cache does not know the key (on a CPU)."""
    on_error = error_describer(module, symbol, options)

    def load(artifact, scratch=None):
        return Executable(artifact.path, symbol, in_types, out_types, scratch, on_error=on_error, handlers=handlers,
                          source=artifact.name)

    alias = None
    if trace_key is not None:
        if device is None or not device.is_gpu:
            on = target_mod.current() if options.target is None else options.target
            level = "auto" if options.opt_level is None else options.opt_level
            alias = cache.key("recorded trace " + trace_key, options.pipeline,
                              _option_key(level, on.cache_key(), options.target_key))
            artifact = cache.lookup_alias(alias)
            if artifact is not None:
                with artifact:
                    return load(artifact)
        module = module()
    if device is not None and device.is_gpu:
        return _compile_for_gpu(module, options, symbol, in_types, out_types, name, device)

    with module.context:
        artifact, scratch, upgrade = _artifact(module, options, symbol, name, tiered and options.opt_level is None,
                                               alias)
    try:
        with artifact:  # loaded from its open descriptor: the bytes hashed are the bytes loaded
            exe = load(artifact, scratch)
    except BaseException:
        if upgrade is not None:
            upgrade.discard()
        raise
    if upgrade is not None:
        exe.upgrade = upgrade
        upgrade.collect(load)
    return exe


def native_code(module, options=DEFAULT_OPTIONS, *, symbol, name=None):
    """The bytes of the shared object `compile` loads for function `symbol` of traced `module` (from the artifact
    cache, or built and stored there): what a saved model stores beside the function's IR."""
    with module.context:
        artifact, scratch, _ = _artifact(module, options, symbol, name)
    with artifact:
        data = read_fd(artifact.fd, cache.ARTIFACT_MAX_BYTES)
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    if data is None:
        raise CompileError(f"the compiled code of '{name or symbol}' cannot be read back")
    return data


def native_fingerprint(options=DEFAULT_OPTIONS):
    """What native code built here depends on, beyond its IR: the toolchain and compiler source (tfn, MLIR and LLVM
    versions), the target (passes/target.py: ISA level, vector width, CPU) and the host's CPU features. Code stored
    with another fingerprint is rebuilt from its IR, never loaded."""
    on = target_mod.current() if options.target is None else options.target
    return {"toolchain": toolchain.versions(), "pipeline": options.pipeline,
            "target": _option_key(3, on.cache_key(), options.target_key), "host": cache.host()}


def _artifact(module, options, symbol, name, tiered=False, alias=None):
    """(the open cache.Artifact of `symbol` in `module`, a scratch folder to remove once loaded, or None, the
    tiering.Upgrade building its optimised code, or None). tiered: a big function missing from the cache gets
    quick code, not stored (runtime/tiering.py). alias: another key to find the artifact by (a recorded trace's)."""
    level = options.opt_level
    if level is None:
        level = compiler.opt_level(ir.SymbolTable(module.operation)[symbol])
    on = target_mod.current() if options.target is None else options.target
    # The key names the pipeline as given: the target's cache_key holds every fact its passes' option defaults
    # come from, and spelling the options out would import every pass on a cache hit (~200 ms).
    k = cache.key(str(module), options.pipeline, _option_key(level, on.cache_key(), options.target_key))
    if alias is not None:
        cache.store_alias(alias, k)
    artifact, scratch, upgrade = cache.lookup(k), None, None
    if artifact is None:
        lowered = lower(module, options.pipeline, on, name or symbol)
        if tiered and level == 3:
            upgrade = tiering.plan(lowered, k, on, name or symbol, module, options.pipeline)
        if upgrade is not None:
            try:
                so, scratch = compiler.build_shared_object(lowered, tiering.QUICK_LEVEL, on, upgrade.libs)
                artifact = cache.open_built(so)
            except OSError as e:
                shutil.rmtree(scratch, ignore_errors=True)
                raise CompileError(f"the compiled function cannot be read back: {e}") from None
            finally:
                if artifact is None:
                    upgrade.discard()
        else:
            artifact, scratch = compiler.build_and_store(lowered, k, level, on)
    return artifact, scratch, upgrade


def lower(module, pipeline, target, name):
    """A copy of traced `module` lowered by `pipeline` (a name in passes/pipelines.py, or pipeline text) with its
    passes' options for `target`; name: the function's name in compile errors. Call with module.context entered."""
    from tfn.passes import registry  # start-up cost: the pass machinery loads on a cache miss, not at import

    lowered = _copy(module)
    _run_pipeline(lowered.operation, registry.pipeline_text(pipeline, target), name, target)
    return lowered


class NoGpuKernelError(InvalidArgumentError):
    """The function holds an op the GPU code generator has no kernel for (TF: no supported kernel for GPU devices);
    under soft placement the frontend runs the function on the CPU instead."""


# How the GPU passes name what they cannot put on the device: an op tfn-gpu-tile / tfn-gpu-map cannot map, and host
# code left reading or writing device memory (tfn-gpu-device-abi: an op whose lowering reads a scalar operand
# before its kernels, as the random draws' did). Either way the function runs on the CPU under soft placement.
_NO_KERNEL = ("no GPU kernel", "would touch device memory on the host")


def _compile_for_gpu(module, options, symbol, in_types, out_types, name, device):
    try:
        return _compile_for_gpu_unchecked(module, options, symbol, in_types, out_types, name, device)
    except CompileError as e:
        if not any(marker in str(e) for marker in _NO_KERNEL):
            raise
        raise NoGpuKernelError(f"Cannot assign a device for '{name or symbol}': Could not satisfy explicit device "
                               f"specification '{device.name}' because no supported kernel for GPU devices is "
                               f"available:\n{e}") from None


def _compile_for_gpu_unchecked(module, options, symbol, in_types, out_types, name, device):
    backend = device.backend
    if backend == devices.CUDA:
        # NotFoundError, naming what is missing, before any work where there is no driver; the library the code
        # links to is part of its key.
        backend = f"cuda:{cuda_driver.runtime().library}"
    options = options.replace(pipeline=gpu_pipeline(device),
                              target_key=f"{options.target_key};gpu-{backend}".lstrip(";"))
    if device.backend == devices.EMULATED:
        exe = compile(module, options, symbol=symbol, in_types=in_types, out_types=out_types, name=name,
                      tiered=False)  # the DeviceExecutable keeps the code it wraps
        return DeviceExecutable(device, in_types, out_types, executable=exe)
    with module.context:
        artifact, scratch, _ = _artifact(module, options, symbol, name)
    with artifact:
        exe = DeviceExecutable(device, in_types, out_types, so_path=artifact.path, symbol=symbol)
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)  # the loaded library stays mapped
    return exe


def stage_ir(module, stage, name):
    """The IR text of traced `module` (left unchanged) lowered to `stage`: tfn, linalg, bufferized or llvm."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    with module.context:
        lowered = _copy(module)
        for s in STAGES[1:STAGES.index(stage) + 1]:
            _run_pipeline(lowered.operation, pipelines.STAGE_PIPELINES[s], name)
        return str(lowered)


def _option_key(level, *target_keys):
    """The options' part of the cache key: the opt level unless it is the default 3, then the target's material."""
    return ";".join(part for part in ("" if level == 3 else f"O{level}", *target_keys) if part)


def _copy(module):
    """A fresh ir.Module holding the traced IR, locations included (passes rewrite it in place)."""
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True))


def _run_pipeline(module_op, pipeline, fname, target=None):
    from tfn.passes import registry  # start-up cost: as in lower()

    try:
        registry.run(pipeline, module_op, target)
    except ir.MLIRError as e:
        raise CompileError(f"compiling '{fname}' failed in {pipeline}:\n{e}") from None


def error_describer(module, symbol, options=DEFAULT_OPTIONS):
    """on_error(code, details) -> the message of a run-time error: the failing op and the user's line."""
    target = target_mod.current() if options.target is None else options.target
    given = module

    def module_now():
        """The module (a recorded trace's is built when its first run-time error is described)."""
        return given() if callable(given) else given

    def lower(stage):
        """The module lowered to `stage` as it was compiled (an ir.Module; only tfn-pipeline's stages are known), in
        a private context: the shared one is for the thread that holds the trace lock."""
        if options.pipeline != "tfn-pipeline":
            return None
        from tfn.passes import registry  # start-up cost: as in lower()

        text = module_now().operation.get_asm(enable_debug_info=True)
        with _DESCRIBING:
            if not _DESCRIBING_CONTEXT:
                _DESCRIBING_CONTEXT.append(new_context())
            with _DESCRIBING_CONTEXT[0]:
                lowered = ir.Module.parse(text)
                for s in STAGES[1:STAGES.index(stage) + 1]:
                    registry.run(registry.pipeline_text(pipelines.STAGE_PIPELINES[s], target), lowered.operation,
                                 target)
        return lowered

    def describe(code, details):
        # start-up cost: the messages' lowering (and the MLIR dialect modules it builds with) loads on an error
        from tfn.passes.lowering import runtime_errors

        module = module_now()
        with module.context:
            return runtime_errors.describe(module.operation, code, details, symbol, lower)
    return describe
