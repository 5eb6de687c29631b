"""Named pipelines: the stages every inspection API and tfn-opt share."""
from dataclasses import dataclass

PIPELINES = {}


@dataclass(frozen=True)
class Pipeline:
    name: str
    summary: str
    text: str


def _define(name, summary, *elements):
    PIPELINES[name] = Pipeline(name, summary, ", ".join(elements))


BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}")

LOWER_TO_LLVM = (
    "convert-vector-to-scf", "convert-linalg-to-loops", "lower-affine", "convert-scf-to-cf",
    "expand-strided-metadata", "lower-affine", "convert-vector-to-llvm", "finalize-memref-to-llvm",
    "convert-math-to-llvm", "convert-math-to-libm", "convert-arith-to-llvm", "convert-cf-to-llvm",
    "convert-ub-to-llvm", "convert-func-to-llvm", "convert-index-to-llvm", "reconcile-unrealized-casts",
)

_define("tfn-lower-to-linalg", "Stage `linalg`: verify and lower tfn ops to linalg on tensors",
        "tfn-verify", "tfn-to-linalg", "canonicalize", "cse")
_define("tfn-bufferize", "Stage `bufferized`: tensors to memrefs with every temporary freed",
        "tfn-mark-readonly-args", BUFFERIZE, "canonicalize", "buffer-deallocation-pipeline",
        "convert-bufferization-to-memref", "canonicalize")
_define("tfn-lower-to-llvm", "Stage `llvm`: memref/scf/arith/math to the LLVM dialect",
        "math-expand-ops{ops=tanh}", *LOWER_TO_LLVM)
_define("tfn-pipeline", "The whole CPU pipeline: tfn to the LLVM dialect",
        "tfn-lower-to-linalg", "tfn-bufferize", "tfn-lower-to-llvm")

# stage name -> the pipelines that produce it from the previous stage
STAGES = ("tfn", "linalg", "bufferized", "llvm")
STAGE_PIPELINES = {"linalg": "tfn-lower-to-linalg", "bufferized": "tfn-bufferize", "llvm": "tfn-lower-to-llvm"}
