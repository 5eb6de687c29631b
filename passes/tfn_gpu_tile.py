"""tfn-gpu-tile: linalg on tensors tiled for the GPU: elementwise ops into block and thread scf.foralls.

The first GPU pass (pipelines `tfn-gpu-mapped`, `tfn-gpu-nvvm`, `tfn-gpu-emulation`; see passes/gpu.py). Every
all-parallel linalg op (generic, fill, transpose, broadcast, copy, map) of rank 1 to 3 (an op with identity maps is
flattened to rank 1 first, `transform.structured.flatten_elementwise`, unless several of its dims are dynamic) is
tiled with the transform dialect: `tile_using_forall` by `block-size` elements along its innermost loop and by 1
along the others, mapped to `#gpu.block<x>` (innermost), `<y>`, `<z>`; then each block tile is split among
`block-size` threads (`num_threads`, mapped to `#gpu.thread<x>`), one element per thread. A shape known only at run
time is split into `dynamic-blocks` blocks instead (the grid must be static), each a contiguous share that its
threads split again. After bufferization tfn-gpu-map turns the foralls into a `gpu.launch` of block-size threads per
block; the last block's threads past the end get an empty slice (a loop of 0 trips: the bounds guard).

linalg.reduce (or a linalg.generic of the same form: reduction_dims), linalg.matmul are tagged `tfn.gpu_kernel`
("reduce", "matmul") and left whole: tfn-gpu-map
writes their kernels (shared memory, barriers, warp shuffles) once their operands are buffers. Any other op that
computes on tensors has no GPU kernel yet: the pass fails naming it at its location.
"""
from mlir import ir

from tfn.passes.options import Option, positive
from tfn.passes.registry import PassFailure, register
from tfn.passes.target import gpu_target
from tfn.passes.tfn_vectorize_kernels import apply_schedule, match_tagged, named_sequence
from tfn.passes.walk import collect

BLOCK_SIZE = Option("block-size", "threads per block of the elementwise kernels (default: the GPU target's)",
                    lambda t: gpu_target().block_size, positive)

PARALLEL_OPS = {"linalg.generic", "linalg.fill", "linalg.transpose", "linalg.broadcast", "linalg.copy", "linalg.map"}
KERNEL_OPS = {"linalg.reduce": "reduce", "linalg.matmul": "matmul"}
# ops on tensors that compute nothing on the device (shapes, views, constants) and stay as they are
VIEW_OPS = {"tensor.empty", "tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice", "tensor.cast",
            "arith.constant", "func.return", "func.func", "builtin.module", "linalg.yield", "linalg.index"}
DYNAMIC_BLOCKS = Option("dynamic-blocks", "blocks of an elementwise kernel whose size is only known at run time "
                        "(default: 4 per multiprocessor of the GPU target)",
                        lambda t: 4 * gpu_target().multiprocessors, positive)
_ANY = "!transform.any_op"
_BLOCKS = ("#gpu.block<x>", "#gpu.block<y>", "#gpu.block<z>")


def _iterators(op):
    if "iterator_types" not in op.attributes:
        return ["parallel"] * _rank(op)  # named elementwise ops: fill, transpose, broadcast, copy, map
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _rank(op):
    outs = [v for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
    return ir.RankedTensorType(outs[-1].type).rank if outs else 0


def _identity_maps(op):
    if "indexing_maps" not in op.attributes:
        return op.name in ("linalg.fill", "linalg.copy", "linalg.map")
    return all(ir.AffineMapAttr(m).value == ir.AffineMap.get_identity(_rank(op))
               for m in ir.ArrayAttr(op.attributes["indexing_maps"]))


def reduction_dims(op):
    """The reduced loops of a linalg.generic that is a reduction tfn-gpu-map has a kernel for (one input read in
    loop order, one output indexed by the other loops in order, a body of one op combining the two), else None."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    iterators = _iterators(op)
    dims = [d for d, kind in enumerate(iterators) if kind == "reduction"]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    kept = [d for d in range(len(iterators)) if d not in dims]
    if not dims or maps[0] != ir.AffineMap.get_identity(len(iterators)):
        return None
    if [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else -1 for e in maps[1].results] != kept:
        return None
    body = list(op.regions[0].blocks[0].operations)
    args = list(op.regions[0].blocks[0].arguments)
    if len(body) != 2 or len(body[0].operands) != 2 or set(body[0].operands) != set(args):
        return None
    return dims


def narrow_reduction(op):
    """Whether op is a reduction of elements narrower than 32 bits (bools, i8, i16, f16): tfn-gpu-map's reduction
    kernel moves values between threads with warp shuffles, which take 32- and 64-bit values, so these are 'loop'
    kernels (tfn-gpu-generalize makes such a linalg.reduce a generic)."""
    if op.name not in ("linalg.reduce", "linalg.generic") or not op.results:
        return False
    elem = ir.RankedTensorType(op.results[0].type).element_type
    width = getattr(elem, "width", 32) if not isinstance(elem, ir.IndexType) else 64
    return width < 32


def classify(op):
    """'parallel', 'reduce', 'matmul', 'scalar' (rank 0, or a generic with reduction loops only: one thread), 'loop'
    (a linalg.generic with reduction loops of another form: one thread per point of its parallel loops) or None (no
    GPU kernel for it)."""
    if op.name in KERNEL_OPS and not narrow_reduction(op):
        return KERNEL_OPS[op.name]
    if reduction_dims(op) is not None and not narrow_reduction(op):
        return "reduce"
    if op.name not in PARALLEL_OPS:
        return None
    iterators = _iterators(op)
    if not op.results:  # a generic writing no tensor: a check of its inputs (run-time errors), one thread a point
        if op.name != "linalg.generic":
            return None
        return "loop" if "parallel" in iterators else "scalar"
    if all(i == "parallel" for i in iterators):
        return "scalar" if _rank(op) == 0 else "parallel"
    if op.name == "linalg.generic":
        # with no parallel loop (a full reduction of another form), one thread computes it
        return "loop" if "parallel" in iterators else "scalar"
    return None


def _loop_dims(op):
    """The loops a 'loop' kernel maps (outermost first): the innermost three parallel ones (the grid has three
    dims), the others left to each thread with the reduction loops."""
    return [d for d, kind in enumerate(_iterators(op)) if kind == "parallel"][-3:]


def _loop_sizes(op):
    """The static extents of op's loops (None where known only at run time), from the shapes of its operands."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    sizes = [None] * len(_iterators(op))
    for value, m in zip(op.operands, maps):
        shape = ir.RankedTensorType(value.type).shape if isinstance(value.type, ir.RankedTensorType) else []
        for e, s in zip(m.results, shape):
            if isinstance(e, ir.AffineDimExpr) and s != ir.ShapedType.get_dynamic_size():
                sizes[ir.AffineDimExpr(e).position] = s
    return sizes


def loop_schedule(i, op, block_size, dynamic_blocks, warp_size):
    """The transform lines of a 'loop' kernel (op tagged `tfn.gpu_id = i`): a block forall over _loop_dims (the
    innermost cut into tiles of as many points as the block has threads, the others one point a block), then a
    thread forall giving each thread one point of the tile. The block has `block-size` threads, fewer when the
    innermost mapped loop is shorter (down to a warp)."""
    n = len(_iterators(op))
    dims = _loop_dims(op)
    inner = dims[-1]
    extent = _loop_sizes(op)[inner]
    dynamic = any(_loop_sizes(op)[d] is None for d in dims)
    threads = block_size if extent is None else min(block_size, max(warp_size, 1 << (extent - 1).bit_length()))
    mapping = ", ".join(reversed(_BLOCKS[:len(dims)]))
    lines = [match_tagged(f"%op{i}", "tfn.gpu_id", i)]
    if dynamic:  # the grid must be static: a fixed number of blocks, each a contiguous share
        counts = [dynamic_blocks if d == inner else 1 if d in dims else 0 for d in range(n)]
        lines.append(f"%t{i}, %b{i} = transform.structured.tile_using_forall %op{i} num_threads "
                     f"[{', '.join(map(str, counts))}] (mapping = [{mapping}]) : ({_ANY}) -> ({_ANY}, {_ANY})")
    else:
        sizes = [threads if d == inner else 1 if d in dims else 0 for d in range(n)]
        lines.append(f"%t{i}, %b{i} = transform.structured.tile_using_forall %op{i} tile_sizes "
                     f"[{', '.join(map(str, sizes))}] (mapping = [{mapping}]) : ({_ANY}) -> ({_ANY}, {_ANY})")
    split = [threads if d == inner else 0 for d in range(n)]
    lines.append(f"%u{i}, %h{i} = transform.structured.tile_using_forall %t{i} num_threads "
                 f"[{', '.join(map(str, split))}] (mapping = [#gpu.thread<x>]) : ({_ANY}) -> ({_ANY}, {_ANY})")
    return lines


def schedule(ids_and_ranks, block_size, dynamic_blocks=None):
    """The transform lines tiling op `tfn.gpu_id = i` (rank r, flatten: whether to flatten it first, dynamic: whether
    its shape is only known at run time)."""
    lines = []
    for i, rank, flatten, dynamic in ids_and_ranks:
        lines.append(match_tagged(f"%op{i}", "tfn.gpu_id", i))
        if flatten:
            lines.append(f"%op{i}f = transform.structured.flatten_elementwise %op{i} : ({_ANY}) -> {_ANY}")
            rank = 1
            handle = f"%op{i}f"
        else:
            handle = f"%op{i}"
        mapping = ", ".join(reversed(_BLOCKS[:rank]))
        if dynamic:  # the grid must be static: a fixed number of blocks, each a contiguous share
            counts = [1] * (rank - 1) + [dynamic_blocks]
            lines.append(f"%t{i}, %b{i} = transform.structured.tile_using_forall {handle} num_threads "
                         f"[{', '.join(map(str, counts))}] (mapping = [{mapping}]) : ({_ANY}) -> ({_ANY}, {_ANY})")
        else:
            sizes = [1] * (rank - 1) + [block_size]
            lines.append(f"%t{i}, %b{i} = transform.structured.tile_using_forall {handle} tile_sizes "
                         f"[{', '.join(map(str, sizes))}] (mapping = [{mapping}]) : ({_ANY}) -> ({_ANY}, {_ANY})")
        threads = [0] * (rank - 1) + [block_size]
        lines.append(f"%u{i}, %h{i} = transform.structured.tile_using_forall %t{i} num_threads "
                     f"[{', '.join(map(str, threads))}] (mapping = [#gpu.thread<x>]) : "
                     f"({_ANY}) -> ({_ANY}, {_ANY})")
    return lines


@register("tfn-gpu-tile", "Tile elementwise linalg ops on tensors into block/thread scf.foralls; tag reductions "
          "and matmuls for tfn-gpu-map", options=[BLOCK_SIZE, DYNAMIC_BLOCKS])
def gpu_tile(module_op, block_size, dynamic_blocks):
    bad = []

    def unsupported(op):
        if op.name in VIEW_OPS or op.name.startswith(("arith.", "math.")) and _inside_linalg(op):
            return False
        if op.name.startswith("linalg.") and classify(op) is None:
            return True
        computes = any(isinstance(v.type, ir.RankedTensorType) for v in op.results) and op.name not in VIEW_OPS
        return computes and classify(op) is None and not _inside_linalg(op)

    for op in collect(module_op, unsupported):
        op.location.emit_error(f"tfn-gpu-tile: {op.name} has no GPU kernel (the GPU path maps elementwise ops, "
                               "linalg.reduce, linalg.matmul and linalg.generic)")
        bad.append(op)
    if bad:
        raise PassFailure()
    work, loops = [], []
    for op in collect(module_op, lambda o: classify(o) is not None and not _inside_linalg(o)):
        kind = classify(op)
        if kind == "loop":
            loops.append(op)
        elif kind in ("reduce", "matmul"):
            op.attributes["tfn.gpu_kernel"] = ir.StringAttr.get(kind)
        elif kind == "scalar":
            op.attributes["tfn.gpu_kernel"] = ir.StringAttr.get("scalar")
        else:
            rank = _rank(op)
            shape = ir.RankedTensorType(op.results[0].type).shape
            dynamic_dims = sum(d == ir.ShapedType.get_dynamic_size() for d in shape)
            # a flattened op is expanded back: memref.expand_shape allows one dynamic size per group
            flatten = rank > 1 and _identity_maps(op) and dynamic_dims <= 1
            if rank > 3 and not flatten:
                if op.name != "linalg.generic":
                    op.location.emit_error(f"tfn-gpu-tile: {op.name} of rank {rank} with a broadcast, a transpose or "
                                           "several dynamic dimensions has no GPU mapping (at most 3 map to blocks)")
                    raise PassFailure()
                loops.append(op)  # its innermost three loops map to the grid, each thread loops over the others
                continue
            i = len(work)
            op.attributes["tfn.gpu_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
            dynamic = dynamic_dims > 0
            work.append((i, rank, flatten, dynamic))
    lines = schedule(work, block_size, dynamic_blocks)
    for i, op in enumerate(loops, start=len(work)):
        op.attributes["tfn.gpu_id"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        lines += loop_schedule(i, op, block_size, dynamic_blocks, gpu_target().warp_size)
    if lines:
        apply_schedule(module_op, named_sequence(lines))
    for op in collect(module_op, lambda o: "tfn.gpu_id" in o.attributes):
        del op.attributes["tfn.gpu_id"]


def _inside_linalg(op):
    parent = op.parent
    while parent is not None:
        if parent.name.startswith("linalg."):
            return True
        parent = parent.parent
    return False
