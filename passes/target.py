"""The CPU tfn generates code for: detected once from the host, overridable by TFN_TARGET_FEATURES.

The target supplies the defaults of the passes' machine options (worker threads, vector width, vector registers:
see passes/options.py) and the LLVM function attributes code generation applies (runtime/compiler.py).

TFN_TARGET_FEATURES names an instruction-set level at most the host's: `native` (the default: the host as it is),
`avx512`, `avx2` (the host minus AVX-512), `sse` (the host minus AVX) on x86-64, `neon` on aarch64. A lower
level than the host's generates code for it, which this machine still runs: that is how tests check the AVX2
schedules on an AVX-512 machine.
"""
import functools
import os

from tfn.dialects.frozen import Frozen

ENV = "TFN_TARGET_FEATURES"

# x86-64 levels, best first: (name, /proc/cpuinfo flags the host needs, vector bits, vector registers, the LLVM
# target features that make code generation stop at this level on a better host). A function's target-features
# attribute replaces the host's feature string, so the lower levels list what they keep as well as what they drop;
# dropping a feature drops every feature that implies it (-avx512f drops all of AVX-512, -avx drops AVX2 and FMA).
_X86_LEVELS = (
    ("avx512", ("avx512f", "avx512bw", "avx512dq", "avx512vl"), 512, 32, ()),
    ("avx2", ("avx2", "fma"), 256, 16,
     ("+avx2", "+fma", "+f16c", "+bmi", "+bmi2", "+lzcnt", "+movbe", "+popcnt", "-avx512f")),
    ("sse", ("sse4_2",), 128, 16, ("+sse4.2", "+popcnt", "-avx")),
)
_AARCH64_LEVELS = (("neon", (), 128, 32, ()),)
_GENERIC = ("generic", (), 128, 16, ())


class Target(Frozen):
    """One code-generation target: what the passes tune for and what LLVM generates code for.

    arch: os.uname().machine (x86_64, aarch64, ...); isa: the level code is generated for (avx512, avx2, sse, neon
    or generic); vector_bits: the width of one vector register; vector_registers: the architectural vector
    registers; cores: the CPUs this process may run on (its affinity mask); caches: (name, bytes) per cache level of
    CPU 0, e.g. ("L1d", 32768); cpu: the host CPU's model name; llvm_features: target-features for every generated
    function, () for the host's own; host_id: what identifies the host's CPU to LLVM (vendor, model, flags)."""

    _fields = ("arch", "isa", "vector_bits", "vector_registers", "cores", "caches", "cpu", "llvm_features", "host_id")
    _hidden = ("host_id",)

    def __init__(self, arch, isa, vector_bits, vector_registers, cores, caches=(), cpu="", llvm_features=(),
                 host_id=""):
        self._set(arch=arch, isa=isa, vector_bits=vector_bits, vector_registers=vector_registers, cores=cores,
                  caches=caches, cpu=cpu, llvm_features=llvm_features, host_id=host_id)

    def cache_key(self):
        """Text that differs whenever code generated for this target may differ (artifact cache key material)."""
        return (f"{self.arch} {self.isa} bits={self.vector_bits} regs={self.vector_registers} cores={self.cores} "
                f"features={','.join(self.llvm_features)} host={self.host_id}")

    def describe(self):
        """A short human-readable line: ISA, vector width, cores and caches."""
        caches = ", ".join(f"{name} {_size_text(size)}" for name, size in self.caches)
        return (f"{self.arch} {self.isa} ({self.vector_bits}-bit vectors, {self.vector_registers} registers), "
                f"{self.cores} cores" + (f", {caches}" if caches else "") + (f"; {self.cpu}" if self.cpu else ""))


def _size_text(n):
    return f"{n // (1 << 20)}M" if n % (1 << 20) == 0 else f"{n // 1024}K" if n % 1024 == 0 else str(n)


def _cpuinfo():
    """{field: value} of the first processor in /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    if fields:
                        break
                    continue
                name, _, value = line.partition(":")
                fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    return fields


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _caches(root="/sys/devices/system/cpu/cpu0/cache"):
    """(name, bytes) of each data or unified cache of CPU 0, from sysfs; () where sysfs does not say."""
    found = []
    try:
        entries = sorted(e for e in os.listdir(root) if e.startswith("index"))
    except OSError:
        return ()
    for entry in entries:
        try:
            level, kind, size = (_read(os.path.join(root, entry, f)) for f in ("level", "type", "size"))
        except OSError:
            continue
        if kind == "Instruction" or not size[:-1].isdigit():
            continue
        factor = {"K": 1024, "M": 1 << 20}.get(size[-1], 1)
        found.append((f"L{level}" + ("d" if kind == "Data" else ""), int(size.rstrip("KM")) * factor))
    return tuple(found)


def _read(path):
    with open(path) as f:
        return f.read().strip()


def _levels(arch):
    if arch in ("x86_64", "amd64", "AMD64"):
        return _X86_LEVELS
    if arch in ("aarch64", "arm64"):
        return _AARCH64_LEVELS
    return ()


def _supported(arch, flags):
    """The levels this host runs, best first (on x86-64, each needs its /proc/cpuinfo flags)."""
    return [lvl for lvl in _levels(arch) if all(f in flags for f in lvl[1])] or [_GENERIC]


@functools.lru_cache(maxsize=None)
def _host():
    """(arch, supported levels, cores, caches, cpu name, host id), read once per process."""
    arch = os.uname().machine
    info = _cpuinfo()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    host_id = " ".join(f"{k}={info[k]}" for k in ("vendor_id", "cpu family", "model", "stepping", "CPU implementer",
                                                  "CPU part", "CPU variant", "flags", "Features") if k in info)
    cpu = info.get("model name") or info.get("Hardware") or ""
    return arch, tuple(_supported(arch, flags)), _cores(), _caches(), cpu, host_id


@functools.lru_cache(maxsize=None)
def target_for(features="native"):
    """The Target for a TFN_TARGET_FEATURES value on this host; ValueError naming the choices when it cannot be."""
    arch, levels, cores, caches, cpu, host_id = _host()
    names = [lvl[0] for lvl in levels]
    wanted = features.strip().lower() or "native"
    if wanted == "native":
        wanted = names[0]
    if wanted not in names:
        known = [lvl[0] for lvl in _levels(arch)]
        why = "this host does not support it" if wanted in known else "unknown level"
        raise ValueError(f"{ENV}={features!r}: {why}; this {arch} host supports native, {', '.join(names)}")
    name, _, bits, registers, llvm_features = levels[names.index(wanted)]
    # the host's own level needs no attributes: LLVM generates code for the host CPU as it is
    return Target(arch, name, bits, registers, cores, caches, cpu, () if name == names[0] else llvm_features, host_id)


def current():
    """The Target code is generated for now: the host, or the level TFN_TARGET_FEATURES names."""
    return target_for(os.environ.get(ENV, "native"))


# ---- GPU targets (NVIDIA): the facts the GPU passes take their option defaults from ----
GPU_ENV = "TFN_GPU_CHIP"


class GpuTarget(Frozen):
    """One NVIDIA GPU architecture tfn generates kernels for (passes/tfn_gpu_*.py)."""

    _fields = ("chip", "ptx_features", "warp_size", "block_size", "matmul_tile", "matmul_per_thread", "shared_bytes",
               "multiprocessors")

    def __init__(self, chip, ptx_features, warp_size=32, block_size=256, matmul_tile=16, matmul_per_thread=4,
                 shared_bytes=48 * 1024, multiprocessors=132):
        self._set(
            chip=chip,                            # sm_90, sm_80: the `cubin-chip` of gpu-lower-to-nvvm-pipeline
            ptx_features=ptx_features,            # the PTX ISA version ptxas is given (`cubin-features`)
            warp_size=warp_size,                  # threads of one warp (the width of gpu.shuffle)
            block_size=block_size,                # threads per block of the elementwise and reduction kernels
            matmul_tile=matmul_tile,              # the matmul kernel's threads per side (tile x tile per block), k step
            matmul_per_thread=matmul_per_thread,  # outputs per side per matmul thread: a block computes 64 x 64 of C
            shared_bytes=shared_bytes,            # static shared memory one block may use
            multiprocessors=multiprocessors)      # SMs: an elementwise kernel of unknown size gets 4 blocks per SM


GPU_TARGETS = {
    "sm_90": GpuTarget("sm_90", "+ptx80", multiprocessors=132),  # Hopper (H100): PTX 8.0 is the first with sm_90
    "sm_80": GpuTarget("sm_80", "+ptx80", multiprocessors=108),  # Ampere (A100)
}


def gpu_target(chip=None):
    """The GpuTarget for `chip` (default: TFN_GPU_CHIP, else sm_90); ValueError naming the choices."""
    chip = chip or os.environ.get(GPU_ENV, "sm_90")
    if chip not in GPU_TARGETS:
        raise ValueError(f"unknown GPU chip {chip!r}; tfn generates code for {', '.join(sorted(GPU_TARGETS))}")
    return GPU_TARGETS[chip]
