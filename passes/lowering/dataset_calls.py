"""Dataset arguments: compiled code asking a pipeline's producer for element k (the state words: dialects/abi.py).

A traced loop over a dataset argument calls two private declarations carrying `tfn.dataset`: "fetch"(state, k)
-> i1 (is there an element k?) in the loop's condition and "take"(state) -> components in its body. Fetch stores k
in the state and calls the producer through the pointer the state holds (the pipeline's compiled function, or a
Python one), then reads the status and the producer's error flag; when the producer failed it calls back the
trace's error site (runtime/callbacks.py), whose handler raises the producer's error, and the loop stops. Take
copies each component out of the producer's results into a buffer of its own and frees the producer's; results
no take copied (a loop left by `break`) are freed by the next fetch, or by the runtime after the call.

Every access of the state beyond its length and loop counter goes through LLVM pointers: the producer writes it,
so passes must not assume it unchanged across the calls (an LLVM call through a pointer may write any memory).
"""
from mlir import ir
from mlir.dialects import arith, bufferization, llvm, memref, scf, tensor

from tfn.dialects import dtypes
from tfn.dialects import types as ttypes
from tfn.dialects.abi import (
    DATASET_ARGS,
    DATASET_ATTR,
    DATASET_COPY,
    DATASET_FETCH,
    DATASET_FN,
    DATASET_FREE,
    DATASET_K,
    DATASET_LENGTH,
    DATASET_LOOP,
    DATASET_PENDING,
    DATASET_RESULTS,
    DATASET_SENTINEL,
    DATASET_SLOT,
    DATASET_STATUS,
)
from tfn.dialects.types import TensorType
from tfn.passes.lowering import callbacks
from tfn.passes.walk import replace_declared_calls


def _i64():
    return ir.IntegerType.get_signless(64)


def _ptr_type():
    return ir.Type.parse("!llvm.ptr")


def _c64(v):
    return arith.constant(_i64(), int(v))


def _ptr(address):
    return llvm.inttoptr(_ptr_type(), address)


def _load(address, width=64):
    return llvm.load(ir.IntegerType.get_signless(width), _ptr(address))


def _word(base, i):
    """The address of state word i."""
    return arith.addi(base, _c64(8 * i))


def _state(value):
    """(the state's buffer, its address as an i64) of the state tensor operand."""
    buf = bufferization.to_buffer(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], _i64()), value,
                                  read_only=True)
    return buf, callbacks._pointer(buf)


def _header(buf, i):
    """State word i, which does not change during the call (read as memory the passes understand)."""
    return memref.load(buf, [arith.constant(ir.IndexType.get(), i)])


def _release(buf, base, ranks):
    """Free the result buffers an element left untaken (its loop was left by `break`), if any."""
    pending = arith.cmpi(arith.CmpIPredicate.ne, _load(_word(base, DATASET_PENDING)), _c64(0))
    if_pending = scf.IfOp(pending)
    with ir.InsertionPoint(if_pending.then_block):
        results, free = _load(_word(base, DATASET_RESULTS)), _header(buf, DATASET_FREE)
        seen, pos = [], 0
        for rank in ranks:
            seen.append(_free_unless_kept(free, _load(arith.addi(results, _c64(8 * pos))), seen))
            pos += 3 + 2 * rank
        llvm.store(_c64(0), _ptr(_word(base, DATASET_PENDING)))
        scf.YieldOp([])


def _free_unless_kept(free, allocated, seen):
    """free(allocated) unless it is a constant or an input (DATASET_SENTINEL) or among `seen`; returns it."""
    keep = arith.cmpi(arith.CmpIPredicate.eq, allocated, _c64(DATASET_SENTINEL))
    for earlier in seen:
        keep = arith.ori(keep, arith.cmpi(arith.CmpIPredicate.eq, allocated, earlier))
    if_free = scf.IfOp(arith.xori(keep, arith.constant(ir.IntegerType.get_signless(1), 1)))
    with ir.InsertionPoint(if_free.then_block):
        llvm.call(None, [_ptr(free), _ptr(allocated)], [], [])
        scf.YieldOp([])
    return allocated


def _fetch(call, loop, site, ranks):
    state, k = call.operands
    buf, base = _state(state)
    k_value = tensor.extract(k, [])
    i1 = ir.IntegerType.get_signless(1)
    in_range = arith.cmpi(arith.CmpIPredicate.slt, k_value, _header(buf, DATASET_LENGTH))
    if_asked = scf.IfOp(in_range, [i1], has_else=True)
    with ir.InsertionPoint(if_asked.then_block):
        _release(buf, base, ranks)
        llvm.store(k_value, _ptr(_word(base, DATASET_K)))
        llvm.store(_c64(loop), _ptr(_word(base, DATASET_LOOP)))
        llvm.call(None, [_ptr(_header(buf, DATASET_FN)), _ptr(_header(buf, DATASET_ARGS))], [], [])
        status = _load(_word(base, DATASET_STATUS))
        gave = arith.cmpi(arith.CmpIPredicate.sgt, status, _c64(0))  # results to copy and free
        llvm.store(arith.extui(_i64(), gave), _ptr(_word(base, DATASET_PENDING)))
        slot = _header(buf, DATASET_SLOT)
        has_slot = arith.cmpi(arith.CmpIPredicate.ne, slot, _c64(0))
        if_slot = scf.IfOp(has_slot, [i1], has_else=True)
        with ir.InsertionPoint(if_slot.then_block):
            flag = llvm.load(ir.IntegerType.get_signless(32), llvm.call(_ptr_type(), [_ptr(slot)], [], []))
            scf.YieldOp([arith.cmpi(arith.CmpIPredicate.ne, flag, arith.constant(ir.IntegerType.get_signless(32), 0))])
        with ir.InsertionPoint(if_slot.else_block):
            scf.YieldOp([arith.constant(i1, 0)])
        failed = arith.ori(if_slot.results[0], arith.cmpi(arith.CmpIPredicate.slt, status, _c64(0)))
        if_failed = scf.IfOp(failed)
        with ir.InsertionPoint(if_failed.then_block):
            callbacks.emit_callback(call, site, [state], [TensorType.from_mlir(state.type)], [])
            scf.YieldOp([])
        has = arith.andi(gave, arith.xori(failed, arith.constant(i1, 1)))
        scf.YieldOp([has])
    with ir.InsertionPoint(if_asked.else_block):
        scf.YieldOp([arith.constant(i1, 0)])
    out = ttypes.lowered_tensor_type(TensorType((), dtypes.as_dtype("bool")))  # bools are stored as bytes
    return [tensor.from_elements(out, [arith.extui(ir.RankedTensorType(out).element_type, if_asked.results[0])])]


def _take(call):
    (state,) = call.operands
    buf, base = _state(state)
    results = _load(_word(base, DATASET_RESULTS))
    free, copy = _header(buf, DATASET_FREE), _header(buf, DATASET_COPY)
    index = ir.IndexType.get()
    out, seen, pos = [], [], 0
    for r in call.results:
        t = TensorType.from_mlir(r.type)
        at = [_load(arith.addi(results, _c64(8 * (pos + j)))) for j in range(3 + t.rank)]
        allocated, aligned, offset, sizes = at[0], at[1], at[2], at[3:]
        mtype = ir.MemRefType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in t.shape],
                                  ttypes.element_type(t.dtype))
        m = memref.AllocOp(mtype, [arith.index_cast(index, s) for s, d in zip(sizes, t.shape) if d is None], []).result
        itemsize = 1 if t.dtype.is_bool else t.dtype.np.itemsize
        count = _c64(1)
        for s, d in zip(sizes, t.shape):
            count = arith.muli(count, s if d is None else _c64(d))
        source = arith.addi(aligned, arith.muli(offset, _c64(itemsize)))
        llvm.call(_ptr_type(), [_ptr(copy), _ptr(callbacks._pointer(m)), _ptr(source),
                                arith.muli(count, _c64(itemsize))], [], [])
        seen.append(_free_unless_kept(free, allocated, seen))
        out.append(bufferization.to_tensor(ttypes.lowered_tensor_type(t), m, restrict=True, writable=True))
        pos += 3 + 2 * t.rank
    llvm.store(_c64(0), _ptr(_word(base, DATASET_PENDING)))
    return out


def lower_dataset_calls(module_op):
    """Replace each func.call of a `tfn.dataset` declaration by the code above, then erase the declarations."""
    replace_declared_calls(module_op, DATASET_ATTR, _dataset_call)


def _dataset_call(call, decl):
    kind, loop, site, *ranks = ir.DenseI64ArrayAttr(decl.attributes[DATASET_ATTR])
    return _fetch(call, loop, site, ranks) if kind == DATASET_FETCH else _take(call)
