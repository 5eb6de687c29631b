"""tfn-gpu-emulate: the mapped `gpu.launch` kernels as CPU loop nests, so the CPU path runs (and tests) them.

Runs on the IR tfn-gpu-device-buffers leaves (before outlining; pipeline `tfn-gpu-emulation`, passes/gpu.py
pipeline_for("emulate")), followed by the CPU lowering. Each `gpu.launch` becomes, in place:

    for block z, y, x (the grid):            workgroup attributions: one buffer, reused by every block
      for thread z, y, x: segment 0          ops up to the first gpu.barrier / gpu.shuffle
      for thread z, y, x: segment 1          ...
      scf.for k (a loop holding a barrier, its bounds uniform): the segments of its body, each a thread loop nest

- `gpu.barrier` ends a segment: every thread finishes the code before it before any starts the code after it.
- A value defined in one segment and used in another lives in per-thread storage (a buffer of one element per
  thread of the block, indexed by the linear thread id): stored where it is defined, loaded where it is used. Views
  (subviews, reshapes) are recomputed instead.
- `gpu.shuffle` starts a segment: its operand is in per-thread storage by then, and the shuffle reads the partner
  lane's element (xor / up / down / idx, lanes grouped in warps of `warp-size`; out-of-range partners give the
  thread's own value and `valid = false`, as on the device).
- Thread ids (`gpu.thread_id`, the launch's thread arguments) become each segment's loop variables, block ids the
  block loop's, grid and block sizes the launch's operands; a private attribution becomes one element per thread.
- device buffers become host buffers: gpu.alloc / gpu.dealloc / gpu.memcpy into memref.alloc / dealloc / copy.

- a loop holding a barrier that carries per-thread values (iter_args) keeps them in per-thread storage: stored
  before the loop and at the end of each iteration, loaded at its start and after it.

A barrier or shuffle under control flow that depends on the thread (scf.if, a loop with thread-dependent bounds)
cannot be emulated this way: the pass fails naming the op.
"""
from mlir import ir

from tfn.passes.options import Option, positive
from tfn.passes.registry import PassFailure, register
from tfn.passes.target import gpu_target
from tfn.passes.walk import collect, contains

WARP_SIZE = Option("warp-size", "threads of one warp: how gpu.shuffle groups lanes (default: the GPU target's)",
                   lambda t: gpu_target().warp_size, positive)
SYNC = ("gpu.barrier", "gpu.shuffle")
VIEWS = ("memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast", "memref.reinterpret_cast")
_DIMS = ("x", "y", "z")


class EmulationError(Exception):
    def __init__(self, op, message):
        super().__init__(message)
        self.op = op


def _index():
    return ir.IndexType.get()


def _const(ip, value, loc):
    return ir.Operation.create("arith.constant", results=[_index()],
                               attributes={"value": ir.IntegerAttr.get(_index(), value)}, loc=loc, ip=ip).result


def _binop(name, ip, a, b, loc, result=None):
    return ir.Operation.create(name, results=[result or a.type], operands=[a, b], loc=loc, ip=ip).result


def _for(ip, lb, ub, step, loc):
    """An scf.for with no iter_args at ip; returns (op, body block) with the body's scf.yield in place."""
    op = ir.Operation.create("scf.for", results=[], operands=[lb, ub, step], regions=1, loc=loc, ip=ip)
    block = op.regions[0].blocks.append(_index(), arg_locs=[loc])
    ir.Operation.create("scf.yield", results=[], operands=[], loc=loc, ip=ir.InsertionPoint(block))
    return op, block


def _contains_sync(op):
    return contains(op, lambda o: o.name in SYNC)


def _attr_int(op, name, default=0):
    return ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else default


class _Launch:
    """The emulation of one gpu.launch."""

    def __init__(self, launch, warp):
        self.launch, self.warp, self.loc = launch, warp, launch.location
        seg = list(ir.DenseI32ArrayAttr(launch.attributes["operandSegmentSizes"]))
        if seg[0] or any(seg[7:10]):
            raise EmulationError(launch, "an async or clustered gpu.launch")
        self.grid = list(launch.operands[seg[0]:seg[0] + 3])
        self.block = list(launch.operands[seg[0] + 3:seg[0] + 6])
        self.body = launch.regions[0].blocks[0]
        self.args = list(self.body.arguments)
        self.n_wg = _attr_int(launch, "workgroup_attributions")
        self.segments = []       # per segment: (innermost thread loop op, [tz, ty, tx] IVs, linear id, body block)
        self.by_loop = {}        # innermost thread loop operation -> segment index
        self.storage = {}        # value -> per-thread storage buffer
        self.cleanup = []        # buffers to free after the block loops
        self.private = []        # (private attribution, its per-thread buffer, its type)
        self.views = {}          # (per-thread buffer, segment) -> the segment's thread's view of it

    # -- structure --
    def run(self):
        pre = ir.InsertionPoint(self.launch)
        loc = self.loc
        self.c0, self.c1 = _const(pre, 0, loc), _const(pre, 1, loc)
        sx, sy, sz = self.block
        self.threads = _binop("arith.muli", pre, _binop("arith.muli", pre, sx, sy, loc), sz, loc)
        self.alloc_ip = pre
        # workgroup and private attributions
        attributions = self.args[12:]
        for i, arg in enumerate(attributions):
            t = ir.MemRefType(arg.type)
            if i < self.n_wg:
                buf = self._alloc(ir.MemRefType.get(list(t.shape), t.element_type), [])
                arg.replace_all_uses_with(buf)
            else:
                self._private(arg, t)
        # the block loops
        ip = pre
        block_ivs = []
        for d in (2, 1, 0):
            op, blk = _for(ip, self.c0, self.grid[d], self.c1, loc)
            if d == 2:
                self.alloc_ip = ir.InsertionPoint(op)  # buffers made later go before the block loops
            ip = ir.InsertionPoint(list(blk.operations)[-1])
            block_ivs.append(blk.arguments[0])
        bz, by, bx = block_ivs
        for value, repl in zip(self.args[0:3], (bx, by, bz)):
            value.replace_all_uses_with(repl)
        for value, repl in zip(self.args[6:12], self.grid + self.block):
            value.replace_all_uses_with(repl)
        for op in collect(self.launch, lambda o: o.name in ("gpu.block_id", "gpu.block_dim", "gpu.grid_dim")):
            d = _DIMS.index(str(op.attributes["dimension"]).split()[-1].rstrip(">"))
            repl = {"gpu.block_id": (bx, by, bz), "gpu.block_dim": self.block, "gpu.grid_dim": self.grid}[op.name][d]
            op.results[0].replace_all_uses_with(repl)
            op.erase()
        self.tid_ops = collect(self.launch, lambda o: o.name == "gpu.thread_id")
        self.shuffle_ops = collect(self.launch, lambda o: o.name == "gpu.shuffle")
        barriers = collect(self.launch, lambda o: o.name == "gpu.barrier")
        for op in collect(self.launch, lambda o: o.name == "gpu.lane_id"):
            raise EmulationError(op, "gpu.lane_id")
        for op in reversed(collect(self.launch, lambda o: o.name == "scf.for" and o.results and _contains_sync(o))):
            self._carry_through_memory(op)
        ops = [o for o in self.body.operations]
        self._level(ops[:-1], ip)  # without gpu.terminator
        self._thread_ids()
        self._shuffles()
        self._crossing()
        for op in barriers:
            op.erase()
        self.launch.erase()
        for buf in self.cleanup:
            ir.Operation.create("memref.dealloc", results=[], operands=[buf], loc=loc, ip=self.end_ip)

    def _alloc(self, memref_type, dyn):
        buf = ir.Operation.create("memref.alloc", results=[memref_type], operands=dyn,
                                  attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(dyn), 0])},
                                  loc=self.loc, ip=self.alloc_ip).result
        self.cleanup.append(buf)
        return buf

    def _level(self, ops, ip):
        """Emit `ops` (one nesting level of the kernel) at ip: thread loop nests between the sync points."""
        segment = []
        for op in ops:
            if op.name == "gpu.barrier":
                self._segment(segment, ip)
                segment = []
            elif op.name == "gpu.shuffle":
                self._segment(segment, ip)
                segment = [op]
            elif _contains_sync(op):
                self._segment(segment, ip)
                segment = []
                if op.name != "scf.for" or op.results:
                    raise EmulationError(op, f"a gpu.barrier or gpu.shuffle inside {op.name}"
                                         + (" with results" if op.results else ""))
                op.move_before(ip.ref_operation)  # the loop runs once per block, around its body's thread loops
                body = op.regions[0].blocks[0]
                inner = list(body.operations)
                self._level(inner[:-1], ir.InsertionPoint(inner[-1]))
            else:
                segment.append(op)
        self._segment(segment, ip)

    def _carry_through_memory(self, loop):
        """A loop holding a barrier whose iter_args are per-thread values: they go through per-thread storage (stored
        before the loop and at the end of each iteration, loaded at its start and after it), leaving a loop without
        results that _level can split."""
        loc, ip = self.loc, ir.InsertionPoint(loop)
        tx, ty, tz = self.args[3:6]
        sx, sy = self.block[0], self.block[1]
        lin = _binop("arith.addi", ip, _binop("arith.muli", ip, _binop("arith.addi", ip, _binop(
            "arith.muli", ip, tz, sy, loc), ty, loc), sx, loc), tx, loc)
        lb, ub, step, *inits = loop.operands
        old_body = loop.regions[0].blocks[0]
        yielded = list(list(old_body.operations)[-1].operands)
        buffers = []
        for init in inits:
            elem = _stored_type(init.type)
            buf = self._alloc(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], elem), [self.threads])
            self._store(ip, init, buf, lin)
            buffers.append(buf)
        new, body = _for(ip, lb, ub, step, loc)
        head = ir.InsertionPoint.at_block_begin(body)
        old_body.arguments[0].replace_all_uses_with(body.arguments[0])
        for arg, buf in zip(list(old_body.arguments)[1:], buffers):
            arg.replace_all_uses_with(self._load(head, buf, lin, arg.type))
        end = list(body.operations)[-1]
        for op in list(old_body.operations)[:-1]:
            op.move_before(end)
        tail = ir.InsertionPoint(end)
        for value, buf in zip(yielded, buffers):
            self._store(tail, value, buf, lin)
        after = _after(new)
        for result, buf in zip(loop.results, buffers):
            result.replace_all_uses_with(self._load(after, buf, lin, result.type))
        loop.erase()

    def _store(self, ip, value, buf, at):
        elem = ir.MemRefType(buf.type).element_type
        if elem != value.type:  # i1 kept as i8
            value = ir.Operation.create("arith.extui", results=[elem], operands=[value], loc=self.loc, ip=ip).result
        ir.Operation.create("memref.store", results=[], operands=[value, buf, at], loc=self.loc, ip=ip)

    def _load(self, ip, buf, at, value_type):
        elem = ir.MemRefType(buf.type).element_type
        got = ir.Operation.create("memref.load", results=[elem], operands=[buf, at], loc=self.loc, ip=ip).result
        if elem != value_type:
            got = ir.Operation.create("arith.trunci", results=[value_type], operands=[got], loc=self.loc,
                                      ip=ip).result
        return got

    def _segment(self, ops, ip):
        if not ops or all(o.name == "gpu.barrier" for o in ops):
            return
        loc = self.loc
        ivs = []
        for d in (2, 1, 0):
            op, blk = _for(ip, self.c0, self.block[d], self.c1, loc)
            ip = ir.InsertionPoint(list(blk.operations)[-1])
            ivs.append(blk.arguments[0])
        tz, ty, tx = ivs
        head = ir.InsertionPoint.at_block_begin(blk)
        sx, sy = self.block[0], self.block[1]
        lin = _binop("arith.addi", head, _binop("arith.muli", head,
                     _binop("arith.addi", head, _binop("arith.muli", head, tz, sy, loc), ty, loc), sx, loc), tx, loc)
        for o in ops:
            o.move_before(list(blk.operations)[-1])
        self.by_loop[op] = len(self.segments)
        self.segments.append((op, (tx, ty, tz), lin, blk))

    def _segment_of(self, op):
        """The segment index holding op, or None when it runs at block level (a sync loop's bounds)."""
        while op is not None:
            parent = op.parent
            if parent is None:
                return None
            if parent in self.by_loop:
                return self.by_loop[parent]
            op = parent
        return None

    # -- values --
    def _thread_ids(self):
        values = list(zip(self.args[3:6], range(3)))
        for op in self.tid_ops:
            d = _DIMS.index(str(op.attributes["dimension"]).split()[-1].rstrip(">"))
            values.append((op.results[0], d))
        for value, d in values:
            for use in list(value.uses):
                s = self._segment_of(use.owner)
                if s is None:
                    raise EmulationError(use.owner, "a thread id used outside the threads' code (a barrier loop bound)")
                use.owner.operands[use.operand_number] = self.segments[s][1][d]
        for op in self.tid_ops:
            op.erase()

    def _store_of(self, value):
        """The per-thread storage of value, stored right after its definition (in its segment)."""
        if value in self.storage:
            return self.storage[value]
        owner = value.owner
        s = self._segment_of(owner)
        if s is None:
            raise EmulationError(owner, "a value computed outside the threads' code")
        elem = _stored_type(value.type)
        buf = self._alloc(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], elem), [self.threads])
        ip = _after(owner)
        stored = value
        if elem != value.type:  # i1: memory holds whole bytes
            stored = ir.Operation.create("arith.extui", results=[elem], operands=[value], loc=self.loc, ip=ip).result
        ir.Operation.create("memref.store", results=[], operands=[stored, buf, self.segments[s][2]], loc=self.loc,
                            ip=ip)
        self.storage[value] = buf
        return buf

    def _private(self, arg, t):
        dyn = ir.ShapedType.get_dynamic_size()
        buf = self._alloc(ir.MemRefType.get([dyn] + list(t.shape), t.element_type), [self.threads])
        self.private.append((arg, buf, t))

    def _shuffles(self):
        loc = self.loc
        for op in self.shuffle_ops:
            value, offset, width = op.operands
            s = self._segment_of(op)
            ip = ir.InsertionPoint(op)
            if not isinstance(value, ir.OpResult) or self._segment_of(value.owner) is None:
                raise EmulationError(op, "a gpu.shuffle of a value not computed by the threads")
            buf = self._store_of(value)
            lin = self.segments[s][2]
            w = _const(ip, self.warp, loc)
            lane = _binop("arith.remui", ip, lin, w, loc)
            off, wid = (ir.Operation.create("arith.index_cast", results=[_index()], operands=[v], loc=loc,
                                            ip=ip).result for v in (offset, width))
            mode = str(op.attributes["mode"]).split()[-1].rstrip(">")
            if mode == "xor":
                src = _binop("arith.xori", ip, lane, off, loc)
            elif mode == "down":
                src = _binop("arith.addi", ip, lane, off, loc)
            elif mode == "up":
                src = _binop("arith.subi", ip, lane, off, loc)  # wraps to a huge index when negative: invalid
            else:
                src = off
            valid = _ult(ip, src, wid, loc)
            base = _binop("arith.subi", ip, lin, lane, loc)
            src_lin = _binop("arith.addi", ip, base, src, loc)
            valid = _binop("arith.andi", ip, valid, _ult(ip, src_lin, self.threads, loc), loc)
            at = ir.Operation.create("arith.select", results=[_index()], operands=[valid, src_lin, lin], loc=loc,
                                     ip=ip).result
            got = ir.Operation.create("memref.load", results=[value.type], operands=[buf, at], loc=loc, ip=ip).result
            op.results[0].replace_all_uses_with(got)
            op.results[1].replace_all_uses_with(valid)
            op.erase()

    def _crossing(self):
        """Values used in another segment than their own: views recomputed there, scalars through storage."""
        for arg, buf, t in self.private:
            for use in list(arg.uses):
                s = self._segment_of(use.owner)
                if s is None:
                    raise EmulationError(use.owner, "a private buffer used outside the threads' code")
                view = self._view_of(buf, t, s)
                use.owner.operands[use.operand_number] = view
        work = []
        for s, (_, _, _, blk) in enumerate(self.segments):
            work += [(op, s) for op in blk.operations]
        loaded = {}
        while work:
            op, s = work.pop(0)
            for inner in collect(op, lambda o: True):
                for i, value in enumerate(list(inner.operands)):
                    if not isinstance(value, ir.OpResult):
                        continue
                    d = self._segment_of(value.owner)
                    if d is None or d == s:
                        continue
                    key = (value, s)
                    if key not in loaded:
                        if value.owner.name in VIEWS or value.owner.name == "arith.constant":
                            clone = value.owner.clone(ip=_after(self.segments[s][2].owner))
                            loaded[key] = clone.results[list(value.owner.results).index(value)] \
                                if len(value.owner.results) > 1 else clone.results[0]
                            work.append((clone, s))
                        else:
                            if isinstance(value.type, (ir.MemRefType, ir.ShapedType)):
                                raise EmulationError(value.owner, f"a {value.type} value used across a barrier")
                            buf = self._store_of(value)
                            ip = _after(self.segments[s][2].owner)
                            elem = _stored_type(value.type)
                            got = ir.Operation.create("memref.load", results=[elem],
                                                      operands=[buf, self.segments[s][2]], loc=self.loc, ip=ip).result
                            if elem != value.type:
                                got = ir.Operation.create("arith.trunci", results=[value.type], operands=[got],
                                                          loc=self.loc, ip=_after(got.owner)).result
                            loaded[key] = got
                    inner.operands[i] = loaded[key]

    def _view_of(self, buf, t, s):
        key = (buf, s)
        if key not in self.views:
            dyn = ir.ShapedType.get_dynamic_size()
            shape = list(t.shape)
            strides, acc = [], 1
            for size in reversed(shape):
                strides.insert(0, acc)
                acc *= size
            layout = ir.StridedLayoutAttr.get(dyn, strides)
            view_t = ir.MemRefType.get(shape, t.element_type, layout)
            lin = self.segments[s][2]
            self.views[key] = ir.Operation.create(
                "memref.subview", results=[view_t], operands=[buf, lin],
                attributes={"static_offsets": ir.DenseI64ArrayAttr.get([dyn] + [0] * len(shape)),
                            "static_sizes": ir.DenseI64ArrayAttr.get([1] + shape),
                            "static_strides": ir.DenseI64ArrayAttr.get([1] * (len(shape) + 1)),
                            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0])},
                loc=self.loc, ip=_after(lin.owner)).result
        return self.views[key]


def _ult(ip, a, b, loc):
    """a < b, unsigned (arith.cmpi ult)."""
    return ir.Operation.create("arith.cmpi", results=[ir.IntegerType.get_signless(1)], operands=[a, b],
                               attributes={"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 6)},
                               loc=loc, ip=ip).result


def _stored_type(t):
    """The element type per-thread storage keeps a value of type t in (i1 as i8)."""
    if isinstance(t, ir.IntegerType) and t.width == 1:
        return ir.IntegerType.get_signless(8)
    return t


def _after(op):
    """An insertion point just after op."""
    op = op.operation if hasattr(op, "operation") else op
    nxt = op.next_operation if hasattr(op, "next_operation") else None
    if nxt is None:
        ops = list(op.block.operations)
        idx = [i for i, o in enumerate(ops) if o.operation == op][0]
        nxt = ops[idx + 1] if idx + 1 < len(ops) else None
    return ir.InsertionPoint(nxt) if nxt is not None else ir.InsertionPoint(op.block)


def _device_to_host(module_op):
    for op in collect(module_op, lambda o: o.name in ("gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.wait")):
        ip, loc = ir.InsertionPoint(op), op.location
        if op.name == "gpu.alloc":
            if op.results[0].type != ir.MemRefType(op.results[0].type) or len(op.results) != 1:
                raise EmulationError(op, "an async gpu.alloc")
            dyn = list(op.operands)
            new = ir.Operation.create("memref.alloc", results=[op.results[0].type], operands=dyn,
                                      attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(dyn), 0]),
                                                  "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)},
                                      loc=loc, ip=ip)
            op.results[0].replace_all_uses_with(new.results[0])
        elif op.name == "gpu.dealloc":
            ir.Operation.create("memref.dealloc", results=[], operands=[op.operands[-1]], loc=loc, ip=ip)
        elif op.name == "gpu.memcpy":
            dst, src = op.operands[-2], op.operands[-1]
            ir.Operation.create("memref.copy", results=[], operands=[src, dst], loc=loc, ip=ip)
        else:
            raise EmulationError(op, "an async gpu op")
        op.erase()


@register("tfn-gpu-emulate", "Emulate mapped gpu.launch kernels on the CPU: blocks and threads as loops, barriers "
          "split the thread loops, shuffles read per-thread storage", options=[WARP_SIZE])
def gpu_emulate(module_op, warp_size):
    try:
        for launch in collect(module_op, lambda o: o.name == "gpu.launch"):
            with launch.location:
                emu = _Launch(launch, warp_size)
                emu.end_ip = _after(launch)
                emu.run()
        with module_op.location:
            _device_to_host(module_op)
    except EmulationError as e:
        e.op.location.emit_error(f"tfn-gpu-emulate: cannot emulate {e}")
        raise PassFailure() from None
