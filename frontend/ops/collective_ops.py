"""Collective ops across the replicas of an MPI job (one replica per process): all_reduce, broadcast, all_gather.

Traced, they are ops of the compiled function (calls of MPI from native code); eagerly, calls of MPI through
mpi4py. Either way MPI is started on first use, and a process outside `mpiexec` is a job of one replica.
tfn.distribute's strategy and replica context are the usual way in; these are the ops under them.
"""
from tfn.core.api import op_api
from tfn.core.dispatch import apply
from tfn.core.tensor import convert_to_tensor
from tfn.dialects import ops
from tfn.dialects.ops_collective import REDUCTIONS, mpi_world


def _reduction(reduction):
    name = str(getattr(reduction, "value", reduction)).lower()
    if name not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduction!r}; expected one of {', '.join(REDUCTIONS)}")
    return name


@op_api(ops.all_reduce)
def all_reduce(value, reduction="sum", name=None):
    """`value` combined elementwise over every replica: "sum", "max", "min" or "prod"."""
    x = convert_to_tensor(value)
    mpi_world()  # MPI started (and installed) before a trace compiles calls of it
    return apply(ops.all_reduce, [x], {"reduction": _reduction(reduction)})


@op_api(ops.broadcast)
def broadcast(value, root=0, name=None):
    """Replica `root`'s `value` on every replica."""
    x = convert_to_tensor(value)
    comm = mpi_world()
    if not isinstance(root, int) or not 0 <= root < comm.Get_size():
        raise ValueError(f"root must be a replica in [0, {comm.Get_size()}), got {root!r}")
    return apply(ops.broadcast, [x], {"root": root})


@op_api(ops.all_gather)
def all_gather(value, name=None):
    """Every replica's `value` concatenated along axis 0, in replica order."""
    x = convert_to_tensor(value)
    return apply(ops.all_gather, [x], {"replicas": mpi_world().Get_size()})
