"""Named pipelines: the stages every inspection API and tfn-opt share."""
from tfn.dialects.frozen import Frozen
from tfn.passes.target import GPU_TARGETS

PIPELINES = {}


class Pipeline(Frozen):
    """A named pipeline: its name, what it does and its pass pipeline text."""

    _fields = ("name", "summary", "text")

    def __init__(self, name, summary, text):
        self._set(name=name, summary=summary, text=text)


def _define(name, summary, *elements):
    PIPELINES[name] = Pipeline(name, summary, ", ".join(elements))


# allow-return-allocs-from-loops: an scf.while body may yield a new tensor (a loop variable's next value).
BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops}")

# The first seven work on each function alone (they make no module-level symbol: tfn emits no vector.print), so they
# run nested, on the functions in parallel where the context allows threads (tfn-opt's does not): after
# tfn-async-parallel a module holds its caller and one compute function per parallel loop. Nested, they give the same
# IR; on bench (h)'s step they took ~47 ms at module level, ~44 nested on one thread, ~34-44 on two busy cores.
LOWER_TO_LLVM = (
    "func.func(convert-vector-to-scf, convert-linalg-to-loops, lower-affine, convert-scf-to-cf, "
    "expand-strided-metadata, lower-affine, convert-vector-to-llvm)", "finalize-memref-to-llvm",
    "convert-math-to-llvm", "convert-math-to-libm", "convert-arith-to-llvm", "convert-cf-to-llvm",
    "convert-ub-to-llvm", "convert-func-to-llvm", "tfn-return-on-failed-alloc", "tfn-cache-large-buffers",
    "tfn-thread-local-errors", "convert-index-to-llvm", "tfn-lower-mpi", "reconcile-unrealized-casts",
)

# Elementwise fusion before bufferization is also what keeps compile time linear: one-shot-bufferize on a
# chain of n unfused ops took ~n^3 time (a 1,000-op chain: 241 s unfused, 7 s fused). tfn-fuse-elementwise-chains
# fuses chains in linear time first: linalg-fuse-elementwise-ops alone takes ~n^2 (1,000 ops: ~1 s).
_define("tfn-lower-to-linalg", "Stage `linalg`: verify, lower tfn ops to linalg on tensors, fuse elementwise ops",
        "tfn-verify", "tfn-fold-constants", "tfn-to-linalg{verify=0}", "canonicalize", "cse",
        "tfn-fuse-elementwise-chains", "linalg-fuse-elementwise-ops", "canonicalize")
# No canonicalize between BUFFERIZE and buffer-deallocation-pipeline: that pipeline starts with expand-realloc
# (nothing to do: neither tfn nor one-shot-bufferize makes a memref.realloc) and canonicalize, and a canonicalize run
# twice in a row changes nothing the second time (~3 ms of bench (h)'s step; same LLVM-dialect output).
_define("tfn-bufferize", "Stage `bufferized`: tensors to memrefs with every temporary freed",
        "tfn-pack-matmul", "tfn-vectorize-kernels", "tfn-vectorize-reductions", "tfn-parallelize",
        "tfn-vectorize-depthwise",
        "tfn-vectorize-elementwise",
        "tfn-mark-readonly-args", BUFFERIZE, "tfn-copy-strided-results",
        "buffer-deallocation-pipeline", "convert-bufferization-to-memref", "tfn-widen-bool-memrefs", "canonicalize")
# tfn-div-by-constant before tfn-polynomial-approximation: the polynomials divide by no constant, and the tanh of
# other types that the latter expands (math-expand-ops) is expanded after the divisions were rewritten, as when it
# was a step of its own after both.
_define("tfn-lower-to-llvm", "Stage `llvm`: memref/scf/arith/math to the LLVM dialect",
        "tfn-expand-strided-copies", "tfn-check-allocs", "tfn-guard-worker-allocs", "tfn-hoist-error-slots",
        "tfn-outline-micro-kernels", "tfn-lower-vector-ops", "tfn-keep-fill-loops-rolled",
        "tfn-div-by-constant", "tfn-polynomial-approximation", "tfn-async-parallel",
        *LOWER_TO_LLVM)
_define("tfn-pipeline", "The whole CPU pipeline: tfn to the LLVM dialect",
        "tfn-lower-to-linalg", "tfn-bufferize", "tfn-lower-to-llvm")

# stage name -> the pipelines that produce it from the previous stage
STAGES = ("tfn", "linalg", "bufferized", "llvm")
STAGE_PIPELINES = {"linalg": "tfn-lower-to-linalg", "bufferized": "tfn-bufferize", "llvm": "tfn-lower-to-llvm"}

# ---- GPU (passes/gpu.py spells these out for a chip; the named pipelines are for the default GPU target) ----
GPU_MAPPED = ("tfn-lower-to-linalg", "tfn-gpu-generalize", "tfn-gpu-tile", "tfn-mark-readonly-args", BUFFERIZE,
              "canonicalize", "buffer-deallocation-pipeline", "convert-bufferization-to-memref",
              "tfn-widen-bool-memrefs", "canonicalize", "tfn-gpu-map", "convert-linalg-to-loops", "lower-affine",
              "cse", "canonicalize", "tfn-gpu-device-buffers", "canonicalize")


def gpu_nvvm_tail(chip, ptx_features, opt_level=3):
    """Outlining, the synchronous host ops made async (gpu-to-llvm lowers only those), NVVM and a fatbin."""
    return ("gpu-kernel-outlining", "func.func(gpu-async-region)",
            f"gpu-lower-to-nvvm-pipeline{{cubin-chip={chip} cubin-features={ptx_features} cubin-format=fatbin "
            f"opt-level={opt_level}}}")


_define("tfn-gpu-mapped", "GPU stage `mapped`: tfn to gpu.launch kernels (blocks and threads) on device buffers",
        *GPU_MAPPED)
_define("tfn-gpu-nvvm", "The whole GPU pipeline for sm_90: tfn to LLVM host code calling the CUDA runtime wrappers, "
        "kernels in an embedded fatbin", "tfn-gpu-mapped",
        *gpu_nvvm_tail(GPU_TARGETS["sm_90"].chip, GPU_TARGETS["sm_90"].ptx_features))
_define("tfn-gpu-emulation", "The GPU kernels emulated on the CPU: tfn-gpu-mapped, blocks and threads as loops, then "
        "the CPU lowering", "tfn-gpu-mapped", "tfn-gpu-emulate", "canonicalize", "tfn-lower-to-llvm")
