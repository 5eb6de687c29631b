"""tfn-gpu-map: the GPU kernels on buffers: tiled foralls and tagged reductions/matmuls into `gpu.launch` ops.

Runs after tfn-gpu-tile and bufferization (pipeline `tfn-gpu-mapped`, passes/pipelines.py). Every launch it makes
has a grid and block size computed on the host and takes the function's buffers as they are (tfn-gpu-device-buffers
then puts them in device memory):

- elementwise: each top-level scf.forall mapped to `#gpu.block<...>` becomes a `gpu.launch` with
  `transform.gpu.map_forall_to_blocks {generate_gpu_launch}`, its nested `#gpu.thread<x>` forall mapped to threads
  with `transform.gpu.map_nested_forall_to_threads` (block = the thread forall's extent, `block-size` of
  tfn-gpu-tile); a thread's work is a 0- or 1-element slice (the bounds guard of the last block).
- reduce (`tfn.gpu_kernel = "reduce"`, the reduced dims contiguous): collapsed to rows [M, N] when the reduced dims
  are the trailing ones: one block of `block-size` threads per row (or, for a single long row, up to MAX_BLOCKS
  blocks writing partial results to a temporary buffer that a second one-block launch combines); each thread
  strides over the row accumulating, the warp combines with `gpu.shuffle xor` (16, 8, 4, 2, 1 for a warp of 32),
  lane 0 of each warp stores into a workgroup (shared-memory) array, `gpu.barrier`, then every warp reads the
  block-size / warp-size partials back and combines them with shuffles again and thread 0 combines the result with
  the output's initial value. Reduced leading or middle dims ([A, R, C], reducing R): one thread per output column
  (c, a) looping over R (coalesced across the threads of a warp).
- matmul (`tfn.gpu_kernel = "matmul"`, C += A B): `matmul-tile` x `matmul-tile` threads per block, each computing
  `matmul-per-thread` x `matmul-per-thread` outputs; per step of the k loop the block loads a tile of A and one of
  B into two workgroup arrays (zero outside the matrices), `gpu.barrier`, accumulates the tile product into
  loop-carried accumulators (registers), `gpu.barrier` (see _matmul_text).
- scalar (rank-0 ops such as the fill of a full reduction's result): a launch of one thread.

Every load is guarded by a bounds check (indices clamped, the value selected), so a size that is not a multiple of
a tile never reads or writes out of bounds. The option `guard-slack` (a test hook, default 0) adds its value to
the bound of the reduction and matmul guards: -1 drops the last element of each row / k step, which the emulation
tests (test_gpu_emulate.py) must catch.
"""
import math
import re

from mlir import ir

from tfn.passes.options import Option, positive
from tfn.passes.registry import PassFailure, register
from tfn.passes.target import gpu_target
from tfn.passes.tfn_vectorize_kernels import apply_schedule, named_sequence
from tfn.passes.walk import collect

BLOCK_SIZE = Option("block-size", "threads per block of the reduction kernels (default: the GPU target's)",
                    lambda t: gpu_target().block_size, positive)
MATMUL_TILE = Option("matmul-tile", "the matmul kernel's threads per side (tile x tile per block) and k step "
                     "(default: the GPU target's)", lambda t: gpu_target().matmul_tile, positive)
MATMUL_PER_THREAD = Option("matmul-per-thread", "outputs per side each matmul thread computes (a block computes a "
                           "(tile x per-thread)^2 tile; default: the GPU target's)",
                           lambda t: gpu_target().matmul_per_thread, positive)
WARP_SIZE = Option("warp-size", "threads of one warp, the width of gpu.shuffle (default: the GPU target's)",
                   lambda t: gpu_target().warp_size, positive)
GUARD_SLACK = Option("guard-slack", "test hook: added to the bounds of the reduction and matmul guards (0: exact; "
                     "-1 makes the kernels wrong on purpose)", lambda t: 0, signed=True)

MAX_BLOCKS = 1024       # blocks of the first stage of a single-row reduction
ROW_WORK_PER_THREAD = 8  # a single row is split across blocks once each thread would get more elements than this
_ANY = "!transform.any_op"
_WG = "#gpu.address_space<workgroup>"
_PRIV = "#gpu.address_space<private>"


class Unsupported(Exception):
    """An op this pass has no kernel for; the message names what is missing."""


# ---- combiner of a reduction: the op's name and its identity element ----
def _identity(name, elem):
    """The identity of the combiner `name` on element type `elem` as MLIR attribute text."""
    is_float = isinstance(elem, ir.FloatType)
    width = elem.width
    ints = {"arith.addi": 0, "arith.ori": 0, "arith.xori": 0, "arith.muli": 1, "arith.andi": -1,
            "arith.maxsi": -(1 << (width - 1)), "arith.minsi": (1 << (width - 1)) - 1, "arith.maxui": 0,
            "arith.minui": -1}
    floats = {"arith.addf": "0.0", "arith.mulf": "1.0", "arith.maximumf": "0xFF800000", "arith.maxnumf": "0xFF800000",
              "arith.minimumf": "0x7F800000", "arith.minnumf": "0x7F800000"}
    if is_float and name in floats:
        value = floats[name]
        if value.startswith("0x") and width == 64:
            value = {"0xFF800000": "0xFFF0000000000000", "0x7F800000": "0x7FF0000000000000"}[value]
        elif value.startswith("0x") and width == 16:
            value = {"0xFF800000": "0xFC00", "0x7F800000": "0x7C00"}[value]
        return value
    if not is_float and name in ints:
        return str(ints[name])
    raise Unsupported(f"a reduction combining with {name} on {elem}")


def _combiner(op):
    """(op name, element type) of a linalg.reduce whose body is one combining op of its two arguments."""
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 2 or len(body[0].operands) != 2 or len(body[0].results) != 1:
        raise Unsupported("a reduction whose body is not one combining op")
    elem = body[0].results[0].type
    if elem.width not in (32, 64):
        raise Unsupported(f"a reduction of {elem} (warp shuffles move 32- and 64-bit values)")
    _identity(body[0].name, elem)
    return body[0].name, elem


# ---- kernels written as text, spliced in place of the op ----
def _splice(op, operands, body):
    """Parse `body` (ops using %a0, %a1... for `operands`) and insert its ops before `op`."""
    args = ", ".join(f"%a{i}: {v.type}" for i, v in enumerate(operands))
    parsed = ir.Module.parse(f"func.func @k({args}) {{\n{body}\n  return\n}}")
    block = parsed.body.operations[0].regions[0].blocks[0]
    for arg, value in zip(block.arguments, operands):
        arg.replace_all_uses_with(value)
    for inner in list(block.operations)[:-1]:
        inner.move_before(op)


def _memref(value):
    return ir.MemRefType(value.type)


def _check_identity_layout(op, value):
    t = _memref(value)
    if not (isinstance(t.layout, ir.AffineMapAttr) and t.layout.value.is_permutation
            and t.layout.value == ir.AffineMap.get_identity(t.rank)):
        raise Unsupported(f"an operand of {op.name} with a strided layout ({t})")


def _shape_text(shape, elem):
    dims = "x".join("?" if d == ir.ShapedType.get_dynamic_size() else str(d) for d in shape)
    return f"memref<{dims + 'x' if dims else ''}{elem}>"


def _reshape_lines(name, value_name, t, groups):
    """Lines making %name: %value_name (memref type t) collapsed into len(groups) dims, each group of dims becoming
    one (only the first group may be empty: a leading dim of 1); returns (lines, the new type's text)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    elem, shape = t.element_type, list(t.shape)
    real = [g for g in groups if g]
    if any(not g for g in groups[1:]):
        raise Unsupported("a reshape with an inner unit group")
    mid_shape = [dynamic if any(shape[d] == dynamic for d in g) else math.prod(shape[d] for d in g) for g in real]
    mid_text, lines, cur = _shape_text(mid_shape, elem), [], value_name
    if len(real) != len(shape):
        reassoc = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in real)
        lines.append(f"%{name}_m = memref.collapse_shape %{value_name} [{reassoc}] : {t} into {mid_text}")
        cur = f"{name}_m"
    if groups and not groups[0]:
        if dynamic in mid_shape:
            raise Unsupported("a reduction of a dynamic shape into a leading unit dimension")
        out_text = _shape_text([1] + mid_shape, elem)
        reassoc = "[" + ", ".join(["[0, 1]"] + [f"[{d + 1}]" for d in range(1, len(mid_shape))]) + "]" \
            if mid_shape else "[]"
        src = mid_text if cur != value_name else str(t)
        lines.append(f"%{name} = memref.expand_shape %{cur} {reassoc} output_shape "
                     f"[{', '.join(map(str, [1] + mid_shape))}] : {src} into {out_text}")
        return lines, out_text
    lines.append(f"%{name} = memref.cast %{cur} : {mid_text if cur != value_name else t} to {mid_text}")
    return lines, mid_text


def _warp_reduce(lines, name, value, elem, combine, warp, prefix):
    """Append `gpu.shuffle xor` steps combining `value` across a warp; returns the final value's name."""
    cur = value
    offset = warp // 2
    while offset >= 1:
        lines.append(f"%{prefix}o{offset} = arith.constant {offset} : i32")
        lines.append(f"%{prefix}s{offset}, %{prefix}v{offset} = gpu.shuffle xor %{cur}, %{prefix}o{offset}, "
                     f"%warp_i32 : {elem}")
        lines.append(f"%{prefix}r{offset} = {combine} %{prefix}s{offset}, %{cur} : {elem}")
        cur = f"{prefix}r{offset}"
        offset //= 2
    return cur


def _row_reduce_text(in_t, out_t, elem, combine, identity, block, warp, slack, blocks, store):
    """The body of a row-reduction launch over %x: [M, N] into %y: [M'] (store: 'combine' into %y[row], or
    'partial' into %y[row * blocks + g])."""
    warps = max(block // warp, 1)
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
             f"%cB = arith.constant {block} : index", f"%cW = arith.constant {warp} : index",
             f"%cG = arith.constant {blocks} : index", f"%cWs = arith.constant {warps} : index",
             f"%cWs1 = arith.constant {warps - 1} : index",
             f"%warp_i32 = arith.constant {warp} : i32", f"%id = arith.constant {identity} : {elem}",
             f"%slack = arith.constant {slack} : index",
             f"%M = memref.dim %x, %c0 : {in_t}", f"%N = memref.dim %x, %c1 : {in_t}",
             "%Nb = arith.addi %N, %slack : index",
             f"gpu.launch blocks(%g, %row, %bz) in (%gx = %cG, %gy = %M, %gz = %c1) "
             f"threads(%tx, %ty, %tz) in (%sx = %cB, %sy = %c1, %sz = %c1) "
             f"workgroup(%sh : memref<{warps}x{elem}, {_WG}>) {{",
             "%gB = arith.muli %g, %cB : index", "%start = arith.addi %gB, %tx : index",
             "%step = arith.muli %cG, %cB : index",
             f"%acc = scf.for %j = %start to %Nb step %step iter_args(%a = %id) -> ({elem}) {{",
             f"  %v = memref.load %x[%row, %j] : {in_t}", f"  %n = {combine} %v, %a : {elem}",
             f"  scf.yield %n : {elem}", "}"]
    w1 = _warp_reduce(lines, "w1", "acc", elem, combine, warp, "p")
    lines += ["%lane = arith.remui %tx, %cW : index", "%wid = arith.divui %tx, %cW : index",
              "%lane0 = arith.cmpi eq, %lane, %c0 : index",
              "scf.if %lane0 {", f"  memref.store %{w1}, %sh[%wid] : memref<{warps}x{elem}, {_WG}>", "}",
              "gpu.barrier",
              "%has = arith.cmpi ult, %lane, %cWs : index", "%li = arith.minui %lane, %cWs1 : index",
              f"%pv = memref.load %sh[%li] : memref<{warps}x{elem}, {_WG}>",
              f"%p = arith.select %has, %pv, %id : {elem}"]
    w2 = _warp_reduce(lines, "w2", "p", elem, combine, warp, "q")
    lines += ["%t0 = arith.cmpi eq, %tx, %c0 : index", "scf.if %t0 {"]
    if store == "combine":
        lines += [f"  %old = memref.load %y[%row] : {out_t}", f"  %new = {combine} %{w2}, %old : {elem}",
                  f"  memref.store %new, %y[%row] : {out_t}"]
    else:
        lines += ["  %rg = arith.muli %row, %cG : index", "  %at = arith.addi %rg, %g : index",
                  f"  memref.store %{w2}, %y[%at] : {out_t}"]
    lines += ["}", "gpu.terminator", "}"]
    return "\n".join("    " + line for line in lines)


def _column_reduce_text(in_t, out_t, elem, combine, block, slack):
    """One thread per output (a, c) of %x: [A, R, C] reduced over R into %y: [A, C]."""
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index", "%c2 = arith.constant 2 : index",
             f"%cB = arith.constant {block} : index", f"%slack = arith.constant {slack} : index",
             f"%A = memref.dim %x, %c0 : {in_t}", f"%R = memref.dim %x, %c1 : {in_t}",
             f"%C = memref.dim %x, %c2 : {in_t}", "%Rb = arith.addi %R, %slack : index",
             "%Cb = arith.addi %C, %cB : index", "%Cb1 = arith.subi %Cb, %c1 : index",
             "%gx = arith.divui %Cb1, %cB : index",
             "gpu.launch blocks(%bx, %a, %bz) in (%sgx = %gx, %sgy = %A, %sgz = %c1) "
             "threads(%tx, %ty, %tz) in (%sx = %cB, %sy = %c1, %sz = %c1) {",
             "%base = arith.muli %bx, %cB : index", "%col = arith.addi %base, %tx : index",
             "%in = arith.cmpi ult, %col, %C : index", "scf.if %in {",
             f"  %init = memref.load %y[%a, %col] : {out_t}",
             f"  %acc = scf.for %r = %c0 to %Rb step %c1 iter_args(%s = %init) -> ({elem}) {{",
             f"    %v = memref.load %x[%a, %r, %col] : {in_t}", f"    %n = {combine} %v, %s : {elem}",
             f"    scf.yield %n : {elem}", "  }", f"  memref.store %acc, %y[%a, %col] : {out_t}", "}",
             "gpu.terminator", "}"]
    return "\n".join("    " + line for line in lines)


def _map_reduce(op, block, warp, slack):
    combine, elem = _combiner(op)
    identity = _identity(combine, elem)
    x, y = op.operands[0], op.operands[1]
    for v in (x, y):
        _check_identity_layout(op, v)
    rank = _memref(x).rank
    if op.name == "linalg.reduce":
        dims = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    else:  # a linalg.generic reduction (tfn-gpu-tile checked its form): its reduction loops
        dims = [d for d, a in enumerate(ir.ArrayAttr(op.attributes["iterator_types"])) if "reduction" in str(a)]
    if dims != list(range(dims[0], dims[-1] + 1)):
        raise Unsupported(f"a reduction over the non-contiguous dimensions {dims}")
    lead, red, trail = list(range(dims[0])), dims, list(range(dims[-1] + 1, rank))
    xt = _memref(x)
    if not trail:  # rows: [M, N]
        lines, in_t = _reshape_lines("x", "a0", xt, [lead, red])
        out_lines, out_t = _reshape_lines("y", "a1", _memref(y), [list(range(len(lead)))])
        n = math.prod(xt.shape[d] for d in red) if all(xt.shape[d] >= 0 for d in red) else -1
        m = math.prod(xt.shape[d] for d in lead) if all(xt.shape[d] >= 0 for d in lead) else -1
        blocks = 1
        if m == 1 and n > block * ROW_WORK_PER_THREAD:
            blocks = min(MAX_BLOCKS, -(-n // (block * ROW_WORK_PER_THREAD)))
        head = "\n".join("    " + line for line in lines + out_lines)
        if blocks == 1:
            return head + "\n" + _row_reduce_text(in_t, out_t, elem, combine, identity, block, warp, slack, 1,
                                                  "combine")
        # two stages: `blocks` partials into a temporary, then one block combines them into the output
        part_t = f"memref<{blocks}x{elem}>"
        first = _row_reduce_text(in_t, part_t, elem, combine, identity, block, warp, slack, blocks, "partial")
        first = first.replace("%y[", "%part[").replace(f": {part_t}", f": {part_t}")
        second = _row_reduce_text(f"memref<1x{blocks}x{elem}>", out_t, elem, combine, identity, block, warp, 0, 1,
                                  "combine")
        second = _rename(second, "s2_").replace("%s2_x[", "%part2[").replace("%s2_y[", "%y[")
        second = second.replace("memref.dim %s2_x,", "memref.dim %part2,")
        return (head + f"\n    %part = memref.alloc() : {part_t}\n" + first +
                f"\n    %part2 = memref.expand_shape %part [[0, 1]] output_shape [1, {blocks}] : {part_t} into "
                f"memref<1x{blocks}x{elem}>\n" + second + f"\n    memref.dealloc %part : {part_t}")
    if not lead:
        lead_groups = []
    else:
        lead_groups = [lead]
    lines, in_t = _reshape_lines("x", "a0", xt, (lead_groups or [[]]) + [red, trail])
    kept = _memref(y).rank
    ylead = list(range(len(lead)))
    ytrail = list(range(len(lead), kept))
    out_lines, out_t = _reshape_lines("y", "a1", _memref(y), [ylead, ytrail] if lead else [[], ytrail])
    head = "\n".join("    " + line for line in lines + out_lines)
    return head + "\n" + _column_reduce_text(in_t, out_t, elem, combine, block, slack)


def _rename(text, prefix):
    """Prefix every SSA name of a kernel's text (so two kernels can share a function body)."""
    return re.sub(r"%([A-Za-z_][\w]*)", lambda m: f"%{prefix}{m.group(1)}", text)


def _matmul_text(op, tile, per_thread, slack):
    """C += A B by blocks of tile x tile threads, each computing per_thread x per_thread outputs spread tile apart
    (rows ty + tile i, columns tx + tile j of the block's BT x BT output tile, BT = tile * per_thread), so that
    neighbouring threads touch neighbouring columns. Per k step of `tile`, the block stages A[BT, tile] and
    B[tile, BT] in shared memory (zero outside the matrices), then accumulates into per_thread^2 loop-carried values."""
    a, b, c = op.operands[0], op.operands[1], op.operands[2]
    for v in (a, b, c):
        _check_identity_layout(op, v)
    at, bt, ct = (str(v.type) for v in (a, b, c))
    elem = _memref(c).element_type
    fma = isinstance(elem, ir.FloatType)
    mul, add, zero = ("arith.mulf", "arith.addf", "0.0") if fma else ("arith.muli", "arith.addi", "0")
    if any(_memref(v).element_type != elem for v in (a, b)):
        raise Unsupported("a matmul with mixed element types")
    r, bt_ = per_thread, tile * per_thread
    ash = f"memref<{bt_}x{tile}x{elem}, {_WG}>"
    bsh = f"memref<{tile}x{bt_}x{elem}, {_WG}>"
    rr = r * r
    types = ", ".join([str(elem)] * rr)
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
             f"%cT = arith.constant {tile} : index", f"%cR = arith.constant {r} : index",
             f"%cBT = arith.constant {bt_} : index",
             f"%cBT1 = arith.constant {bt_ - 1} : index",
             f"%slack = arith.constant {slack} : index", f"%zero = arith.constant {zero} : {elem}",
             f"%M = memref.dim %a0, %c0 : {at}", f"%K = memref.dim %a0, %c1 : {at}",
             f"%N = memref.dim %a1, %c1 : {bt}", "%Kb = arith.addi %K, %slack : index",
             "%M1 = arith.subi %M, %c1 : index", "%K1 = arith.subi %K, %c1 : index",
             "%N1 = arith.subi %N, %c1 : index",
             "%Mt = arith.addi %M, %cBT1 : index", "%gy = arith.divui %Mt, %cBT : index",
             "%Nt = arith.addi %N, %cBT1 : index", "%gx = arith.divui %Nt, %cBT : index"]
    lines += [f"%cO{i} = arith.constant {tile * i} : index" for i in range(r)]
    lines += ["gpu.launch blocks(%bx, %by, %bz) in (%sgx = %gx, %sgy = %gy, %sgz = %c1) "
             "threads(%tx, %ty, %tz) in (%sx = %cT, %sy = %cT, %sz = %c1) "
             f"workgroup(%As : {ash}, %Bs : {bsh}) {{",
             "%orow = arith.muli %by, %cBT : index", "%ocol = arith.muli %bx, %cBT : index",
             f"%acc:{rr} = scf.for %k0 = %c0 to %K step %cT iter_args("
             + ", ".join(f"%q{n} = %zero" for n in range(rr)) + f") -> ({types}) {{",
             # A tile: rows ty + tile i, column tx;  B tile: row ty, columns tx + tile j
             "  %ka = arith.addi %k0, %tx : index", "  %kb = arith.addi %k0, %ty : index",
             "  %kac = arith.minui %ka, %K1 : index", "  %kbc = arith.minui %kb, %K1 : index",
             "  %kain = arith.cmpi ult, %ka, %Kb : index", "  %kbin = arith.cmpi ult, %kb, %Kb : index",
             "  scf.for %i = %c0 to %cR step %c1 {",
             "    %ti = arith.muli %i, %cT : index", "    %ar = arith.addi %ty, %ti : index",
             "    %grow = arith.addi %orow, %ar : index", "    %growc = arith.minui %grow, %M1 : index",
             "    %rin = arith.cmpi ult, %grow, %M : index", "    %oka = arith.andi %rin, %kain : i1",
             f"    %av = memref.load %a0[%growc, %kac] : {at}",
             f"    %as = arith.select %oka, %av, %zero : {elem}",
             f"    memref.store %as, %As[%ar, %tx] : {ash}",
             "    %bc = arith.addi %tx, %ti : index", "    %gcol = arith.addi %ocol, %bc : index",
             "    %gcolc = arith.minui %gcol, %N1 : index", "    %cin = arith.cmpi ult, %gcol, %N : index",
             "    %okb = arith.andi %kbin, %cin : i1",
             f"    %bv = memref.load %a1[%kbc, %gcolc] : {bt}",
             f"    %bs = arith.select %okb, %bv, %zero : {elem}",
             f"    memref.store %bs, %Bs[%ty, %bc] : {bsh}",
             "  }",
             "  gpu.barrier",
             f"  %sum:{rr} = scf.for %kk = %c0 to %cT step %c1 iter_args("
             + ", ".join(f"%s{n} = %q{n}" for n in range(rr)) + f") -> ({types}) {{"]
    # the per-thread product unrolled, its accumulators loop-carried values (registers)
    for i in range(r):
        lines += [f"    %ar{i} = arith.addi %ty, %cO{i} : index", f"    %x{i} = memref.load %As[%ar{i}, %kk] : {ash}"]
    for j in range(r):
        lines += [f"    %bc{j} = arith.addi %tx, %cO{j} : index", f"    %y{j} = memref.load %Bs[%kk, %bc{j}] : {bsh}"]
    for i in range(r):
        for j in range(r):
            n = i * r + j
            if fma:
                lines += [f"    %u{n} = math.fma %x{i}, %y{j}, %s{n} : {elem}"]
            else:
                lines += [f"    %p{n} = {mul} %x{i}, %y{j} : {elem}", f"    %u{n} = {add} %s{n}, %p{n} : {elem}"]
    lines += [f"    scf.yield {', '.join(f'%u{n}' for n in range(rr))} : {types}", "  }", "  gpu.barrier",
              f"  scf.yield {', '.join(f'%sum#{n}' for n in range(rr))} : {types}", "}"]
    for i in range(r):
        lines += [f"%wr{i} = arith.addi %ty, %cO{i} : index", f"%row{i} = arith.addi %orow, %wr{i} : index",
                  f"%rin{i} = arith.cmpi ult, %row{i}, %M : index"]
        for j in range(r):
            n = f"{i}_{j}"
            lines += [f"%wc{n} = arith.addi %tx, %cO{j} : index", f"%col{n} = arith.addi %ocol, %wc{n} : index",
                      f"%cin{n} = arith.cmpi ult, %col{n}, %N : index", f"%in{n} = arith.andi %rin{i}, %cin{n} : i1",
                      f"scf.if %in{n} {{",
                      f"  %old{n} = memref.load %a2[%row{i}, %col{n}] : {ct}",
                      f"  %new{n} = {add} %old{n}, %acc#{i * r + j} : {elem}",
                      f"  memref.store %new{n}, %a2[%row{i}, %col{n}] : {ct}", "}"]
    lines += [
             "gpu.terminator", "}"]
    return "\n".join("    " + line for line in lines)


def _map_scalar(op):
    """Move a rank-0 op into a launch of one thread."""
    text = ("    %c1 = arith.constant 1 : index\n    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, "
            "%gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {\n      gpu.terminator\n    }")
    _splice(op, [], text)
    launch = op.operation.block.operations  # the launch is now just before op
    previous = None
    for o in launch:
        if o.operation == op.operation:
            break
        previous = o
    op.move_before(list(previous.regions[0].blocks[0].operations)[-1])  # before its gpu.terminator


def _block_foralls(module_op):
    def is_block_forall(o):
        return o.name == "scf.forall" and "mapping" in o.attributes and "gpu.block" in str(o.attributes["mapping"])
    return [o for o in collect(module_op, is_block_forall) if o.parent.name == "func.func"]


def _thread_extent(forall):
    inner = collect(forall, lambda o: o.name == "scf.forall" and "gpu.thread" in str(o.attributes["mapping"]))
    if not inner:
        return 1
    text = str(inner[0]).split("\n")[0]
    return int(text.split(" in (")[1].split(")")[0])


@register("tfn-gpu-map", "Map tiled foralls to gpu.launch (transform dialect) and write the reduction and matmul "
          "kernels (shared memory, barriers, warp shuffles)",
          options=[BLOCK_SIZE, MATMUL_TILE, MATMUL_PER_THREAD, WARP_SIZE, GUARD_SLACK])
def gpu_map(module_op, block_size, matmul_tile, matmul_per_thread, warp_size, guard_slack):
    if warp_size & (warp_size - 1):
        raise ValueError(f"tfn-gpu-map: warp-size {warp_size} is not a power of two")
    failed = False
    for op in collect(module_op, lambda o: "tfn.gpu_kernel" in o.attributes):
        kind = ir.StringAttr(op.attributes["tfn.gpu_kernel"]).value
        try:
            if kind == "scalar":
                del op.attributes["tfn.gpu_kernel"]
                _map_scalar(op)
                continue
            if kind == "reduce":
                text = _map_reduce(op, block_size, warp_size, guard_slack)
                operands = [op.operands[0], op.operands[1]]
            else:
                text = _matmul_text(op, matmul_tile, matmul_per_thread, guard_slack)
                operands = list(op.operands)
            _splice(op, operands, text)
            op.erase()
        except Unsupported as e:
            op.location.emit_error(f"tfn-gpu-map: no GPU kernel for {e}")
            failed = True
    if failed:
        raise PassFailure()
    foralls = _block_foralls(module_op)
    if not foralls:
        return
    lines = []
    for i, forall in enumerate(foralls):
        forall.attributes["tfn.gpu_forall"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
        threads = _thread_extent(forall)
        lines += [f"%f{i} = transform.structured.match attributes {{tfn.gpu_forall = {i} : i64}} in %root : "
                  f"({_ANY}) -> {_ANY}",
                  f"%l{i} = transform.gpu.map_forall_to_blocks %f{i} generate_gpu_launch : ({_ANY}) -> {_ANY}",
                  f"transform.gpu.map_nested_forall_to_threads %l{i} block_dims = [{threads}, 1, 1] : "
                  f"({_ANY}) -> {_ANY}"]
    apply_schedule(module_op, named_sequence(lines))
