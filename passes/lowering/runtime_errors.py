"""The run-time error channel: how compiled code reports a bad value (an index out of range) without trapping.

A lowering that can meet a bad run-time value never reads out of bounds or divides by zero: it computes a safe
value instead and calls `report(rw, cond, details)`, which, when `cond` holds and no error was recorded yet in
this call, stores the op's error code and up to DETAIL_LEN i64 details (the bad index, the bound, ...) in the
exported globals of the error channel (their layout: dialects/abi.py). After each call the runtime reads the flag,
resets it to 0 and raises `InvalidArgumentError` (runtime/executable.py) with the message `describe` makes.

Error codes are positions: the op with code k is the k-th op (1-based, pre-order walk) among the module's tfn
ops registered with `may_fail`. tfn-to-linalg numbers the ops it receives — the traced
module unchanged, as only tfn-verify runs before it — and `describe` computes the same list from the traced
module the runtime compiled (which carries the user's locations; the .so, cached by the location-free IR text,
does not) to name the op and the user's line in the message. A pass that removes or reorders tfn ops before
tfn-to-linalg must keep this numbering: tfn-fold-constants writes each code on its op first (`number_sites`).

The flag and details are per calling thread (tfn-hoist-error-slots, tfn-thread-local-errors): calls of one compiled
function from several threads at once each see their own errors.
The artifact cache is keyed by the tfn IR, not by the lowering code: a changed detail layout needs a fresh cache.
"""
import os

from mlir import ir
from mlir.dialects import arith, memref, scf
from mlir.dialects import func as func_d

from tfn.dialects import optable, types
from tfn.dialects.abi import ALLOC_FAILED, CALLBACK_FAILED, DETAIL_LEN, ERROR_DETAIL, ERROR_FLAG
from tfn.dialects.errors import OpError, ResourceExhaustedError
from tfn.dialects.locations import file_location, with_excerpt
from tfn.passes.walk import collect, tfn_ops

# OpDef -> format(details: list[int], op: ir.Operation) -> message, or (OpError class, message)
FORMATTERS = {}
# The code a pass that removes tfn ops before tfn-to-linalg (tfn-fold-constants) wrote on each failing op first,
# so that the codes stay those `describe` computes from the traced module.
CODE_ATTR = "tfn.error_code"
_SYSCONF = "sysconf"  # libc's long sysconf(int): how big the machine's memory is, asked at run time


def may_fail(opdef, formatter):
    """Register an op (an OpDef) whose lowering may report run-time errors; formatter(details, op) -> message
    (raised as InvalidArgumentError) or (OpError subclass, message)."""
    optable.require([opdef], "a run-time error formatter")
    FORMATTERS[opdef] = formatter


def site_codes(ops):
    """The error code of each op in `ops` (program order): its 1-based position among the failing ops, or 0; a
    code already written on an op (CODE_ATTR, by number_sites) wins."""
    codes, n = [], 0
    for op in ops:
        if optable.lookup(op.name) in FORMATTERS:
            n += 1
            attrs = op.attributes
            codes.append(ir.IntegerAttr(attrs[CODE_ATTR]).value if CODE_ATTR in attrs else n)
        else:
            codes.append(0)
    return codes


def number_sites(ops):
    """Write each failing op's code (site_codes) on it as CODE_ATTR: for a pass about to remove some of them."""
    i64 = ir.IntegerType.get_signless(64)
    for op, code in zip(ops, site_codes(ops)):
        if code:
            op.attributes[CODE_ATTR] = ir.IntegerAttr.get(i64, code)


def _module_of(op):
    while op is not None and op.name != "builtin.module":
        op = op.parent
    return op


def _ensure_globals(op):
    """Declare the flag and detail globals in op's module (public, mutable, zero-initialised) once."""
    module = _module_of(op)
    table = ir.SymbolTable(module.operation)
    if ERROR_FLAG in table:
        return
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    flag_t = ir.MemRefType.get([], i32)
    detail_t = ir.MemRefType.get([DETAIL_LEN], i64)
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
        memref.GlobalOp(ERROR_FLAG, ir.TypeAttr.get(flag_t), sym_visibility="public",
                        initial_value=ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i32),
                                                                     ir.IntegerAttr.get(i32, 0)))
        memref.GlobalOp(ERROR_DETAIL, ir.TypeAttr.get(detail_t), sym_visibility="public",
                        initial_value=ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([DETAIL_LEN], i64),
                                                                     ir.IntegerAttr.get(i64, 0)))


def _ensure_sysconf(op):
    module = _module_of(op)
    if _SYSCONF in ir.SymbolTable(module.operation):
        return
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
        func_d.FuncOp(_SYSCONF, ir.FunctionType.get([i32], [i64]), visibility="private")


def exceeds_memory(op, count, itemsize):
    """Emit: an i1 that holds when `count` (an index) elements of `itemsize` bytes are more than the machine's
    physical memory, so that malloc would fail; the memory is asked (sysconf) only for counts past 1 GiB."""
    _ensure_sysconf(op)
    i1, i32, i64 = (ir.IntegerType.get_signless(w) for w in (1, 32, 64))
    n = arith.index_cast(i64, count)
    big = arith.cmpi(arith.CmpIPredicate.sgt, n, arith.constant(i64, (1 << 30) // itemsize))
    if_big = scf.IfOp(big, [i1], has_else=True)
    with ir.InsertionPoint(if_big.then_block):
        pages, page = (func_d.CallOp([i64], ir.FlatSymbolRefAttr.get(_SYSCONF),
                                     [arith.constant(i32, os.sysconf_names[name])]).result
                       for name in ("SC_PHYS_PAGES", "SC_PAGE_SIZE"))
        limit = arith.divsi(arith.muli(pages, page), arith.constant(i64, itemsize))
        scf.YieldOp([arith.cmpi(arith.CmpIPredicate.sgt, n, limit)])
    with ir.InsertionPoint(if_big.else_block):
        scf.YieldOp([arith.constant(i1, 0)])
    return if_big.results[0]


def _as_i64(v):
    i64 = ir.IntegerType.get_signless(64)
    if isinstance(v, int):
        return arith.constant(i64, v)
    if isinstance(v.type, ir.IndexType):
        return arith.index_cast(i64, v)
    width = ir.IntegerType(v.type).width
    if width < 64:
        return arith.extsi(i64, v)
    return v


def report(rw, cond, details=()):
    """Emit: if `cond` (i1) and no error is recorded yet, record rw's op code and `details` (ints/Values)."""
    code = getattr(rw, "error_code", 0)
    if not code:
        raise ValueError(f"{rw.name} reports run-time errors but has no error code (register it with may_fail)")
    _record(rw.op, cond, code, details)


def report_callback(op, failed):
    """Emit at the current insertion point: if `failed` (i1) and no error is recorded yet, record
    CALLBACK_FAILED (so loops stop: lowering/control_flow.py stop_loops_on_error)."""
    _record(op, failed, CALLBACK_FAILED, ())


def report_alloc_failure(op, failed, details):
    """Emit at the current insertion point: if `failed` (i1) and no error is recorded yet, record ALLOC_FAILED
    with `details` (passes/tfn_check_allocs.py)."""
    _record(op, failed, ALLOC_FAILED, details)


def _record(op, cond, code, details):
    _ensure_globals(op)
    i32 = ir.IntegerType.get_signless(32)
    if_bad = scf.IfOp(cond)
    with ir.InsertionPoint(if_bad.then_block):
        flag = memref.get_global(ir.MemRefType.get([], i32), ERROR_FLAG)
        first = arith.cmpi(arith.CmpIPredicate.eq, memref.load(flag, []), arith.constant(i32, 0))
        if_first = scf.IfOp(first)
        with ir.InsertionPoint(if_first.then_block):
            memref.store(arith.constant(i32, code), flag, [])
            detail = memref.get_global(ir.MemRefType.get([DETAIL_LEN], ir.IntegerType.get_signless(64)), ERROR_DETAIL)
            for i, v in enumerate(list(details)[:DETAIL_LEN]):
                memref.store(_as_i64(v), detail, [arith.constant(ir.IndexType.get(), i)])
            scf.YieldOp([])
        scf.YieldOp([])


def error_sites(module_op):
    """The traced module's ops that may report a run-time error, in code order (code k: the k-th)."""
    # start-up cost: loads every lowering pattern, which registers its formatter; a cached .so never needs them.
    from tfn.passes import tfn_to_linalg  # noqa: F401

    return [op for op in tfn_ops(module_op) if optable.lookup(op.name) in FORMATTERS]


def describe(module_op, code, details, function_name="", lower=None):
    """The message of error `code` raised by the compiled form of `module_op` (the traced tfn module), ending
    with the excerpt of the user's code of the failing op; an OpError to raise instead of InvalidArgumentError
    when the op's formatter names its class. lower(stage) -> the module lowered to a stage as it was compiled (an
    ir.Module, to name the op of a failed allocation), or None."""
    if code == CALLBACK_FAILED:
        return f"a Python callback of compiled function '{function_name}' failed outside of a call"
    if code == ALLOC_FAILED:
        return _describe_alloc(module_op, details, function_name, lower)
    sites = error_sites(module_op)
    if not 1 <= code <= len(sites):
        return f"compiled function '{function_name}' reported an unknown run-time error (code {code})"
    return describe_op(sites[code - 1], details, function_name)


def describe_op(op, details, function_name=""):
    """The message (or OpError) of a run-time error that failing `op` of a traced module reported with `details`."""
    message = FORMATTERS[optable.lookup(op.name)](list(details), op)
    return _with_op(message, op, function_name)


def _with_op(message, op, function_name):
    """The message (or (OpError class, message)) followed by TF's node line for tfn op `op` and the excerpt."""
    cls, message = message if isinstance(message, tuple) else (None, message)
    found = file_location(op.location)
    where = f"{found[0]}:{found[1]}" if found else None
    node = f"{{{{node {optable.lookup(op.name).tf_name}}}}}" + (f" defined at {where}" if where else "")
    text = with_excerpt(f"{message}\n\t [[{node}]] [Op:{function_name}]", found)
    return cls(text) if cls is not None and issubclass(cls, OpError) else text


def _file_locations(loc, found):
    """Every `(file, line, col)` inside a location (a fused location, of a fused kernel, holds its ops')."""
    if loc.is_a_file():
        found.append((loc.filename, loc.start_line, loc.start_col))
    elif loc.is_a_name():
        _file_locations(loc.child_loc, found)
    elif loc.is_a_callsite():
        _file_locations(loc.callee, found)
    elif loc.is_a_fused():
        for child in loc.locations:
            _file_locations(child, found)
    return found


def _allocating_op(module_op, site, dims):
    """The traced module's tfn op whose result allocation `site` (a memref.alloc of stage `bufferized`, or a malloc
    call of stage `llvm`) most likely holds, or None: among the ops at the site's locations, one whose result has
    its rank, element width and the known sizes `dims` (a memref.alloc), then one whose result leaves that group
    of ops (a fused chain allocates its last result, not the inputs it read: `a[:, None] * b` is the Mul, not the
    StridedSlice), then the last."""
    if site is None:
        return None
    wheres = _file_locations(site.location, [])
    ops = [t for t in tfn_ops(module_op) if file_location(t.location) in wheres]
    if not ops:
        return None
    shape = ir.MemRefType(site.result.type) if site.name == "memref.alloc" else None

    def fits(t):
        if shape is None or not t.results or not isinstance(t.results[0].type, ir.RankedTensorType):
            return False
        tensor = ir.RankedTensorType(t.results[0].type)
        if tensor.rank != shape.rank or _width(tensor.element_type) != _width(shape.element_type):
            return False
        return all(ir.ShapedType.is_dynamic_size(s) or d is None or s == d
                   for s, d in zip(tensor.shape, list(dims or []) + [None] * tensor.rank))

    def leaves(t):
        return any(not any(use.owner == o.operation for o in ops) for r in t.results for use in r.uses)

    return max(reversed(ops), key=lambda t: (fits(t), leaves(t)))


def _width(element_type):
    """Bytes of an element as a buffer holds it (an i1 tensor is a buffer of bytes: tfn-widen-bool-memrefs)."""
    width = getattr(element_type, "width", None)
    if width is None:
        for cls in (ir.IntegerType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type):
            if isinstance(element_type, cls):
                width = cls(element_type).width
                break
    if isinstance(element_type, ir.IndexType):
        width = 64
    return max(((width or 64) + 7) // 8, 1)


def _describe_alloc(module_op, details, function_name, lower):
    """ResourceExhaustedError for ALLOC_FAILED: details [ordinal, dims...] (tfn-check-allocs: the k-th memref.alloc
    of stage `bufferized`, its shape) or [-1, bytes, k] (tfn-return-on-failed-alloc: the k-th malloc it guards in
    stage `llvm` returned null). The tfn op at the allocation's location names the node and the user's line."""
    # start-up cost: the pass that numbers the mallocs (loaded on this error path only).
    from tfn.passes.tfn_return_on_failed_alloc import guarded_calls

    details = list(details)
    by_malloc = not details or details[0] < 0
    stage, ordinal = ("llvm", details[2] if len(details) > 2 else -1) if by_malloc else ("bufferized", details[0])
    lowered = lower(stage) if lower is not None and ordinal >= 0 else None  # (kept alive while its ops are read)
    if lowered is None:
        sites = []
    elif by_malloc:
        sites = guarded_calls(lowered.operation)
    else:
        sites = collect(lowered.operation, lambda op: op.name == "memref.alloc")
    site = sites[ordinal] if 0 <= ordinal < len(sites) else None
    op = _allocating_op(module_op, site, None if by_malloc else details[1:])
    tt = types.TensorType.from_mlir(op.results[0].type) if op is not None and op.results else None
    if by_malloc:
        size = details[1] if len(details) > 1 else "?"
        message = f"OOM when allocating {size} bytes on /device:CPU:0 by allocator cpu"
    else:
        rank = ir.MemRefType(site.result.type).rank if site is not None else len(details) - 1
        dims = [d if i < DETAIL_LEN - 1 else None for i, d in enumerate((details[1:] + [None] * rank)[:rank])]
        message = types.oom_message(dims, tt.dtype) if tt is not None else \
            f"OOM when allocating tensor with shape[{','.join('?' if d is None else str(d) for d in dims)}] " \
            "on /device:CPU:0 by allocator cpu"
    if op is None:
        return ResourceExhaustedError(f"{message} [Op:{function_name}]")
    return _with_op((ResourceExhaustedError, message), op, function_name)
