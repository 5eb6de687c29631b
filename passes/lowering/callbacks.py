"""Run-time callbacks: compiled code calling back into Python (tfn.print, tfn.py_function, string ops).

A callback site lowers to an indirect call `i64 fn(i64 site, i64 args)` through the function pointer stored in
an exported global (the runtime sets it after loading the shared object, so a cached .so needs no symbol
resolved at load time; the globals, the argument array's layout and the builtin sites: dialects/abi.py). `args`
points to an i64 array on the stack of the calling function (one `memref.alloca` per site in the entry block: a
site inside a loop reuses it):

    [n_in, n_out, phase, operand..., result...]   operand/result = [dtype code, rank, data pointer, dims...]

Phase 0 passes the operands; Python runs the site's handler and writes each result's dims (static ones are
written as their size, dynamic ones as -1, so Python can check them). When the site has results, compiled
code then allocates each result, stores its pointer and calls again with phase 1; Python copies the values
in. Sites >= 0 index the traced function's handlers (FuncGraph.callbacks); sites < 0 are the runtime's own
(BUILTIN_*): string ops. Strings are i64 handles into a table the runtime keeps per call.

A traced `func.call` to a private `func.func` carrying `tfn.site` (how tfn.py_function is traced: its operands
and results have mixed types, which an IRDL variadic group cannot) is lowered the same way.
"""
import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, llvm, memref, tensor

from tfn.dialects import dtypes, ops
from tfn.dialects import types as ttypes
from tfn.dialects.abi import (
    BUILTIN_STRING_CONCAT,
    BUILTIN_STRING_CONSTANT,
    BUILTIN_STRING_EQUAL,
    BUILTIN_STRING_NOT_EQUAL,
    CALLBACK_FN,
    CALLBACK_HEADER,
    DATASET_ATTR,
    SITE_ATTR,
    dtype_code,
)
from tfn.dialects.types import TensorType
from tfn.passes.lowering import runtime_errors
from tfn.passes.lowering.common import lowering
from tfn.passes.walk import collect, replace_declared_calls

# OpDef -> pattern, used instead of the op's own pattern when an operand or result is a string tensor
STRING_PATTERNS = {}


def string_lowering(*opdefs):
    """Register `fn(rw)` as the lowering of each OpDef given when one of its operands or results is a string."""
    return lowering(*opdefs, table=STRING_PATTERNS)


def _i64():
    return ir.IntegerType.get_signless(64)


def _c64(v):
    return arith.constant(_i64(), int(v))


def _idx(v):
    return arith.constant(ir.IndexType.get(), int(v))


def _enclosing(op, name):
    while op is not None and op.name != name:
        op = op.parent
    return op


def _ensure_fn_global(op):
    """Declare the exported, zero-initialised function-pointer global in op's module once."""
    module = _enclosing(op, "builtin.module")
    if CALLBACK_FN in ir.SymbolTable(module.operation):
        return
    i64 = _i64()
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
        memref.GlobalOp(CALLBACK_FN, ir.TypeAttr.get(ir.MemRefType.get([], i64)), sym_visibility="public",
                        initial_value=ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i64),
                                                                     ir.IntegerAttr.get(i64, 0)))


def _pointer(m):
    return arith.index_cast(_i64(), memref.extract_aligned_pointer_as_index(m))


def _call(op, site, args):
    """i64 tfn_callback_fn(site, args): an indirect call, opaque to every pass (kept in program order); a
    nonzero result (the handler failed) sets the run-time error flag."""
    fn = memref.load(memref.get_global(ir.MemRefType.get([], _i64()), CALLBACK_FN), [])
    ptr_t = ir.Type.parse("!llvm.ptr")
    callee = llvm.inttoptr(ptr_t, fn)
    status = llvm.call(_i64(), [callee, _c64(site), _pointer(args)], [], [])
    runtime_errors.report_callback(op, arith.cmpi(arith.CmpIPredicate.ne, status, _c64(0)))


def emit_callback(op, site, values, in_types, out_types):
    """At the current insertion point: call site `site` with tensor `values`; returns its result tensors."""
    _ensure_fn_global(op)
    types = list(in_types) + list(out_types)
    size = CALLBACK_HEADER + sum(3 + t.rank for t in types)
    entry = _enclosing(op, "func.func").regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry):
        args = memref.AllocaOp(ir.MemRefType.get([size], _i64()), [], []).result

    def put(pos, v):
        memref.store(_c64(v) if isinstance(v, int) else v, args, [_idx(pos)])

    put(0, len(in_types))
    put(1, len(out_types))
    put(2, 0)
    pos = CALLBACK_HEADER
    for v, t in zip(values, in_types):
        mtype = ir.MemRefType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in t.shape],
                                  ttypes.element_type(t.dtype))
        put(pos, dtype_code(t.dtype))
        put(pos + 1, t.rank)
        put(pos + 2, _pointer(bufferization.to_buffer(mtype, v, read_only=True)))
        for i in range(t.rank):
            put(pos + 3 + i, arith.index_cast(_i64(), tensor.dim(v, _idx(i))))
        pos += 3 + t.rank
    slots = []
    for t in out_types:
        put(pos, dtype_code(t.dtype))
        put(pos + 1, t.rank)
        put(pos + 2, 0)
        for i, d in enumerate(t.shape):
            put(pos + 3 + i, -1 if d is None else d)
        slots.append(pos)
        pos += 3 + t.rank
    _call(op, site, args)
    if not out_types:
        return []
    buffers = [_alloc_result(args, p, t) for p, t in zip(slots, out_types)]
    put(2, 1)
    _call(op, site, args)
    return [bufferization.to_tensor(ttypes.lowered_tensor_type(t), m, restrict=True, writable=True)
            for m, t in zip(buffers, out_types)]


def _alloc_result(args, pos, t):
    """A new buffer for a result whose dynamic dims phase 0 wrote at args[pos + 3 ...]; records its pointer."""
    dyn = [arith.index_cast(ir.IndexType.get(), memref.load(args, [_idx(pos + 3 + i)]))
           for i, d in enumerate(t.shape) if d is None]
    mtype = ir.MemRefType.get([ir.ShapedType.get_dynamic_size() if d is None else d for d in t.shape],
                              ttypes.element_type(t.dtype))
    m = memref.AllocOp(mtype, dyn, []).result
    memref.store(_pointer(m), args, [_idx(pos + 2)])
    return m


@lowering(ops.print)
def lower_print(rw):
    """tfn.print {site} -> a phase-0 callback of the site with the op's tensor (if any)."""
    return emit_callback(rw.op, rw.attrs["site"], rw.operands, rw.in_types, [])


def _string_builtin(site, *opdefs):
    """Lower string `opdefs` to a call of the runtime's builtin callback `site`."""
    def lower(rw):
        return emit_callback(rw.op, site, rw.operands, rw.in_types, rw.out_types)
    string_lowering(*opdefs)(lower)


@string_lowering(ops.constant)
def lower_string_constant(rw):
    """A string constant: its bytes and offsets as i8/i64 constants, handles made by BUILTIN_STRING_CONSTANT."""
    arr, tt = rw.attrs["value"]
    flat = [bytes(v) for v in arr.ravel()]
    data = np.frombuffer(b"".join(flat), np.int8)
    offsets = np.cumsum([0] + [len(v) for v in flat], dtype=np.int64)
    values = [arith.constant(ir.RankedTensorType.get([a.size], ir.IntegerType.get_signless(8 * a.itemsize)),
                             ir.DenseElementsAttr.get(a)) for a in (data, offsets)]
    in_types = [TensorType(data.shape, dtypes.int8), TensorType(offsets.shape, dtypes.int64)]
    handles = emit_callback(rw.op, BUILTIN_STRING_CONSTANT, values, in_types, [TensorType((len(flat),), tt.dtype)])
    shape = arith.constant(ir.RankedTensorType.get([tt.rank], _i64()),
                           ir.DenseElementsAttr.get(np.array(tt.shape, np.int64).reshape(tt.rank)))
    return [tensor.reshape(ttypes.lowered_tensor_type(tt), handles[0], shape)]


_string_builtin(BUILTIN_STRING_CONCAT, ops.add)
_string_builtin(BUILTIN_STRING_EQUAL, ops.equal)
_string_builtin(BUILTIN_STRING_NOT_EQUAL, ops.not_equal)


def has_strings(*type_lists):
    return any(t.dtype.is_string for types in type_lists for t in types)


def lower_site_calls(module_op):
    """Replace each func.call of a `tfn.site` declaration by its callback, then erase the declarations."""
    replace_declared_calls(module_op, SITE_ATTR, _site_call)


def _site_call(call, decl):
    site = ir.IntegerAttr(decl.attributes[SITE_ATTR]).value
    in_types = [TensorType.from_mlir(v.type) for v in call.operands]
    out_types = [TensorType.from_mlir(r.type) for r in call.results]
    return emit_callback(call, site, list(call.operands), in_types, out_types)


def callback_ops(module_op):
    """[(op, what it is)] of the traced tfn module's ops whose compiled code calls back into the Python runtime
    (a library loaded without Python cannot run them): tfn.print, py_function calls, ops on string tensors."""
    decls = collect(module_op, lambda o: o.name == "func.func")
    sites = {fn.attributes["sym_name"].value: "tfn.py_function" for fn in decls if SITE_ATTR in fn.attributes}
    sites.update({fn.attributes["sym_name"].value: "a loop over a dataset argument" for fn in decls
                  if DATASET_ATTR in fn.attributes})
    found = []
    for op in collect(module_op, lambda o: o.name.startswith("tfn.") or o.name == "func.call"):
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in sites:
                found.append((op, sites[callee]))
        elif op.name == ops.print.full_name:
            found.append((op, "tfn.print"))
        elif has_strings([TensorType.from_mlir(v.type) for v in [*op.operands, *op.results]
                          if isinstance(v.type, ir.RankedTensorType)]):
            found.append((op, f"{op.name} on string tensors"))
    return found
