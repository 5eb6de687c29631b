"""tfn-parallelize: split each big static linalg op on tensors into parallel tasks of an scf.forall.

A linalg.generic, reduce, transpose or broadcast whose iteration space holds at least MIN_WORK points (static loop
ranges) is tiled with `transform.structured.tile_using_forall` into `tasks` parts along its first parallel loop of
extent >= tasks: up to `workers` x `tasks-per-worker` tasks (options; defaults: the cores available and 4,
passes/target.py), fewer when a task would hold less than MIN_TASK_WORK points, never fewer than the workers,
except that an extent the count does not divide is cut into as many equal tasks as it can be from half the workers
up (static sizes: see _even). More tasks than threads balance the load: a thread slowed by another process takes
fewer of them. After bufferization
the forall becomes
scf.parallel (`scf-forall-to-parallel`) and tasks of the async runtime run its iterations on the worker threads
(`async-parallel-for`, `async-to-async-runtime`, `convert-async-to-llvm`, passes/tfn_async_parallel.py; the runtime
is tfn's own, runtime/_async_runtime.c). Small ops, dynamic shapes, ops already inside an scf.forall and every op
when there is one worker are left alone, so a module with nothing big is not touched at all (no transform module is
parsed).
Matmul and convolution contractions are split by tfn-vectorize-kernels instead (whole cache tiles per worker).
"""
from mlir import ir

from tfn.passes.options import TASKS_PER_WORKER, WORKERS
from tfn.passes.registry import register
from tfn.passes.tfn_vectorize_kernels import apply_schedule, match_tagged, named_sequence
from tfn.passes.walk import collect

# Iteration points below which handing half an op to another thread costs more than it saves. A hand-off is not
# 5-10 us where it matters: waking an idle worker took 20-50 us and more on the 2-core VM the benchmarks run on (a
# halted virtual CPU), so a 2**17-point generic ran 33 us split against 25 us on one thread, 2**19 points about even
# (98 vs 93 us) with the other core busy, 2**21 points 250 vs 378 us. The digits CNN's train step (43 steps an epoch)
# had six such splits of 2**16-point ops, each waiting on a wake-up.
MIN_WORK = 1 << 19
MIN_TASK_WORK = 1 << 18  # the fewest iteration points per task when an op is cut into more tasks than workers
SPLIT_OPS = ("linalg.generic", "linalg.reduce", "linalg.transpose", "linalg.broadcast")
_ANY = "!transform.any_op"


def _ancestor_names(op):
    names, parent = [], op.parent
    while parent is not None:
        names.append(parent.name)
        parent = parent.parent
    return names


def _static_shape(value):
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return None
    return list(ir.RankedTensorType(t).shape)


def _generic_space(op):
    """(loop extents, parallel flags) of a linalg.generic, or None when a loop extent is not static."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    ranges = [None] * maps[0].n_dims
    for value, amap in zip(op.operands, maps):
        shape = _static_shape(value)
        if shape is None:
            return None
        for expr, size in zip(amap.results, shape):
            if isinstance(expr, ir.AffineDimExpr):
                ranges[expr.position] = size
    if None in ranges:
        return None
    return ranges, ["parallel" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def loop_space(op):
    """(loop extents, parallel flags) of a linalg generic/reduce/transpose/broadcast on static tensors, or None."""
    if not op.results:
        return None  # on memrefs: not ours to tile
    if op.name == "linalg.generic":
        return _generic_space(op)
    if op.name == "linalg.reduce":
        shape = _static_shape(op.operands[0])
        reduced = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        return None if shape is None else (shape, [d not in reduced for d in range(len(shape))])
    shape = _static_shape(op.operands[-1])  # transpose / broadcast: the loops are the init's dims
    return None if shape is None else (shape, [True] * len(shape))


def task_count(work, workers, tasks_per_worker):
    """How many tasks an op of `work` iteration points is cut into: workers x tasks_per_worker at most, none holding
    less than MIN_TASK_WORK points unless that leaves fewer tasks than workers, and a multiple of the workers (equal
    tasks: 3 on 2 threads take as long as 4, while 2 take half as long)."""
    tasks = max(workers, min(workers * tasks_per_worker, work // MIN_TASK_WORK))
    return tasks - tasks % workers


def split_dim(op, workers, tasks_per_worker=1):
    """(loop, tasks): the loop to cut into `tasks` parallel parts for a big linalg op on tensors, or None to leave op
    alone. The first parallel loop of extent >= the task count is cut; when none is that long, the first of extent
    >= workers is cut into `workers` parts."""
    if "scf.forall" in _ancestor_names(op):
        return None
    space = loop_space(op)
    if space is None:
        return None
    work = 1
    for r in space[0]:
        work *= r
    if work < MIN_WORK:
        return None
    for n in (task_count(work, workers, tasks_per_worker), workers):
        d = next((d for d, (r, par) in enumerate(zip(*space)) if par and r >= n), None)
        if d is not None:
            return d, _even(space[0][d], n, workers)
    return None


def _even(extent, tasks, workers):
    """`tasks`, or when it does not divide `extent` the largest count from half the workers (at least 2) to `tasks`
    that does: equal tasks keep static sizes, which the vectorising passes need (on 16 workers a depthwise
    convolution's 28 rows were cut into 16 uneven tasks, and tfn-vectorize-depthwise left them to LLVM's scalar
    loops; 14 tasks of 2 rows leave two workers idle instead)."""
    if extent % tasks == 0:
        return tasks
    return next((q for q in range(tasks - 1, max(2, workers // 2) - 1, -1) if extent % q == 0), tasks)


def schedule_text(splits):
    """A transform module tiling op `tfn.parallel_id = i` into n tasks along dim d, per (i, d, n, n_loops)."""
    lines = []
    for i, d, tasks, n in splits:
        threads = ", ".join(str(tasks if k == d else 0) for k in range(n))
        lines += [match_tagged(f"%op{i}", "tfn.parallel_id", i),
                  f"%t{i}, %f{i} = transform.structured.tile_using_forall %op{i} num_threads [{threads}] "
                  f": ({_ANY}) -> ({_ANY}, {_ANY})"]
    return named_sequence(lines)


@register("tfn-parallelize", "Tile big static linalg generic/reduce/transpose/broadcast ops on tensors into an "
          "scf.forall of parallel tasks, several per worker thread (run by the async runtime after lowering)",
          options=[WORKERS, TASKS_PER_WORKER])
def parallelize(module_op, workers, tasks_per_worker):
    if workers < 2:
        return
    splits = []
    for op in collect(module_op, lambda op: op.name in SPLIT_OPS):
        found = split_dim(op, workers, tasks_per_worker)
        if found is None:
            continue
        i = len(splits)
        op.attributes["tfn.parallel_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        splits.append((i, *found, len(loop_space(op)[0])))
    if not splits:
        return
    apply_schedule(module_op, schedule_text(splits))
    for op in collect(module_op, lambda op: "tfn.parallel_id" in op.attributes):
        del op.attributes["tfn.parallel_id"]
