"""Named pipelines: the stages every inspection API and tfn-opt share."""
import functools
from dataclasses import dataclass

from tfn.passes import options as pass_options
from tfn.passes import registry
from tfn.passes import target as target_mod

PIPELINES = {}


@dataclass(frozen=True)
class Pipeline:
    name: str
    summary: str
    text: str


def _define(name, summary, *elements):
    PIPELINES[name] = Pipeline(name, summary, ", ".join(elements))


# allow-return-allocs-from-loops: an scf.while body may yield a new tensor (a loop variable's next value).
BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops}")

LOWER_TO_LLVM = (
    "convert-vector-to-scf", "convert-linalg-to-loops", "lower-affine", "convert-scf-to-cf",
    "expand-strided-metadata", "lower-affine", "convert-vector-to-llvm", "finalize-memref-to-llvm",
    "convert-math-to-llvm", "convert-math-to-libm", "convert-arith-to-llvm", "convert-cf-to-llvm",
    "convert-ub-to-llvm", "convert-func-to-llvm", "convert-index-to-llvm", "reconcile-unrealized-casts",
)

# Elementwise fusion before bufferization is also what keeps compile time linear: one-shot-bufferize on a
# chain of n unfused ops took ~n^3 time (a 1,000-op chain: 241 s unfused, 7 s fused).
_define("tfn-lower-to-linalg", "Stage `linalg`: verify, lower tfn ops to linalg on tensors, fuse elementwise ops",
        "tfn-verify", "tfn-to-linalg", "canonicalize", "cse", "linalg-fuse-elementwise-ops", "canonicalize")
_define("tfn-bufferize", "Stage `bufferized`: tensors to memrefs with every temporary freed",
        "tfn-pack-matmul", "tfn-vectorize-kernels", "tfn-vectorize-reductions", "tfn-parallelize",
        "tfn-vectorize-elementwise",
        "tfn-mark-readonly-args", BUFFERIZE, "canonicalize",
        "buffer-deallocation-pipeline", "convert-bufferization-to-memref", "tfn-widen-bool-memrefs", "canonicalize")
_define("tfn-lower-to-llvm", "Stage `llvm`: memref/scf/arith/math to the LLVM dialect",
        "tfn-lower-vector-ops", "tfn-polynomial-approximation", "tfn-div-by-constant", "math-expand-ops{ops=tanh}",
        "tfn-async-parallel", *LOWER_TO_LLVM)
_define("tfn-pipeline", "The whole CPU pipeline: tfn to the LLVM dialect",
        "tfn-lower-to-linalg", "tfn-bufferize", "tfn-lower-to-llvm")

# stage name -> the pipelines that produce it from the previous stage
STAGES = ("tfn", "linalg", "bufferized", "llvm")
STAGE_PIPELINES = {"linalg": "tfn-lower-to-linalg", "bufferized": "tfn-bufferize", "llvm": "tfn-lower-to-llvm"}


def text(name, target=None):
    """The pipeline `name` spelled out for `target` (default: target.current()): named pipelines expanded, every
    tfn pass with options given all of them explicitly. The same text compiles the same way on any machine, so
    hashing it (with the target's cache_key) keys artifacts by target."""
    return spelled_out(name, target_mod.current() if target is None else target)


@functools.lru_cache(maxsize=None)
def spelled_out(pipeline, target):
    """A pipeline text with named pipelines expanded and every tfn pass's options explicit for `target`; the text
    itself when it has neither to spell out."""
    parts = _explicit(pipeline, target)
    return pipeline if parts == registry.split_pipeline(pipeline) else ", ".join(parts)


def _explicit(pipeline, target):
    """The elements of a pipeline text, named pipelines expanded and tfn passes' options all given."""
    registry._ensure_loaded()
    out = []
    for element in registry.split_pipeline(pipeline):
        name, given = pass_options.split_element(element)
        p = registry.PASSES.get(name)
        if name in PIPELINES:
            pass_options.parse(name, given, ())  # a named pipeline takes no options
            out += _explicit(PIPELINES[name].text, target)
        elif p is not None and p.options:
            values = pass_options.resolve(p.options, pass_options.parse(name, given, p.options), target)
            out.append(f"{name}{{{pass_options.render(p.options, values)}}}")
        else:
            out.append(element)
    return out
