"""`tfn.distribute.MultiWorkerMirroredStrategy`: synchronous data-parallel training, one replica per MPI process.

Every process runs the same program (`mpiexec -n 4 python train.py`). Variables created in `strategy.scope()` are
mirrored: each replica starts from replica 0's initial values (an MPI broadcast) and, since every replica applies
the same all-reduced gradients, they stay equal. Keras `fit` under the scope reads its shard of every global batch
and all-reduces the gradients inside the compiled train step (buckets.py); `strategy.run`, `strategy.reduce` and
`get_replica_context().all_reduce` are TF's API for custom loops.
"""
import contextlib
import enum

import numpy as np

from tfn import nest
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.dialects.ops_collective import mpi_world
from tfn.distribute import buckets, failure
from tfn.ops.collective_ops import all_gather, all_reduce
from tfn.ops.math_ops import cast
from tfn.ops.reduction_ops import reduce_sum
from tfn.runtime import shared_allreduce
from tfn.state import variables as variables_mod

_stack = []  # the strategies whose scope is entered, innermost last


class ReduceOp(enum.Enum):
    """How `reduce` and `all_reduce` combine the replicas' values."""

    SUM = "SUM"
    MEAN = "MEAN"


def _op(reduce_op):
    if isinstance(reduce_op, str):
        try:
            return ReduceOp[reduce_op.upper()]
        except KeyError:
            raise ValueError(f"unknown reduce_op {reduce_op!r}; expected ReduceOp.SUM or ReduceOp.MEAN") from None
    if not isinstance(reduce_op, ReduceOp):
        raise ValueError(f"unknown reduce_op {reduce_op!r}; expected ReduceOp.SUM or ReduceOp.MEAN")
    return reduce_op


class ReplicaContext:
    """The running replica's view (`tfn.distribute.get_replica_context()`)."""

    def __init__(self, strategy):
        self.strategy = strategy

    @property
    def num_replicas_in_sync(self):
        return self.strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self.strategy.rank

    def all_reduce(self, reduce_op, value, options=None):
        """`value` (a tensor or a nest of them) summed or averaged over the replicas, in few messages."""
        op = _op(reduce_op)
        flat = nest.flatten(value)
        out = buckets.all_reduce_tensors(flat, "sum", self.strategy.bucket_bytes)
        if op is ReduceOp.MEAN:
            out = [t / np.array(self.num_replicas_in_sync, t.dtype.np) for t in out]
        return nest.pack_sequence_as(value, out)

    def all_gather(self, value, axis=0, options=None):
        if axis != 0:
            raise ValueError("all_gather concatenates along axis 0 only")
        return all_gather(value)


class MultiWorkerMirroredStrategy:
    """One replica per process of an MPI job; the job's processes train one model in lockstep."""

    def __init__(self, cluster_resolver=None, communication_options=None, *, bucket_bytes=buckets.DEFAULT_BUCKET_BYTES,
                 collective_timeout=None):
        """`bucket_bytes`: the largest fused gradient message; `collective_timeout` (seconds, None: no watchdog):
        abort the job when a step waits longer than that for the other replicas."""
        self.comm = mpi_world()  # FailedPreconditionError saying how to install MPI when it is missing
        self.rank, self.num_replicas_in_sync = self.comm.Get_rank(), self.comm.Get_size()
        self.bucket_bytes = int(bucket_bytes)
        failure.install(self.comm)
        # every replica on this machine: gradients are summed through shared memory (runtime/shared_allreduce.py)
        self.shared_memory = shared_allreduce.enable(self.comm)
        self.watchdog = None if collective_timeout is None else failure.Watchdog(self.comm, collective_timeout)

    def __repr__(self):
        return f"<MultiWorkerMirroredStrategy replica {self.rank} of {self.num_replicas_in_sync}>"

    @property
    def extended(self):
        return self

    # ---- scope and mirrored variables ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self):
        """Variables created inside start from replica 0's values on every replica."""
        _stack.append(self)
        variables_mod.CREATION_HOOKS.append(self._broadcast_initial_value)
        try:
            yield self
        finally:
            variables_mod.CREATION_HOOKS.remove(self._broadcast_initial_value)
            _stack.remove(self)

    def _broadcast_initial_value(self, array):
        if self.num_replicas_in_sync == 1:
            return array
        out = np.array(array, order="C")
        if out.dtype == object:
            out = self.comm.bcast(out, root=0)
        else:
            self.comm.Bcast(out, root=0)
        return out

    # ---- running replicas ----------------------------------------------------------------------------------------
    def run(self, fn, args=(), kwargs=None):
        """fn(*args, **kwargs) on this replica (its result is this replica's value)."""
        with contextlib.ExitStack() as stack:
            if self not in _stack:
                stack.enter_context(self.scope())
            stack.enter_context(self.watching(getattr(fn, "__name__", "strategy.run")))
            _replica.append(ReplicaContext(self))
            try:
                return fn(*args, **(kwargs or {}))
            finally:
                _replica.pop()

    def watching(self, what):
        """A context in which the watchdog (collective_timeout) aborts the job when it lasts too long."""
        return self.watchdog.watching(what) if self.watchdog is not None else contextlib.nullcontext()

    def reduce(self, reduce_op, value, axis=None):
        """The replicas' `value` combined: summed or averaged over the replicas (axis None), or over the examples of
        the global batch along `axis` (each replica's slice of it summed first)."""
        op = _op(reduce_op)

        def one(v):
            v = convert_to_tensor(v)
            if axis is None:
                total = all_reduce(v, "sum")
                return total / np.array(self.num_replicas_in_sync, total.dtype.np) if op is ReduceOp.MEAN else total
            total = all_reduce(reduce_sum(v, axis=axis), "sum")
            if op is ReduceOp.SUM:
                return total
            count = all_reduce(np.array(v.shape[axis], np.int64), "sum")
            return total / cast(count, total.dtype)
        return nest.map_structure(one, value)

    # ---- data ----------------------------------------------------------------------------------------------------
    def shard_rows(self, n):
        """This replica's rows [start, stop) of a global batch of n rows (shards differ by at most one row)."""
        if n < self.num_replicas_in_sync:
            raise ValueError(f"a global batch of {n} rows cannot be split over {self.num_replicas_in_sync} replicas; "
                             f"use a batch size that leaves at least one row per replica in every batch")
        bounds = [n * i // self.num_replicas_in_sync for i in range(self.num_replicas_in_sync + 1)]
        return bounds[self.rank], bounds[self.rank + 1]

    def shard(self, element):
        """This replica's rows of every array of a global batch (a nest of arrays or tensors)."""
        leaves = nest.flatten(element)
        if not leaves:
            return element
        start, stop = self.shard_rows(len(np.asarray(leaves[0])))
        return nest.pack_sequence_as(element, [_rows(v, start, stop) for v in leaves])

    def experimental_distribute_dataset(self, dataset, options=None):
        """An iterable of this replica's shard of each global batch of `dataset`."""
        return DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext(self))

    def broadcast_order(self, order):
        """Replica 0's permutation (shuffling must pick the same global batches everywhere)."""
        order = np.ascontiguousarray(order, np.int64)
        if self.num_replicas_in_sync > 1:
            self.comm.Bcast(order, root=0)
        return order

    # ---- gradients -----------------------------------------------------------------------------------------------
    def reduce_gradients(self, grads, loss, rows):
        """(gradients, loss) of the global batch from this replica's: each replica's are weighted by its rows, and
        the sums (gradients, loss, rows) travel in the same buckets, so shards of unequal size average exactly."""
        weight = cast(rows, "float32")
        scaled = [None if g is None else g * cast(weight, g.dtype) for g in grads]
        return self._sum_weighted(scaled, loss, weight)

    def weighted_loss(self, loss, rows):
        """This replica's loss (a mean over its `rows`) times `rows`: differentiated, it gives the gradients that
        `reduce_weighted_gradients` takes, weighted by the row count at no cost (the factor is applied to the
        scalar seed of the backward pass, not to every gradient as reduce_gradients must)."""
        return loss * cast(cast(rows, "float32"), loss.dtype)

    def reduce_weighted_gradients(self, grads, loss, rows):
        """reduce_gradients for `grads` of weighted_loss(loss, rows) (already weighted by this replica's rows)."""
        return self._sum_weighted(grads, loss, cast(rows, "float32"))

    def _sum_weighted(self, scaled, loss, weight):
        extra = [loss * cast(weight, loss.dtype), weight]
        reduced = buckets.all_reduce_tensors(extra + list(scaled), "sum", self.bucket_bytes)
        total = reduced[1]
        out = [None if g is None else g / cast(total, g.dtype) for g in reduced[2:]]
        return out, reduced[0] / cast(total, reduced[0].dtype), total


def _rows(v, start, stop):
    if isinstance(v, TensorBase):
        return v[start:stop]
    return np.asarray(v)[start:stop]


class InputContext:
    def __init__(self, strategy):
        self.num_input_pipelines = strategy.num_replicas_in_sync
        self.input_pipeline_id = strategy.rank
        self.num_replicas_in_sync = strategy.num_replicas_in_sync


class DistributedDataset:
    """Each element: this replica's shard of the dataset's global batch (`experimental_distribute_dataset`)."""

    def __init__(self, strategy, dataset):
        self.strategy, self.dataset = strategy, dataset

    def __iter__(self):
        for element in self.dataset:
            yield self.strategy.shard(element)


_replica = []  # ReplicaContexts of strategy.run calls in progress


def get_strategy():
    """The strategy whose scope is entered (None outside any: TF's default strategy is one replica)."""
    return _stack[-1] if _stack else None


def has_strategy():
    return bool(_stack)


def get_replica_context():
    """The replica context of the running `strategy.run` (or of the entered scope's strategy)."""
    if _replica:
        return _replica[-1]
    if _stack:
        return ReplicaContext(_stack[-1])
    return None
