"""Gradient buckets: the tensors of a step all-reduced in few messages.

Each MPI message costs a latency (microseconds on one machine, tens of them across a network) on top of its bytes;
a model's many small tensors (biases, norms) would pay it once each. Tensors are flattened and concatenated, in
order, into buckets of at most `bucket_bytes` (a tensor larger than that is a bucket of its own), one all-reduce
per bucket and dtype, and split back. Traced, the concatenation, the collective and the slices are ops of the
compiled step; eagerly, the same ops run one by one.
"""
import numpy as np

from tfn.core.tensor import convert_to_tensor
from tfn.ops.array_ops import concat, reshape
from tfn.ops.collective_ops import all_reduce

DEFAULT_BUCKET_BYTES = 4 << 20  # docs/scaling.md: past ~1 MB a message runs at the link's bandwidth


def plan(shapes_and_dtypes, bucket_bytes=DEFAULT_BUCKET_BYTES):
    """Buckets as lists of tensor positions: consecutive tensors of one dtype up to bucket_bytes each."""
    buckets, current, size, dtype = [], [], 0, None
    for i, (shape, dt) in enumerate(shapes_and_dtypes):
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
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
        flat = [reshape(tensors[i], [-1]) for i in members]
        reduced = all_reduce(flat[0] if len(flat) == 1 else concat(flat, 0), reduction)
        start = 0
        for i in members:
            n = int(np.prod(tuple(tensors[i].shape), dtype=np.int64))
            out[i] = reshape(reduced[start:start + n], tuple(tensors[i].shape))
            start += n
    return out
