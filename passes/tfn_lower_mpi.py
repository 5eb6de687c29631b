"""tfn-lower-mpi: define the collectives' MPI helpers (passes/lowering/collective.py) as LLVM functions.

The lowered collectives call helpers (`tfn_mpi_allreduce_<reduction>_<memref type>`, `tfn_mpi_comm_rank`,
`tfn_mpi_comm_size`) rather than holding `mpi` dialect ops: buffer deallocation rejects `mpi.allreduce` (its memory
effects are unknown to it), while a call is understood. This pass writes each declared helper as `mpi` dialect
text in a module of its own and lowers it with upstream `convert-to-llvm`, whose MPI patterns read the MPI
implementation (its constants: MPI_COMM_WORLD, the datatypes) from the module attribute
`dlti.map<"MPI:Implementation" = ...>` — MPICH's ABI here, the `mpich` wheel's (without that attribute the pass
aborts the process). The LLVM functions replace the declarations. That module lives in a context of its own: a
pass manager cannot run, nor a dialect be loaded, in the context of the pipeline running this pass.

Run it after the other conversions to LLVM, before reconcile-unrealized-casts; a module without helpers is left
unchanged.
"""
from mlir import ir
from mlir.passmanager import PassManager

from tfn.passes.lowering.collective import (
    HELPER_PREFIX,
    MPI_IMPLEMENTATION,
    MPI_IMPLEMENTATION_ATTR,
    SHARED_HOOK,
    helper_text,
    shared_hook_text,
)
from tfn.passes.registry import register

_TO_LLVM = ("builtin.module(expand-strided-metadata, lower-affine, finalize-memref-to-llvm, "
            "convert-arith-to-llvm, convert-to-llvm, reconcile-unrealized-casts)")


def _symbol(op):
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else None


def lowered_helpers(names):
    """The LLVM dialect text of the helpers `names` (and the MPI functions they call), lowered in a new context."""
    helpers = "".join(map(helper_text, names))
    hook = shared_hook_text() if SHARED_HOOK in helpers else ""
    text = f"module attributes {{{MPI_IMPLEMENTATION_ATTR} = {MPI_IMPLEMENTATION}}} {{\n" + hook + helpers + "}"
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        PassManager.parse(_TO_LLVM).run(module.operation)
        return [str(op) for op in module.body.operations]


@register("tfn-lower-mpi", "Define the MPI helpers that lowered collective ops call (mpi dialect, lowered to "
                          "calls of the MPI C library, MPICH's ABI)")
def lower_mpi(module_op):
    body = module_op.regions[0].blocks[0]
    helpers = [op for op in body.operations if op.operation.name in ("llvm.func", "func.func")
               and (_symbol(op) or "").startswith(HELPER_PREFIX) and not op.regions[0].blocks]
    if not helpers:
        return
    lowered = lowered_helpers([_symbol(op) for op in helpers])
    for op in helpers:
        op.operation.erase()
    table = ir.SymbolTable(module_op)
    defined = ir.Module.parse("module {\n" + "\n".join(lowered) + "\n}")
    anchor = body.operations[0]
    for op in list(defined.body.operations):
        if _symbol(op) not in table:  # an MPI function two helpers call is declared once
            op.operation.move_before(anchor)
