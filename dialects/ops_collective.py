"""Collective ops across the processes of an MPI job (tfn.distribute): all_reduce, broadcast, all_gather.

Every process (replica) of the job runs the same program; a collective op combines one tensor from each. Compiled
code calls MPI (passes/lowering/collective.py lowers them to MLIR's `mpi` dialect); eagerly the kernels call it
through mpi4py. Both first agree on a signature of the operand (dtype and shape, SIGNATURE below), so replicas that
run different programs get an error naming the op instead of a hang or a wrong sum.

In a process that is not part of an MPI job (MPI's singleton start), every collective is the identity.
"""
import numpy as np

from tfn.dialects.abi import dtype_code
from tfn.dialects.errors import FailedPreconditionError, InvalidArgumentError
from tfn.dialects.optable import define

REDUCTIONS = ("sum", "max", "min", "prod")
# The collective ops: effects (every replica takes part), never folded or removed as pure computations.
COLLECTIVES = ("all_reduce", "broadcast", "all_gather")
INSTALL_HINT = 'pip install "tfn[distribute]"  (or: pip install mpich mpi4py)'

# The signature of an operand: ((dtype code * P + d0 + 1) * P + d1 + 1) ... wrapped to 62 bits, the same
# arithmetic in compiled code (lowering/collective.py); replicas compare max and min of it in one message.
SIGNATURE_PRIME = 1000003
SIGNATURE_MASK = (1 << 62) - 1


def signature(dtype, shape):
    sig = dtype_code(dtype)
    for d in shape:
        sig = (sig * SIGNATURE_PRIME + int(d) + 1) & ((1 << 64) - 1)
    return sig & SIGNATURE_MASK


def mpi_world():
    """mpi4py's COMM_WORLD (MPI is started on first use); FailedPreconditionError saying how to install it."""
    try:
        from mpi4py import MPI  # optional dependency: the `distribute` extra
    except ImportError as e:
        raise FailedPreconditionError(f"collective ops need MPI and mpi4py, which are not installed ({e}); "
                                      f"install them with: {INSTALL_HINT}") from None
    return MPI.COMM_WORLD


def describe_mismatch(op_name, dtype_name, shape, rank):
    dims = ",".join(str(d) for d in shape)
    return (f"{op_name}: the replicas disagree on the dtype or shape of the tensor (replica {rank} has "
            f"{dtype_name}[{dims}]); every replica must run the same program on tensors of the same shape")


def _check_signature(comm, op_name, arr):
    from mpi4py import MPI  # optional dependency: the `distribute` extra (mpi_world imported it already)

    sig = signature(arr.dtype.name if arr.dtype != np.bool_ else "bool", arr.shape)
    mine = np.array([sig, -sig], dtype=np.int64)
    agreed = np.empty_like(mine)
    comm.Allreduce(mine, agreed, op=MPI.MAX)
    if agreed[0] != sig or -agreed[1] != sig:
        raise InvalidArgumentError(describe_mismatch(op_name, str(arr.dtype), arr.shape, comm.Get_rank()))


def _all_reduce_kernel(arrays, attrs):
    from mpi4py import MPI  # optional dependency: the `distribute` extra

    comm = mpi_world()
    x = np.ascontiguousarray(arrays[0])
    _check_signature(comm, "all_reduce", x)
    out = np.empty_like(x)
    comm.Allreduce(x, out, op={"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}[attrs["reduction"]])
    return out


def _broadcast_kernel(arrays, attrs):
    comm = mpi_world()
    x = np.array(arrays[0], order="C")
    _check_signature(comm, "broadcast", x)
    comm.Bcast(x, root=attrs["root"])
    return x


def _all_gather_kernel(arrays, attrs):
    comm = mpi_world()
    x = np.ascontiguousarray(arrays[0])
    _check_signature(comm, "all_gather", x)
    out = np.empty((comm.Get_size() * x.shape[0],) + x.shape[1:], dtype=x.dtype)
    comm.Allgather(x, out)
    return out


def _same_infer(types, attrs):
    t = types[0]
    if t.dtype.is_string:
        raise ValueError("cannot exchange string tensors between replicas")
    if attrs.get("reduction", "sum") not in REDUCTIONS:
        raise ValueError(f"unknown reduction {attrs['reduction']!r}; expected one of {', '.join(REDUCTIONS)}")
    if "reduction" in attrs and t.dtype.is_bool:
        raise ValueError("cannot reduce bool tensors across replicas (cast them to a number first)")
    if attrs.get("root", 0) < 0:
        raise ValueError(f"root replica {attrs['root']} is negative")
    return t


def _gather_infer(types, attrs):
    t = _same_infer(types, {})
    if t.rank == 0:
        raise ValueError("cannot gather scalars: all_gather concatenates along axis 0")
    if attrs["replicas"] < 1:
        raise ValueError(f"replicas must be at least 1, got {attrs['replicas']}")
    n = t.shape[0]
    return type(t)(((None if n is None else n * attrs["replicas"]),) + t.shape[1:], t.dtype)


define("all_reduce", ["x"], _same_infer, _all_reduce_kernel, {"reduction": "str"},
       tf_name="CollectiveReduceV2", summary="combine a tensor of every replica elementwise (sum, max, min, prod)",
       differentiable=False)
define("broadcast", ["x"], _same_infer, _broadcast_kernel, {"root": "i64"},
       tf_name="CollectiveBcastRecvV2", summary="every replica gets the tensor of replica `root`", differentiable=False)
# `replicas` is the job's size, fixed when the function is traced: the result's static shape needs it.
define("all_gather", ["x"], _gather_infer, _all_gather_kernel, {"replicas": "i64"},
       tf_name="CollectiveGatherV2", summary="the tensors of all replicas concatenated along axis 0 in rank order",
       differentiable=False)
