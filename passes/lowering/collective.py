"""Lowering of the collective ops (all_reduce, broadcast, all_gather) to MLIR's `mpi` dialect.

Each op hands its operand's buffer to MPI, which reduces it in place (MPI_IN_PLACE: no second buffer, no copy
inside MPI; measured on one machine, an in-place all-reduce of a few MB costs about half an out-of-place one),
and returns that buffer as the result tensor. The operand is taken with a writable `bufferization.to_buffer`:
one-shot bufferization writes into the operand's own buffer when nothing reads the operand afterwards (the usual
case: a gradient or a bucket made for the message) and copies it first otherwise (an argument, a tensor used
again). MLIR's `mpi` dialect has `mpi.allreduce` but no broadcast or gather: both are a sum of integers in which
every replica but the sender contributes zeros (floats travel as their bit patterns, so the sum is exact, -0.0 and
NaN payloads included).

Before its message, each op compares a signature of its operand's dtype and shape across the replicas (one
allreduce of two i64: max of sig and of -sig, see dialects/ops_collective.py) and reports a mismatch through the
run-time error channel instead of sending buffers of different sizes; the exchange is then skipped.

The MPI calls themselves are calls of helper functions declared here (`tfn_mpi_allreduce_<reduction>_<memref
type>` from one buffer into another, `tfn_mpi_inplace_<reduction>_<memref type>` in place, `tfn_mpi_comm_rank`,
`tfn_mpi_comm_size`): buffer deallocation rejects `mpi.allreduce` between memrefs. tfn-lower-mpi defines them from
`mpi` dialect text (helper_text) at the end of the LLVM stage; upstream's lowering passes MPI_IN_PLACE when the
send and receive buffers of `mpi.allreduce` are the same value. An in-place sum of f32, f64, i32 or i64 first
calls the function the module global SHARED_HOOK holds, when the runtime has set it (a job whose replicas all run
on one machine: runtime/shared_allreduce.py), and calls MPI only when that returns non-zero (some replica's buffer
is not in its shared-memory arena: every replica then takes MPI).
"""
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, scf, tensor
from mlir.dialects import func as func_d

from tfn.dialects import ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import DETAIL_LEN, dtype_code
from tfn.dialects.ops_collective import SIGNATURE_MASK, SIGNATURE_PRIME, describe_mismatch, signature
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import dim, empty, generic, identity_map, index, lowering, parallel

MPI_IMPLEMENTATION_ATTR = "dlti.map"  # on the helpers' own module (tfn-lower-mpi)
MPI_IMPLEMENTATION = '#dlti.map<"MPI:Implementation" = "MPICH">'
# Functions the lowered code calls, defined by tfn-lower-mpi with `mpi` dialect ops after bufferization.
HELPER_PREFIX = "tfn_mpi_"
ALLREDUCE_HELPER = HELPER_PREFIX + "allreduce_"  # + reduction + "_" + the memref type's shape and element type
INPLACE_HELPER = HELPER_PREFIX + "inplace_"  # the same, reducing one buffer in place (MPI_IN_PLACE)
RANK_HELPER, SIZE_HELPER = HELPER_PREFIX + "comm_rank", HELPER_PREFIX + "comm_size"
# The in-place sums try the shared-memory all-reduce first (runtime/_shared_allreduce.c) through this module
# global (weak, null at load; the runtime sets it in a job on one machine); its element kinds:
SHARED_HOOK = "tfn_shm_allreduce_hook"
SHARED_KINDS = {"f32": 1, "f64": 2, "i32": 3, "i64": 4}


def shared_hook_text():
    """The LLVM-dialect definition of SHARED_HOOK's global (null until the runtime sets it)."""
    return (f"llvm.mlir.global weak @{SHARED_HOOK}() {{addr_space = 0 : i32}} : !llvm.ptr {{\n"
            f"  %0 = llvm.mlir.zero : !llvm.ptr\n  llvm.return %0 : !llvm.ptr\n}}\n")
DYN = ir.ShapedType.get_dynamic_size()
MAX_DIMS = DETAIL_LEN - 2  # details: [kind, rank, dims...]
KIND_MISMATCH, KIND_SIZE, KIND_ROOT = 1, 2, 3


def _i64():
    return ir.IntegerType.get_signless(64)


def _module_of(op):
    while op is not None and op.name != "builtin.module":
        op = op.parent
    return op


def _declare(op, name, inputs, results):
    """Declare helper `name` (defined by tfn-lower-mpi) in op's module once."""
    module = _module_of(op)
    if name not in ir.SymbolTable(module.operation):
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
            func_d.FuncOp(name, ir.FunctionType.get(inputs, results), visibility="private")


def _allreduce(op, src, dst, reduction):
    """func.call of the helper that all-reduces memref src into dst (same type); declared here, defined by
    tfn-lower-mpi after bufferization (buffer deallocation rejects `mpi.allreduce`: its memory effects are
    unknown to it, while a call is understood)."""
    mtype = ir.MemRefType(src.type)
    name = f"{ALLREDUCE_HELPER}{reduction}_{str(mtype)[len('memref<'):-1].replace('?', 'D')}"
    _declare(op, name, [mtype, mtype], [])
    func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), [src, dst])


def _allreduce_in_place(op, buf, reduction):
    """func.call of the helper that all-reduces memref buf in place (MPI_IN_PLACE)."""
    mtype = ir.MemRefType(buf.type)
    name = f"{INPLACE_HELPER}{reduction}_{str(mtype)[len('memref<'):-1].replace('?', 'D')}"
    _declare(op, name, [mtype], [])
    func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), [buf])


def helper_text(name):
    """The `func.func` (mpi dialect) defining helper `name` (see _allreduce, _mpi_value)."""
    if name == RANK_HELPER:
        return (f"func.func @{name}() -> i32 {{\n  %comm = mpi.comm_world : !mpi.comm\n"
                f"  %v = mpi.comm_rank(%comm) : i32\n  return %v : i32\n}}\n")
    if name == SIZE_HELPER:  # mpi.comm_size has no lowering to LLVM (MLIR 22): the sum of a 1 from each replica
        return (f"func.func @{name}() -> i32 {{\n  %comm = mpi.comm_world : !mpi.comm\n"
                f"  %c0 = arith.constant 0 : index\n  %one = arith.constant 1 : i32\n"
                f"  %mine = memref.alloca() : memref<1xi32>\n  %all = memref.alloca() : memref<1xi32>\n"
                f"  memref.store %one, %mine[%c0] : memref<1xi32>\n"
                f"  mpi.allreduce(%mine, %all, MPI_SUM, %comm) : memref<1xi32>, memref<1xi32>\n"
                f"  %v = memref.load %all[%c0] : memref<1xi32>\n  return %v : i32\n}}\n")
    in_place = name.startswith(INPLACE_HELPER)
    reduction, _, spelled = name[len(INPLACE_HELPER if in_place else ALLREDUCE_HELPER):].partition("_")
    *dims, elem = spelled.replace("D", "?").split("x")
    mtype = f"memref<{spelled.replace('D', '?')}>"
    # upstream's lowering counts the elements of dim 0 only: the buffers are passed as one dimension
    flat = f"memref<{'?' if '?' in dims else _product(dims)}x{elem}>"
    if not dims:
        view = "memref.expand_shape %{0} [] output_shape [1] : {1} into {2}"
    elif len(dims) == 1:
        view, flat = "memref.cast %{0} : {1} to {2}", mtype
    else:
        view = f"memref.collapse_shape %{{0}} [[{', '.join(map(str, range(len(dims))))}]] : {{1}} into {{2}}"
    if in_place and reduction == "sum" and elem in SHARED_KINDS:  # shared memory first (the module docstring)
        count = ("  %c0 = arith.constant 0 : index\n  %ni = memref.dim %b, %c0 : {0}\n"
                 "  %n = arith.index_cast %ni : index to i64\n".format(flat) if "?" in flat else
                 f"  %n = arith.constant {_product(dims) if dims else 1} : i64\n")
        return (f"func.func @{name}(%buf: {mtype}) {{\n"
                f"  %comm = mpi.comm_world : !mpi.comm\n"
                f"  %b = {view.format('buf', mtype, flat)}\n"
                f"  %at = llvm.mlir.addressof @{SHARED_HOOK} : !llvm.ptr\n"
                f"  %hook = llvm.load %at : !llvm.ptr -> !llvm.ptr\n"
                f"  %null = llvm.mlir.zero : !llvm.ptr\n"
                f"  %unset = llvm.icmp \"eq\" %hook, %null : !llvm.ptr\n"
                f"  cf.cond_br %unset, ^mpi, ^shared\n"
                f"^shared:\n"
                f"  %pi = memref.extract_aligned_pointer_as_index %b : {flat} -> index\n"
                f"  %pw = arith.index_cast %pi : index to i64\n"
                f"  %p = llvm.inttoptr %pw : i64 to !llvm.ptr\n"
                f"{count}"
                f"  %kind = arith.constant {SHARED_KINDS[elem]} : i32\n"
                f"  %rc = llvm.call %hook(%p, %n, %kind) : !llvm.ptr, (!llvm.ptr, i64, i32) -> i32\n"
                f"  %zero = arith.constant 0 : i32\n"
                f"  %done = arith.cmpi eq, %rc, %zero : i32\n"
                f"  cf.cond_br %done, ^end, ^mpi\n"
                f"^mpi:\n"
                f"  mpi.allreduce(%b, %b, MPI_SUM, %comm) : {flat}, {flat}\n"
                f"  cf.br ^end\n"
                f"^end:\n"
                f"  return\n}}\n")
    if in_place:  # the same value as send and receive buffer: upstream passes MPI_IN_PLACE
        return (f"func.func @{name}(%buf: {mtype}) {{\n"
                f"  %comm = mpi.comm_world : !mpi.comm\n"
                f"  %b = {view.format('buf', mtype, flat)}\n"
                f"  mpi.allreduce(%b, %b, MPI_{reduction.upper()}, %comm) : {flat}, {flat}\n"
                f"  return\n}}\n")
    return (f"func.func @{name}(%src: {mtype}, %dst: {mtype}) {{\n"
            f"  %comm = mpi.comm_world : !mpi.comm\n"
            f"  %s = {view.format('src', mtype, flat)}\n  %d = {view.format('dst', mtype, flat)}\n"
            f"  mpi.allreduce(%s, %d, MPI_{reduction.upper()}, %comm) : {flat}, {flat}\n"
            f"  return\n}}\n")


def _product(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _mpi_value(op, name):
    """This replica's rank (RANK_HELPER) or the job's size (SIZE_HELPER) as an i64 Value."""
    i32 = ir.IntegerType.get_signless(32)
    _declare(op, name, [], [i32])
    return arith.extsi(_i64(), func_d.CallOp([i32], ir.FlatSymbolRefAttr.get(name), []).result)


def _signature(x, tt):
    """The operand's signature as an i64 Value (constant for a static shape; the same arithmetic as signature())."""
    if tt.is_static:
        return arith.constant(_i64(), signature(tt.dtype, tt.shape))
    sig = arith.constant(_i64(), dtype_code(tt.dtype))
    for i in range(tt.rank):
        d = arith.index_cast(_i64(), dim(x, i))
        sig = arith.addi(arith.addi(arith.muli(sig, arith.constant(_i64(), SIGNATURE_PRIME)), d),
                         arith.constant(_i64(), 1))
    return arith.andi(sig, arith.constant(_i64(), SIGNATURE_MASK))


def _details(rank, x, tt, kind):
    return [kind, rank] + [arith.index_cast(_i64(), dim(x, i)) for i in range(min(tt.rank, MAX_DIMS))]


def _agree(rw, x, tt, rank):
    """Emit the signature exchange; returns an i1 that holds when the replicas agree (a mismatch is reported)."""
    i64 = _i64()
    sig = _signature(x, tt)
    fn = rw.op
    while fn.name != "func.func":
        fn = fn.parent
    with ir.InsertionPoint.at_block_begin(fn.regions[0].blocks[0]):  # not in a loop body: the stack stays put
        mine = memref.AllocaOp(ir.MemRefType.get([2], i64), [], []).result
        agreed = memref.AllocaOp(ir.MemRefType.get([2], i64), [], []).result
    memref.store(sig, mine, [index(0)])
    memref.store(arith.subi(arith.constant(i64, 0), sig), mine, [index(1)])
    _allreduce(rw.op, mine, agreed, "max")
    hi = memref.load(agreed, [index(0)])
    lo = arith.subi(arith.constant(i64, 0), memref.load(agreed, [index(1)]))
    bad = arith.ori(arith.cmpi(arith.CmpIPredicate.ne, hi, sig), arith.cmpi(arith.CmpIPredicate.ne, lo, sig))
    runtime_errors.report(rw, bad, _details(rank, x, tt, KIND_MISMATCH))
    return arith.xori(bad, arith.constant(ir.IntegerType.get_signless(1), 1))


def _memref_type(tt, elem=None):
    return ir.MemRefType.get([DYN if d is None else d for d in tt.shape],
                             ttypes.element_type(tt.dtype) if elem is None else elem)


def _exchange(rw, ok, x, tt, reduction):
    """Tensor x reduced across replicas by MPI in place, in x's buffer when nothing reads x afterwards (else in a
    copy that bufferization makes); when not `ok`, the buffer is left as it is (the call reports an error)."""
    elem = ir.RankedTensorType(x.type).element_type
    buf = bufferization.to_buffer(_memref_type(tt, elem), x)  # writable: MPI writes the sums into it
    if_ok = scf.IfOp(ok)
    with ir.InsertionPoint(if_ok.then_block):
        _allreduce_in_place(rw.op, buf, reduction)
        scf.YieldOp([])
    return bufferization.to_tensor(ir.RankedTensorType(x.type), buf, restrict=True, writable=True)


def _bits_type(elem):
    """The integer type of a float's bit pattern (None for integer types)."""
    if isinstance(elem, ir.IntegerType):
        return None
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[str(elem)]
    return ir.IntegerType.get_signless(width)


def _map(x, elem, body):
    """An elementwise linalg.generic over tensor x producing element type `elem`."""
    t = ir.RankedTensorType(x.type)
    sizes = [dim(x, i) for i in range(t.rank) if t.is_dynamic_dim(i)]
    it = iter(sizes)
    init = tensor.EmptyOp([next(it) if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)],
                          elem).result
    return generic([x], [identity_map(t.rank)], [init], [identity_map(t.rank)], parallel(t.rank),
                   lambda a, _: body(a))[0]


def _as_bits(x):
    elem = ir.RankedTensorType(x.type).element_type
    bits = _bits_type(elem)
    return x if bits is None else _map(x, bits, lambda a: arith.bitcast(bits, a))


def _from_bits(x, elem):
    return x if _bits_type(elem) is None else _map(x, elem, lambda a: arith.bitcast(elem, a))


def _format(details, op):
    kind, rank, dims = details[0], details[1], details[2:]
    name = op.name[len("tfn."):]
    t = ttypes.TensorType.from_mlir(op.operands[0].type)
    if kind == KIND_MISMATCH:
        shown = [dims[i] if d is None else d for i, d in enumerate(t.shape[:MAX_DIMS])] + \
                ["..."] * (t.rank > MAX_DIMS)
        return describe_mismatch(name, t.dtype.name, shown, rank)
    if kind == KIND_ROOT:
        return f"{name}: root replica {dims[0]} is not in [0, {dims[1]}) (the job's number of replicas)"
    return (f"{name}: the function was traced for {dims[0]} replicas but runs in a job of {dims[1]}; "
            f"trace it again in this job")


@lowering(ops.all_reduce)
def lower_all_reduce(rw):
    """tfn.all_reduce {reduction} -> signature check, mpi.allreduce into a new buffer."""
    x, tt = rw.operands[0], rw.in_types[0]
    rank = _mpi_value(rw.op, RANK_HELPER)
    ok = _agree(rw, x, tt, rank)
    return [_exchange(rw, ok, x, tt, rw.attrs["reduction"])]


@lowering(ops.broadcast)
def lower_broadcast(rw):
    """tfn.broadcast {root} -> the sum of the root's bits and zeros from every other replica."""
    x, tt = rw.operands[0], rw.in_types[0]
    rank, size = _mpi_value(rw.op, RANK_HELPER), _mpi_value(rw.op, SIZE_HELPER)
    root = arith.constant(_i64(), rw.attrs["root"])
    ok = _agree(rw, x, tt, rank)
    bad_root = arith.cmpi(arith.CmpIPredicate.sge, root, size)
    runtime_errors.report(rw, bad_root, [KIND_ROOT, rank, root, size])
    ok = arith.andi(ok, arith.xori(bad_root, arith.constant(ir.IntegerType.get_signless(1), 1)))
    elem = ir.RankedTensorType(x.type).element_type
    bits = _as_bits(x)
    mine = arith.cmpi(arith.CmpIPredicate.eq, rank, root)
    belem = ir.RankedTensorType(bits.type).element_type
    zero = arith.constant(belem, 0)
    sent = _map(bits, belem, lambda a: arith.select(mine, a, zero))
    got = _exchange(rw, ok, sent, tt, "sum")
    return [_from_bits(got, elem)]


@lowering(ops.all_gather)
def lower_all_gather(rw):
    """tfn.all_gather {replicas} -> each replica's rows at its offset in zeros, summed bitwise-exactly."""
    x, tt, out = rw.operands[0], rw.in_types[0], rw.out
    rank, size = _mpi_value(rw.op, RANK_HELPER), _mpi_value(rw.op, SIZE_HELPER)
    ok = _agree(rw, x, tt, rank)
    bad_size = arith.cmpi(arith.CmpIPredicate.ne, size, arith.constant(_i64(), rw.attrs["replicas"]))
    runtime_errors.report(rw, bad_size, [KIND_SIZE, rank, rw.attrs["replicas"], size])
    ok = arith.andi(ok, arith.xori(bad_size, arith.constant(ir.IntegerType.get_signless(1), 1)))
    elem = ir.RankedTensorType(x.type).element_type
    bits = _as_bits(x)
    belem = ir.RankedTensorType(bits.type).element_type
    rows = dim(x, 0)
    sizes = [arith.muli(rows, index(rw.attrs["replicas"]))] if out.shape[0] is None else []
    sizes += [dim(x, i) for i in range(1, tt.rank) if tt.shape[i] is None]
    zeros = empty(out, sizes)
    zeros = linalg.fill(arith.constant(belem, 0), outs=[_retyped(zeros, belem)])
    # a replica past `replicas` (a job of another size: reported, exchange skipped) writes at 0, never out of bounds
    slot = arith.select(ok, rank, arith.constant(_i64(), 0))
    offset = arith.muli(arith.index_cast(ir.IndexType.get(), slot), rows)
    strides = [1] * tt.rank
    placed = tensor.insert_slice(bits, zeros, [offset], [dim(x, i) for i, d in enumerate(tt.shape) if d is None], [],
                                 static_offsets=[DYN] + [0] * (tt.rank - 1),
                                 static_sizes=[DYN if d is None else d for d in tt.shape], static_strides=strides)
    got = _exchange(rw, ok, placed, out, "sum")
    return [_from_bits(got, elem)]


def _retyped(t, elem):
    """An empty tensor like `t` (a tensor.empty) with element type elem."""
    rt = ir.RankedTensorType(t.type)
    if rt.element_type == elem:
        return t
    sizes = [dim(t, i) for i in range(rt.rank) if rt.is_dynamic_dim(i)]
    it = iter(sizes)
    return tensor.EmptyOp([next(it) if rt.is_dynamic_dim(i) else rt.get_dim_size(i) for i in range(rt.rank)],
                          elem).result


for _op in (ops.all_reduce, ops.broadcast, ops.all_gather):
    runtime_errors.may_fail(_op, _format)
