"""tfn-outline-micro-kernels: each register tile of tfn-vectorize-kernels's contractions as a call of one function
per kernel shape.

After bufferization a register tile is three ops: the read of its MR x NR accumulators, the k loop carrying them
(transfer reads of A and B, vector.contract) and the write back; with an epilogue (tfn-pack-matmul), the
accumulators start as zero vectors and the epilogue's vector ops (reads of its other inputs, elementwise math) come
between the loop and the write. A training step holds several copies that differ
only in their memrefs' shapes and strides and in their indices (the MLP 784-256-256-10 step: 8 copies, ~20 % of its
LLVM module), and every later pass (tfn-lower-vector-ops, convert-vector-to-llvm, ...) and LLVM's code generation
would process each copy. So each tile becomes a call of a private function holding those three ops, taking as
arguments the memrefs (cast to fully dynamic sizes, strides and offset, the unit innermost stride kept, so that
the vector loads stay contiguous) and the index values the ops use; scalar and vector constants are copied into it.
Tiles whose functions print the same (the same vector shapes, maps and memref ranks) call one function.

The functions are marked `inlinehint` with internal linkage: LLVM's O3 build inlines them
(runtime/llvm_codegen.py makes inlinehint functions alwaysinline at O3), so the optimised code is what it was
without the pass, while O0 builds, whose pipeline inlines only alwaysinline functions, generate each once. The
results do not change: each tile runs the same ops in the same order (the same k order for every element).
"""
from mlir import ir
from mlir.dialects import func, memref

from tfn.passes.registry import register
from tfn.passes.walk import collect, contains

ATTR = "tfn.micro_kernel"  # marks the functions made here (their bodies are not outlined again)
PREFIX = "__tfn_micro_kernel_"
_CONSTANTS = ("arith.constant", "ub.poison")


def _op(value_owner):
    return getattr(value_owner, "operation", value_owner)


# ops an epilogue (tfn-pack-matmul's fused_epilogue) may hold between a tile's k loop and its write: reads of the
# other inputs, index arithmetic and elementwise vector math (no write, no call)
_EPILOGUE_DIALECTS = ("arith.", "math.", "affine.apply")
_EPILOGUE_VECTOR_OPS = ("vector.transfer_read", "vector.broadcast", "vector.shape_cast", "vector.extract",
                        "vector.splat", "vector.fma")


def _epilogue_op(op):
    return op.name.startswith(_EPILOGUE_DIALECTS) or op.name in _EPILOGUE_VECTOR_OPS


def _tile(loop):
    """The ops of one register tile when `loop` is its k loop (an scf.for carrying one vector, with a
    vector.contract inside), else None: its initial value read by the op just before it (or a constant: an
    epilogue's accumulators start as zeros), then the loop, then (an epilogue) side-effect-free vector and scalar ops
    computing on its result, then the write of the result; every value these ops define is used only among them."""
    if len(loop.results) != 1 or not isinstance(loop.results[0].type, ir.VectorType):
        return None
    ops = [_op(o) for o in loop.block.operations]
    i = ops.index(loop)
    init = _op(loop.operands[3].owner)
    if isinstance(init, ir.Operation) and init.name == "vector.transfer_read" and i and ops[i - 1] == init:
        start = i - 1
    elif isinstance(init, ir.Operation) and init.name == "arith.constant":
        start = i
    else:
        return None
    end = i + 1
    while end < len(ops) and _epilogue_op(ops[end]):
        end += 1
    if end == len(ops) or ops[end].name != "vector.transfer_write":
        return None
    run = ops[start:end + 1]
    inside = {r for op in run for r in op.results}
    for value in inside:
        for use in value.uses:
            user = _op(use.owner)
            while user is not None and user.block != loop.block:
                user = _op(user.parent) if user.parent is not None else None
            if user is None or user not in run:
                return None
    if ops[end].operands[0] not in inside or not contains(loop, lambda o: o.name == "vector.contract"):
        return None
    return run


def _free_uses(ops):
    """[(op, operand number, value)] for each use, under `ops`, of a value defined elsewhere (pre-order)."""
    inside, uses = set(), []

    def visit(op):
        for n, v in enumerate(op.operands):
            if v not in inside:
                uses.append((op, n, v))
        inside.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        return ir.WalkResult.ADVANCE

    for op in ops:
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return uses


def _general(t):
    """A memref type with every size, stride and the offset dynamic but a static innermost stride (None if `t` has
    no strided layout)."""
    if not isinstance(t, ir.MemRefType) or t.rank == 0:
        return t
    try:
        strides, _ = t.get_strides_and_offset()
    except ValueError:
        return None
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    inner = strides[-1]  # (the dynamic value where it is dynamic)
    layout = ir.StridedLayoutAttr.get(dyn, [dyn] * (t.rank - 1) + [inner])
    return ir.MemRefType.get([ir.ShapedType.get_dynamic_size()] * t.rank, t.element_type, layout, t.memory_space)


def _is_constant(value):
    """Whether `value` is a constant to copy into the function (not an index: see _outline)."""
    owner = _op(value.owner)
    return (isinstance(owner, ir.Operation) and owner.name in _CONSTANTS
            and not isinstance(value.type, ir.IndexType))


def _outline(tile, module_body, name):
    """Move the tile's ops into a new function `name` (at the end of `module_body`) called in their place; returns
    the function, or None when a memref it uses has no strided layout (the tile is then left as it is)."""
    loop = next(op for op in tile if op.name == "scf.for")
    uses = _free_uses(tile)
    # one argument per memref (or other value) used, per use of an index (a loop bound, an index of a transfer,
    # whether a constant or not: tiles whose indices coincide differently share the function), a copy of each
    # other constant
    params, constants, slots = [], [], []
    for _, _, v in uses:
        if _is_constant(v):
            if v not in constants:
                constants.append(v)
            slots.append(v)
        elif isinstance(v.type, ir.IndexType) or v not in params:
            slots.append(len(params))
            params.append(v)
        else:
            slots.append(params.index(v))
    with loop.location:
        types = [_general(v.type) for v in params]
        if any(t is None for t in types):
            return None
        with ir.InsertionPoint(tile[0]):
            args = [v if v.type == t else memref.cast(t, v) for v, t in zip(params, types)]
            call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
        with ir.InsertionPoint(module_body):
            fn = func.FuncOp(name, (types, []))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        fn.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
        fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("inlinehint")])
        fn.attributes[ATTR] = ir.UnitAttr.get()
        entry = fn.add_entry_block()
        mapped = {v: _op(v.owner).clone(ip=ir.InsertionPoint(entry)).results[0] for v in constants}
        for op in tile:
            entry.append(op)
        with ir.InsertionPoint(entry):
            func.ReturnOp([])
    for (op, n, _), slot in zip(uses, slots):
        op.operands[n] = entry.arguments[slot] if isinstance(slot, int) else mapped[slot]
    return fn, call


@register("tfn-outline-micro-kernels", "Each register tile of the packed contractions as a call of one function per "
          "kernel shape (inlined again at O3)")
def outline_micro_kernels(module_op):
    loops = collect(module_op, lambda op: op.name == "scf.for" and len(op.results) == 1)
    tiles = []
    for loop in loops:
        fn = loop.parent
        while fn is not None and fn.name != "func.func":
            fn = fn.parent
        if fn is not None and ATTR in fn.attributes:
            continue
        tile = _tile(loop)
        if tile is not None:
            tiles.append(tile)
    if not tiles:
        return
    body = module_op.regions[0].blocks[0]
    names = {ir.StringAttr(op.attributes["sym_name"]).value for op in body.operations
             if "sym_name" in op.attributes}
    kernels = {}  # the function's text -> its name
    for tile in tiles:
        made = _outline(tile, body, "__tfn_micro_kernel")
        if made is None:
            continue
        fn, call = made
        text = fn.operation.get_asm(use_local_scope=True, assume_verified=True)
        name = kernels.get(text)
        if name is None:
            n = len(kernels)
            while f"{PREFIX}{n}" in names:
                n += 1
            name = kernels[text] = f"{PREFIX}{n}"
            names.add(name)
            fn.attributes["sym_name"] = ir.StringAttr.get(name)
        else:
            fn.operation.erase()
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(name)
