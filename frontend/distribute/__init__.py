"""`tfn.distribute`: data-parallel training over MPI (one replica per process; `mpiexec -n 4 python train.py`).

Needs the `distribute` extra (`pip install "tfn[distribute]"`: the `mpich` and `mpi4py` wheels).
"""
from tfn.distribute.strategy import (  # noqa: F401
    InputContext,
    MultiWorkerMirroredStrategy,
    ReduceOp,
    ReplicaContext,
    get_replica_context,
    get_strategy,
    has_strategy,
)
