"""Gradient buckets: the tensors of a step all-reduced in few messages.

Each MPI message costs a latency (microseconds on one machine, tens of them across a network) on top of its bytes;
a model's many small tensors (biases, norms) would pay it once each. Small tensors are flattened and concatenated,
in order, into buckets of at most `bucket_bytes`, one all-reduce per bucket and dtype, and split back. A large
tensor (ALONE_BYTES or more) is a message of its own instead: copying it into a bucket would cost more than the
latency it saves, and alone it is reduced in place in its own buffer (passes/lowering/collective.py). Traced, the
concatenation, the collective and the slices are ops of the compiled step; eagerly, the same ops run one by one.
"""
import numpy as np

from tfn.core.tensor import convert_to_tensor
from tfn.ops.array_ops import concat, reshape
from tfn.ops.collective_ops import all_reduce

DEFAULT_BUCKET_BYTES = 4 << 20  # docs/scaling.md: past ~1 MB a message runs at the link's bandwidth
# A tensor this large travels alone: a copy into a bucket (~0.1 ms per MB) costs more than a message's latency
# (docs/scaling.md: 2-25 us per step on a network, a few us through shared memory).
ALONE_BYTES = 1 << 20


def plan(shapes_and_dtypes, bucket_bytes=DEFAULT_BUCKET_BYTES, alone_bytes=ALONE_BYTES):
    """Buckets as lists of tensor positions: a tensor of at least min(alone_bytes, bucket_bytes) bytes alone, the
    others in order, consecutive ones of one dtype together up to bucket_bytes per bucket."""
    alone_bytes = min(alone_bytes, bucket_bytes)
    buckets, current, size, dtype = [], [], 0, None
    for i, (shape, dt) in enumerate(shapes_and_dtypes):
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
        if nbytes >= alone_bytes:
            buckets.append([i])
            continue
        if current and (dt != dtype or size + nbytes > bucket_bytes):
            buckets.append(current)
            current, size = [], 0
        current.append(i)
        size += nbytes
        dtype = dt
    if current:
        buckets.append(current)
    return buckets


def all_reduce_tensors(values, reduction="sum", bucket_bytes=DEFAULT_BUCKET_BYTES):
    """Each of `values` (tensors; None kept as None) reduced across the replicas, in few messages."""
    tensors = [None if v is None else convert_to_tensor(v) for v in values]
    present = [i for i, t in enumerate(tensors) if t is not None]
    out = list(tensors)
    specs = [(tuple(tensors[i].shape), tensors[i].dtype.np) for i in present]
    for bucket in plan(specs, bucket_bytes):
        members = [present[j] for j in bucket]
        if len(members) == 1:  # no bucket to split: the tensor itself is the message
            out[members[0]] = all_reduce(tensors[members[0]], reduction)
            continue
        flat = [reshape(tensors[i], [-1]) for i in members]
        reduced = all_reduce(concat(flat, 0), reduction)
        start = 0
        for i in members:
            n = int(np.prod(tuple(tensors[i].shape), dtype=np.int64))
            out[i] = reshape(reduced[start:start + n], tuple(tensors[i].shape))
            start += n
    return out
