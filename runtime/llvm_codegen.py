"""Code generation through LLVM's C API: an LLVM-dialect module to an object file, without MLIR's ExecutionEngine.

The engine is a JIT: to hand out an object file it also links the code in memory, resolving its symbols in the
process (~90 ms for a small function on a busy machine, of ~200), and it cannot generate code at O0: it applies
its opt level to the LLVM IR passes, and to a target-machine builder it then ignores, generating code with a target
machine made beforehand at LLVM's default level (O2: SelectionDAG with its combiner, the greedy register allocator,
post-RA scheduling). For the MLP training step's quick code (runtime/tiering.py) that was ~190 ms of code
generation where O0's (FastISel, the fast register allocator) takes ~65 ms. So objects are made here, by the
libraries MLIR's bindings already loaded: `mlirTranslateModuleToLLVMIR` (libMLIRPythonCAPI), LLVM's pass pipeline
(`default<O0>` lowers the async runtime's coroutines; `default<O3>` with the engine's tuning: loop unrolling,
interleaving and vectorisation, SLP vectorisation) and a target machine for the host CPU writing the object file
(libLLVM): at CodeGenOptLevel None for O0, and at the default level for O3, as the engine generated it.
At O0, `instsimplify` runs first: the LLVM dialect builds a memref descriptor (insertvalue) for each access and
reads it back (extractvalue), which FastISel cannot select (an insertvalue hands the rest of its block to
SelectionDAG): folded away, the MLP training step's LLVM IR has 6,100 instructions instead of 8,300, FastISel
selects most blocks, and its code generation takes ~9 % less CPU time. It only folds what is exact (no fast-math
flags are set), so O0 results are unchanged. At O3 the functions tfn marks inlinehint (the register tiles
passes/tfn_outline_micro_kernels.py outlines) are made alwaysinline: O3 code is as if they had never been outlined,
while O0 code, whose pipeline inlines only alwaysinline functions, holds each once.
A big module's O0 code is generated on two threads (write_objects): its largest function in one object, the other
functions, from a copy of the module read back from its bitcode into a context of its own, in a second; both are
linked into the shared object (runtime/compiler.py). The MLP training step's ~71 ms of code generation (CPU time)
became ~44 ms on the calling thread and ~36 on the other (the split costs ~9 ms of CPU time: the bitcode written
and read back, the declarations), so only where a core is likely idle (_idle_core).

As the engine does, the module gets the host's triple and data layout and each C interface `_mlir_ciface_<f>` a
packed wrapper `_mlir__mlir_ciface_<f>(void **args)` (runtime/executable.py's trampoline calls it). Unlike the
engine, whose target machine is a JIT's, the code uses the small code model and native ELF TLS for thread-local
variables (the error channel, passes/tfn_thread_local_errors.py), as a shared object loaded by the dynamic linker
may. Code generation does not change results: no fast-math flags are added, and LLVM fuses `llvm.fmuladd` into FMAs
at every level alike.

The translation holds the GIL (it reads the MLIR context that tracing threads share); LLVM's passes and code
generation run on a private LLVMContext with the GIL released. `available()` says whether this LLVM has what is
needed (else runtime/compiler.py uses the engine). This file imports only the standard library and MLIR's bindings:
the optimising child process (runtime/optimize_worker.py) loads it by path, without tfn.
"""
import ctypes
import functools
import os
import platform
import threading

import mlir.ir

SITE = os.path.dirname(os.path.dirname(os.path.abspath(mlir.ir.__file__)))  # (the wheels' site-packages)
LLVM_LIB = os.path.join(SITE, "llvm", "lib", "libLLVM.so")
MLIR_CAPI = os.path.join(SITE, "mlir", "_mlir_libs", "libMLIRPythonCAPI.so")
_TARGETS = {"x86_64": "X86", "amd64": "X86", "aarch64": "AArch64", "arm64": "AArch64"}  # machine -> LLVM target
_P = ctypes.c_void_p
_RELOC_PIC, _CODE_MODEL_DEFAULT, _OBJECT_FILE, _VOID_TYPE_KIND = 2, 0, 1, 0
# opt level -> (LLVM's pass pipeline, the code generator's level: LLVMCodeGenOptLevel None / Default)
LEVELS = {0: (b"function(instsimplify),default<O0>", 0), 3: (b"default<O3>", 2)}
_PACKED_PREFIX, _CIFACE_PREFIX = "_mlir_", "_mlir_ciface_"
_FUNCTION_INDEX = 0xFFFFFFFF  # LLVMAttributeFunctionIndex: an attribute of the function itself
_EXTERNAL, _APPENDING, _INTERNAL, _PRIVATE, _HIDDEN = 0, 7, 8, 9, 1  # LLVMLinkage, LLVMVisibility values
# write_objects splits a module for O0 code generation on two threads when it has SPLIT_MIN_BLOCKS basic blocks or
# more and its largest function at most SPLIT_LARGEST of them. (The MLP training step: ~830 blocks, 80 % of them
# in the step's function, whose code generation took 41 of 71 ms of CPU time; the other functions 30.)
SPLIT_MIN_BLOCKS = 200
SPLIT_LARGEST = 0.9
SECOND_SUFFIX = ".2.o"

# (name, result, argument types) of the C functions used: LLVM's, then MLIR's (called holding the GIL)
_LLVM_API = (
    ("LLVMContextCreate", _P), ("LLVMContextDispose", None, _P), ("LLVMDisposeModule", None, _P),
    ("LLVMGetDefaultTargetTriple", _P), ("LLVMGetHostCPUName", _P), ("LLVMGetHostCPUFeatures", _P),
    ("LLVMDisposeMessage", None, _P),
    ("LLVMGetTargetFromTriple", ctypes.c_int, _P, ctypes.POINTER(_P), ctypes.POINTER(_P)),
    ("LLVMCreateTargetMachine", _P, _P, _P, _P, _P, ctypes.c_int, ctypes.c_int, ctypes.c_int),
    ("LLVMDisposeTargetMachine", None, _P),
    ("LLVMCreateTargetDataLayout", _P, _P), ("LLVMDisposeTargetData", None, _P),
    ("LLVMSetTarget", None, _P, _P), ("LLVMSetModuleDataLayout", None, _P, _P),
    ("LLVMCreatePassBuilderOptions", _P), ("LLVMDisposePassBuilderOptions", None, _P),
    ("LLVMPassBuilderOptionsSetLoopUnrolling", None, _P, ctypes.c_int),
    ("LLVMPassBuilderOptionsSetLoopInterleaving", None, _P, ctypes.c_int),
    ("LLVMPassBuilderOptionsSetLoopVectorization", None, _P, ctypes.c_int),
    ("LLVMPassBuilderOptionsSetSLPVectorization", None, _P, ctypes.c_int),
    ("LLVMRunPasses", _P, _P, ctypes.c_char_p, _P, _P),
    ("LLVMGetErrorMessage", _P, _P), ("LLVMDisposeErrorMessage", None, _P),
    ("LLVMTargetMachineEmitToFile", ctypes.c_int, _P, _P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P)),
    # the packed wrappers
    ("LLVMGetModuleContext", _P, _P), ("LLVMGetFirstFunction", _P, _P), ("LLVMGetNextFunction", _P, _P),
    ("LLVMIsDeclaration", ctypes.c_int, _P),
    ("LLVMGetValueName2", _P, _P, ctypes.POINTER(ctypes.c_size_t)), ("LLVMGlobalGetValueType", _P, _P),
    ("LLVMCountParamTypes", ctypes.c_uint, _P), ("LLVMGetParamTypes", None, _P, ctypes.POINTER(_P)),
    ("LLVMGetReturnType", _P, _P), ("LLVMGetTypeKind", ctypes.c_int, _P),
    ("LLVMPointerTypeInContext", _P, _P, ctypes.c_uint), ("LLVMInt64TypeInContext", _P, _P),
    ("LLVMVoidTypeInContext", _P, _P), ("LLVMFunctionType", _P, _P, ctypes.POINTER(_P), ctypes.c_uint, ctypes.c_int),
    ("LLVMAddFunction", _P, _P, ctypes.c_char_p, _P), ("LLVMGetParam", _P, _P, ctypes.c_uint),
    ("LLVMAppendBasicBlockInContext", _P, _P, _P, ctypes.c_char_p),
    ("LLVMCreateBuilderInContext", _P, _P), ("LLVMPositionBuilderAtEnd", None, _P, _P),
    ("LLVMDisposeBuilder", None, _P), ("LLVMConstInt", _P, _P, ctypes.c_ulonglong, ctypes.c_int),
    ("LLVMBuildGEP2", _P, _P, _P, _P, ctypes.POINTER(_P), ctypes.c_uint, ctypes.c_char_p),
    ("LLVMBuildLoad2", _P, _P, _P, _P, ctypes.c_char_p),
    ("LLVMBuildCall2", _P, _P, _P, _P, ctypes.POINTER(_P), ctypes.c_uint, ctypes.c_char_p),
    ("LLVMBuildStore", _P, _P, _P, _P), ("LLVMBuildRetVoid", _P, _P),
    # inlinehint -> alwaysinline at O3
    ("LLVMGetEnumAttributeKindForName", ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t),
    ("LLVMGetEnumAttributeAtIndex", _P, _P, ctypes.c_uint, ctypes.c_uint),
    ("LLVMCreateEnumAttribute", _P, _P, ctypes.c_uint, ctypes.c_uint64),
    ("LLVMAddAttributeAtIndex", None, _P, ctypes.c_uint, _P),
    # splitting a module in two (write_objects)
    ("LLVMCountBasicBlocks", ctypes.c_uint, _P),
    ("LLVMWriteBitcodeToMemoryBuffer", _P, _P), ("LLVMDisposeMemoryBuffer", None, _P),
    ("LLVMParseBitcodeInContext2", ctypes.c_int, _P, _P, ctypes.POINTER(_P)),
    ("LLVMGetFirstGlobal", _P, _P), ("LLVMGetNextGlobal", _P, _P), ("LLVMDeleteGlobal", None, _P),
    ("LLVMSetInitializer", None, _P, _P),
    ("LLVMGetLinkage", ctypes.c_int, _P), ("LLVMSetLinkage", None, _P, ctypes.c_int),
    ("LLVMSetVisibility", None, _P, ctypes.c_int),
    ("LLVMGetFunctionCallConv", ctypes.c_uint, _P), ("LLVMSetFunctionCallConv", None, _P, ctypes.c_uint),
    ("LLVMGetAttributeCountAtIndex", ctypes.c_uint, _P, ctypes.c_uint),
    ("LLVMGetAttributesAtIndex", None, _P, ctypes.c_uint, ctypes.POINTER(_P)),
    ("LLVMReplaceAllUsesWith", None, _P, _P), ("LLVMDeleteFunction", None, _P),
    ("LLVMSetValueName2", None, _P, ctypes.c_char_p, ctypes.c_size_t),
)
_MLIR_API = (("mlirTranslateModuleToLLVMIR", _P, _P, _P), ("mlirRegisterAllLLVMTranslations", None, _P))


class _Api:
    """The C functions, bound once (`llvm.<name>`, `mlir.<name>`), and the host's triple, CPU and features."""

    def __init__(self, target):
        llvm_lib = ctypes.CDLL(LLVM_LIB)  # the copy MLIR's bindings loaded (the same file: not loaded again)
        mlir_lib = ctypes.PyDLL(MLIR_CAPI)  # PyDLL: its calls keep the GIL
        self.llvm = _bind(llvm_lib, _LLVM_API)
        self.mlir = _bind(mlir_lib, _MLIR_API)
        for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"):
            getattr(llvm_lib, f"LLVMInitialize{target}{part}")()
        self.triple = self._string(self.llvm.LLVMGetDefaultTargetTriple())
        self.cpu = self._string(self.llvm.LLVMGetHostCPUName())
        self.features = self._string(self.llvm.LLVMGetHostCPUFeatures())
        self.target = _P()
        error = _P()
        if self.llvm.LLVMGetTargetFromTriple(self.triple, ctypes.byref(self.target), ctypes.byref(error)):
            raise OSError(self._string(error.value))

    def _string(self, ptr):
        """The bytes of an LLVM-allocated message, which is then freed."""
        try:
            return ctypes.string_at(ptr)
        finally:
            self.llvm.LLVMDisposeMessage(ptr)


def _bind(lib, table):
    ns = type("C", (), {})()
    for name, restype, *argtypes in table:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
        setattr(ns, name, fn)
    return ns


@functools.lru_cache(maxsize=None)
def _api():
    """The bound C API, or None where it cannot be had (another CPU architecture, an LLVM without a symbol)."""
    target = _TARGETS.get(platform.machine().lower())
    if target is None:
        return None
    try:
        return _Api(target)
    except (OSError, AttributeError):
        return None


def available():
    """Whether object files can be generated here (else the ExecutionEngine generates them)."""
    return _api() is not None


@functools.lru_cache(maxsize=None)
def _capsule_functions():
    """Private prototypes of CPython's capsule functions (setting argtypes on ctypes.pythonapi's would change them
    for every other user in the process); looked up at the first build, not at import (a lookup waits for the
    dynamic linker, busy loading MLIR during `import tfn`: dialects/mlir_loading.py)."""
    name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    pointer = ctypes.PYFUNCTYPE(_P, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
    return name, pointer


def _capi_pointer(obj):
    """The C API pointer (MlirContext, MlirOperation) an MLIR Python object holds in its capsule."""
    capsule = obj._CAPIPtr
    name, pointer = _capsule_functions()
    return pointer(capsule, name(capsule))


class CodegenError(Exception):
    """LLVM could not translate or generate the code; the message says why."""


def write_object(llvm_module, path, opt_level=0):
    """Generate the code of `llvm_module` (an ir.Module in the LLVM dialect) at `opt_level` (a key of LEVELS) for
    the host CPU (its functions' target-features attributes name a target's features) into the object file `path`
    (position-independent). Raises CodegenError naming what failed."""
    write_objects(llvm_module, path, opt_level, split=False)


def write_objects(llvm_module, path, opt_level=0, split=True):
    """As write_object, into one object file or, at O0 (with `split`, where a core is likely idle: _idle_core) for a
    module that has SPLIT_MIN_BLOCKS basic blocks or more, at most SPLIT_LARGEST of them in its largest function,
    two generated at once on two threads: the largest function into `path`, the others into `path` + SECOND_SUFFIX
    (see _emit_split). Returns the paths of the object files written, to be linked together."""
    api = _api()
    llvm = api.llvm
    context = llvm.LLVMContextCreate()
    try:
        module = _translate(api, llvm_module, context)
        try:
            _prepare(api, module, opt_level)
            part = _largest_function(llvm, module) if split and opt_level == 0 and _idle_core() else None
            if part is None:
                _emit(api, module, path, opt_level)
                return [path]
            return _emit_split(api, module, part, path, opt_level)
        finally:
            llvm.LLVMDisposeModule(module)
    finally:
        llvm.LLVMContextDispose(context)


def _idle_core():
    """Whether a second thread is likely to find a core of its own: the process may run on two cores or more, and
    the last minute's load average is below their count. (On this project's busy 2-core machines, at load 8-10, the
    split's ~9 ms of extra CPU time made first calls slower, not faster.)"""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return cores > 1 and load < cores


def _translate(api, llvm_module, context):
    api.mlir.mlirRegisterAllLLVMTranslations(_capi_pointer(llvm_module.context))
    module = api.mlir.mlirTranslateModuleToLLVMIR(_capi_pointer(llvm_module.operation), context)
    if not module:
        raise CodegenError("the module does not translate to LLVM IR")
    return module


def _machine(api, opt_level):
    return api.llvm.LLVMCreateTargetMachine(api.target, api.triple, api.cpu, api.features, LEVELS[opt_level][1],
                                            _RELOC_PIC, _CODE_MODEL_DEFAULT)


def _prepare(api, module, opt_level):
    """The host's triple and data layout, the packed wrappers, alwaysinline at O3."""
    llvm = api.llvm
    machine = _machine(api, opt_level)
    try:
        llvm.LLVMSetTarget(module, api.triple)
        layout = llvm.LLVMCreateTargetDataLayout(machine)
        llvm.LLVMSetModuleDataLayout(module, layout)
        llvm.LLVMDisposeTargetData(layout)
    finally:
        llvm.LLVMDisposeTargetMachine(machine)
    _add_packed_wrappers(llvm, module)
    if opt_level == 3:
        _always_inline_hinted(llvm, module)


def _emit(api, module, path, opt_level):
    """Run LLVM's pipeline for `opt_level` on the prepared `module` and write its object file `path`."""
    llvm = api.llvm
    machine = _machine(api, opt_level)
    options = llvm.LLVMCreatePassBuilderOptions()
    for tuning in ("LoopUnrolling", "LoopInterleaving", "LoopVectorization", "SLPVectorization"):
        getattr(llvm, f"LLVMPassBuilderOptionsSet{tuning}")(options, 1)  # the engine's (OptUtils.cpp)
    try:
        error = llvm.LLVMRunPasses(module, LEVELS[opt_level][0], machine, options)
        if error:
            message = llvm.LLVMGetErrorMessage(error)
            text = ctypes.string_at(message).decode(errors="replace")
            llvm.LLVMDisposeErrorMessage(message)
            raise CodegenError(text)
        message = _P()
        if llvm.LLVMTargetMachineEmitToFile(machine, module, os.fsencode(path), _OBJECT_FILE, ctypes.byref(message)):
            text = ctypes.string_at(message.value).decode(errors="replace") if message.value else "no message"
            llvm.LLVMDisposeMessage(message)
            raise CodegenError(text)
    finally:
        llvm.LLVMDisposePassBuilderOptions(options)
        llvm.LLVMDisposeTargetMachine(machine)


def _functions(llvm, module):
    fn = llvm.LLVMGetFirstFunction(module)
    while fn:
        yield fn
        fn = llvm.LLVMGetNextFunction(fn)


def _globals(llvm, module):
    g = llvm.LLVMGetFirstGlobal(module)
    while g:
        yield g
        g = llvm.LLVMGetNextGlobal(g)


def _name(llvm, value):
    size = ctypes.c_size_t()
    return ctypes.string_at(llvm.LLVMGetValueName2(value, ctypes.byref(size)), size.value)


def _largest_function(llvm, module):
    """The function to generate apart from the others (its name), or None when the module is not worth splitting
    (see SPLIT_MIN_BLOCKS, SPLIT_LARGEST) or cannot be split (a symbol the two parts would share has no name)."""
    sizes = [(llvm.LLVMCountBasicBlocks(fn), fn) for fn in _functions(llvm, module) if not llvm.LLVMIsDeclaration(fn)]
    total = sum(n for n, _ in sizes)
    if len(sizes) < 2 or total < SPLIT_MIN_BLOCKS:
        return None
    largest, fn = max(sizes, key=lambda s: s[0])
    if largest > SPLIT_LARGEST * total:
        return None
    if any(not _name(llvm, v) for v in (*_functions(llvm, module), *_globals(llvm, module))):
        return None
    return _name(llvm, fn)


def _emit_split(api, module, largest, path, opt_level):
    """Generate the function named `largest` into `path` on this thread, the module's other functions into `path`
    + SECOND_SUFFIX on another (from a copy of the module in a context of its own, read from its bitcode): each part
    declares what it calls in the other, and the symbols the parts share that were local to the module are hidden
    ones of the shared object. LLVM's passes and code generation run without the GIL."""
    llvm = api.llvm
    second = path + SECOND_SUFFIX
    buffer = llvm.LLVMWriteBitcodeToMemoryBuffer(module)
    failed = []

    def generate_second():
        try:
            _emit_copy(api, buffer, largest, second, opt_level)
        except Exception as e:  # noqa: BLE001 -- raised on the calling thread
            failed.append(e if isinstance(e, CodegenError) else CodegenError(f"{type(e).__name__}: {e}"))

    thread = threading.Thread(target=generate_second, name="tfn-codegen", daemon=True)
    thread.start()
    try:
        _keep_function(llvm, module, largest)
        _emit(api, module, path, opt_level)
    finally:
        thread.join()
        llvm.LLVMDisposeMemoryBuffer(buffer)
    if failed:
        raise failed[0]
    return [path, second]


def _emit_copy(api, buffer, largest, path, opt_level):
    """The other part of _emit_split: the module in `buffer` (bitcode) but the function `largest`, into `path`."""
    llvm = api.llvm
    context = llvm.LLVMContextCreate()
    try:
        module = _P()
        if llvm.LLVMParseBitcodeInContext2(context, buffer, ctypes.byref(module)):
            raise CodegenError("the module's bitcode could not be read back to split it")
        try:
            _keep_all_but(llvm, module, largest)
            _emit(api, module, path, opt_level)
        finally:
            llvm.LLVMDisposeModule(module)
    finally:
        llvm.LLVMContextDispose(context)


def _keep_function(llvm, module, name):
    """The part holding function `name` and every global variable (local ones made hidden, for the other part)."""
    for fn in list(_functions(llvm, module)):
        if llvm.LLVMIsDeclaration(fn):
            continue
        if _name(llvm, fn) != name:
            _declare(llvm, module, fn)
        else:
            _unhide_local(llvm, fn)
    for g in _globals(llvm, module):
        _unhide_local(llvm, g)


def _unhide_local(llvm, value):
    """A function or global variable local to the module made a hidden symbol of the shared object."""
    if llvm.LLVMGetLinkage(value) in (_INTERNAL, _PRIVATE):
        llvm.LLVMSetLinkage(value, _EXTERNAL)
        llvm.LLVMSetVisibility(value, _HIDDEN)


def _keep_all_but(llvm, module, name):
    """The part holding every function but `name` (local ones made hidden, for the other part) and declaring every
    global variable, which the other part defines."""
    for fn in list(_functions(llvm, module)):
        if llvm.LLVMIsDeclaration(fn):
            continue
        if _name(llvm, fn) == name:
            _declare(llvm, module, fn)
        else:
            _unhide_local(llvm, fn)
    for g in list(_globals(llvm, module)):
        linkage = llvm.LLVMGetLinkage(g)
        if linkage == _APPENDING:  # (llvm.global_ctors and the like: the other part holds them)
            llvm.LLVMDeleteGlobal(g)
            continue
        llvm.LLVMSetInitializer(g, None)
        llvm.LLVMSetLinkage(g, _EXTERNAL)
        if linkage in (_INTERNAL, _PRIVATE):
            llvm.LLVMSetVisibility(g, _HIDDEN)


def _declare(llvm, module, fn):
    """Replace the definition `fn` by a declaration of the same name, type, calling convention and parameter and
    result attributes (a local function's is hidden: the other part defines it so)."""
    name, local = _name(llvm, fn), llvm.LLVMGetLinkage(fn) in (_INTERNAL, _PRIVATE)
    fn_type = llvm.LLVMGlobalGetValueType(fn)
    decl = llvm.LLVMAddFunction(module, b"", fn_type)
    llvm.LLVMSetFunctionCallConv(decl, llvm.LLVMGetFunctionCallConv(fn))
    for index in range(llvm.LLVMCountParamTypes(fn_type) + 1):  # 0: the result, i: parameter i - 1
        count = llvm.LLVMGetAttributeCountAtIndex(fn, index)
        if count:
            attrs = (_P * count)()
            llvm.LLVMGetAttributesAtIndex(fn, index, attrs)
            for attr in attrs:
                llvm.LLVMAddAttributeAtIndex(decl, index, attr)
    llvm.LLVMReplaceAllUsesWith(fn, decl)
    llvm.LLVMDeleteFunction(fn)
    llvm.LLVMSetValueName2(decl, name, len(name))
    if local:
        llvm.LLVMSetVisibility(decl, _HIDDEN)


def _always_inline_hinted(llvm, module):
    """Make the functions marked inlinehint alwaysinline: the register-tile kernels that
    passes/tfn_outline_micro_kernels.py outlined go back into their callers at O3 (their constant strides and
    bounds then fold as before), whatever the inliner's cost model says; O0's pipeline inlines only alwaysinline
    functions, so O0 code keeps one copy of each."""
    hint = llvm.LLVMGetEnumAttributeKindForName(b"inlinehint", len(b"inlinehint"))
    always = llvm.LLVMGetEnumAttributeKindForName(b"alwaysinline", len(b"alwaysinline"))
    context = llvm.LLVMGetModuleContext(module)
    for fn in _functions(llvm, module):
        if not llvm.LLVMIsDeclaration(fn) and llvm.LLVMGetEnumAttributeAtIndex(fn, _FUNCTION_INDEX, hint):
            llvm.LLVMAddAttributeAtIndex(fn, _FUNCTION_INDEX, llvm.LLVMCreateEnumAttribute(context, always, 0))


def _add_packed_wrappers(llvm, module):
    """Give each C interface function `f` (`_mlir_ciface_*`, defined here) the wrapper `_mlir_f(void **args)` that
    loads argument i from *args[i], calls f and stores its result, if any, to *args[n] (the engine's convention)."""
    size = ctypes.c_size_t()
    targets = []
    for fn in _functions(llvm, module):
        name = ctypes.string_at(llvm.LLVMGetValueName2(fn, ctypes.byref(size)), size.value)
        if name.startswith(_CIFACE_PREFIX.encode()) and not llvm.LLVMIsDeclaration(fn):
            targets.append((name, fn))
    if not targets:
        return
    builder = llvm.LLVMCreateBuilderInContext(llvm.LLVMGetModuleContext(module))
    try:
        for name, fn in targets:
            _packed_wrapper(llvm, module, builder, _PACKED_PREFIX.encode() + name, fn)
    finally:
        llvm.LLVMDisposeBuilder(builder)


def _packed_wrapper(llvm, module, builder, name, fn):
    context = llvm.LLVMGetModuleContext(module)
    ptr = llvm.LLVMPointerTypeInContext(context, 0)
    i64 = llvm.LLVMInt64TypeInContext(context)
    wrapper = llvm.LLVMAddFunction(module, name, llvm.LLVMFunctionType(llvm.LLVMVoidTypeInContext(context),
                                                                       (_P * 1)(ptr), 1, 0))
    llvm.LLVMPositionBuilderAtEnd(builder, llvm.LLVMAppendBasicBlockInContext(context, wrapper, b"entry"))
    packed = llvm.LLVMGetParam(wrapper, 0)

    def slot(i):  # *args[i]: where argument (or the result) i is
        index = (_P * 1)(llvm.LLVMConstInt(i64, i, 0))
        return llvm.LLVMBuildLoad2(builder, ptr, llvm.LLVMBuildGEP2(builder, ptr, packed, index, 1, b""), b"")

    fn_type = llvm.LLVMGlobalGetValueType(fn)
    n = llvm.LLVMCountParamTypes(fn_type)
    params = (_P * max(n, 1))()
    llvm.LLVMGetParamTypes(fn_type, params)
    args = (_P * max(n, 1))(*[llvm.LLVMBuildLoad2(builder, params[i], slot(i), b"") for i in range(n)])
    result = llvm.LLVMBuildCall2(builder, fn_type, fn, args, n, b"")
    if llvm.LLVMGetTypeKind(llvm.LLVMGetReturnType(fn_type)) != _VOID_TYPE_KIND:
        llvm.LLVMBuildStore(builder, result, slot(n))
    llvm.LLVMBuildRetVoid(builder)
