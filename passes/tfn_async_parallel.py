"""tfn-async-parallel: run the scf.forall loops of tfn-parallelize / tfn-vectorize-kernels on MLIR's async runtime.

Upstream passes only: scf-forall-to-parallel, async-parallel-for (option `workers` threads, default: the cores
available; min-task-size=1: a forall of tfn-parallelize or tfn-pack-matmul has one iteration per task, up to
`tasks-per-worker` per worker, and async-parallel-for makes each a task of its own (it cuts a loop into at most 8
blocks per worker with up to 4 workers); the convolution's loop over output rows has one per row and is cut into
blocks of rows by async-parallel-for itself), async-to-async-runtime, the
reference-counting passes and convert-async-to-llvm. They run only on modules holding an scf.forall:
convert-async-to-llvm declares the whole runtime API in every module it sees, and a compiled library that calls
the runtime links libmlir_async_runtime.so (runtime/compiler.py), which loads libLLVM in a new process.
"""
from mlir.passmanager import PassManager

from tfn.passes.options import WORKERS
from tfn.passes.registry import register
from tfn.passes.walk import collect


def async_passes(workers):
    """The upstream passes lowering scf.forall to tasks of the async runtime run by `workers` threads."""
    return ("scf-forall-to-parallel", f"async-parallel-for{{num-workers={workers} min-task-size=1}}",
            "async-to-async-runtime", "async-runtime-ref-counting", "async-runtime-ref-counting-opt",
            "convert-async-to-llvm")


@register("tfn-async-parallel", "Lower scf.forall loops to tasks of MLIR's async runtime (upstream async passes); "
          "modules without scf.forall are left untouched", options=[WORKERS])
def async_parallel(module_op, workers):
    if not collect(module_op, lambda op: op.name == "scf.forall"):
        return
    pm = PassManager.parse(f"builtin.module({','.join(async_passes(workers))})", context=module_op.context)
    pm.run(module_op)
