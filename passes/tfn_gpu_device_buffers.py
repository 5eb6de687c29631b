"""tfn-gpu-device-buffers: the host side of GPU functions works on device memory, copies in and out explicitly.

In every func.func holding a `gpu.launch` (after tfn-gpu-map): each memref argument gets a device buffer
(`gpu.alloc`) filled by `gpu.memcpy` at entry and freed (`gpu.dealloc`) before each return; `memref.alloc` /
`memref.dealloc` outside the kernels become `gpu.alloc` / `gpu.dealloc`, `memref.copy` becomes `gpu.memcpy`; each
returned buffer is copied back into a fresh host buffer (`memref.alloc`, the caller owns it as on the CPU path)
and its device buffer freed. The function's signature does not change: it still takes and returns host memrefs
(the runtime's flat memref calling convention), so the same function runs on the GPU (pipeline `tfn-gpu-nvvm`)
and, emulated, on the CPU (`tfn-gpu-emulate`).

Host ABI after `gpu-kernel-outlining`, `gpu-async-region` and `gpu-lower-to-nvvm-pipeline` (gpu-to-llvm): the
function calls MLIR's CUDA runtime wrappers (libmlir_cuda_runtime.so): mgpuStreamCreate, mgpuMemAlloc(bytes, stream,
host_shared=false), mgpuMemcpy(dst, src, bytes, stream), mgpuModuleLoad(fatbin, size) / mgpuModuleGetFunction /
mgpuLaunchKernel(fn, grid x/y/z, block x/y/z, shared bytes, stream, params, extra, n params) / mgpuModuleUnload
for each launch, mgpuMemFree, mgpuStreamSynchronize, mgpuStreamDestroy. Kernel arguments are the device buffers'
memref descriptors unpacked (allocated and aligned pointers, offset, sizes, strides) and the scalars a kernel uses.

Only device-side work may touch device memory: a host op that reads or writes a device buffer (a memref.load,
a linalg op left on the host) is an error naming the op.
"""
from mlir import ir

from tfn.passes.registry import PassFailure, register
from tfn.passes.walk import collect, contains, funcs

# host ops that only compute a view or a property of a buffer: fine on device buffers
VIEW_OPS = {"memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast", "memref.dim",
            "memref.reinterpret_cast", "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index",
            "func.return", "gpu.memcpy", "gpu.dealloc", "gpu.launch", "memref.dealloc", "memref.copy"}


def _alloc(ip, loc, memref_type, dynamic_sizes):
    return ir.Operation.create("gpu.alloc", results=[memref_type], operands=list(dynamic_sizes),
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(dynamic_sizes), 0])},
                               loc=loc, ip=ip)


def _memcpy(ip, loc, dst, src):
    return ir.Operation.create("gpu.memcpy", results=[], operands=[dst, src], loc=loc, ip=ip)


def _dealloc(ip, loc, value):
    return ir.Operation.create("gpu.dealloc", results=[], operands=[value], loc=loc, ip=ip)


def _dims(ip, loc, value):
    """index values of the dynamic dims of memref `value` (memref.dim ops at ip)."""
    t = ir.MemRefType(value.type)
    out = []
    for d, size in enumerate(t.shape):
        if size == ir.ShapedType.get_dynamic_size():
            c = ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                    attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), d)}, loc=loc, ip=ip)
            out.append(ir.Operation.create("memref.dim", results=[ir.IndexType.get()],
                                           operands=[value, c.result], loc=loc, ip=ip).result)
    return out


def _in_launch(op):
    parent = op.parent
    while parent is not None:
        if parent.name == "gpu.launch":
            return True
        parent = parent.parent
    return False


def host_buffers_to_device(fn):
    """Every memref.alloc/dealloc/copy of `fn` outside a gpu.launch becomes its device form (gpu.alloc, gpu.dealloc,
    gpu.memcpy)."""
    for op in collect(fn, lambda o: o.name in ("memref.alloc", "memref.dealloc", "memref.copy")):
        if _in_launch(op):
            continue
        ip = ir.InsertionPoint(op)
        if op.name == "memref.alloc":
            new = _alloc(ip, op.location, op.results[0].type, list(op.operands))
            op.results[0].replace_all_uses_with(new.result)
        elif op.name == "memref.dealloc":
            _dealloc(ip, op.location, op.operands[0])
        else:
            _memcpy(ip, op.location, op.operands[1], op.operands[0])
        op.erase()


def _device_function(fn):
    block = fn.regions[0].blocks[0]
    loc = fn.location
    entry = ir.InsertionPoint.at_block_begin(block)
    copies = []
    for arg in block.arguments:
        if not isinstance(arg.type, ir.MemRefType) or not list(arg.uses):
            continue
        uses = [(u.owner, u.operand_number) for u in arg.uses]
        dev = _alloc(entry, loc, arg.type, _dims(entry, loc, arg)).result
        _memcpy(entry, loc, dev, arg)
        for owner, n in uses:
            owner.operands[n] = dev
        copies.append(dev)
    host_buffers_to_device(fn)
    for ret in collect(fn, lambda o: o.name == "func.return"):
        ip = ir.InsertionPoint(ret)
        for i, value in enumerate(list(ret.operands)):
            if not isinstance(value.type, ir.MemRefType):
                continue
            host = ir.Operation.create("memref.alloc", results=[value.type], operands=_dims(ip, ret.location, value),
                                       attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get(
                                           [len(_dynamic(value)), 0])}, loc=ret.location, ip=ip).result
            _memcpy(ip, ret.location, host, value)
            root = _root(value)
            if root is not None and root not in copies and root.owner.name == "gpu.alloc":
                _dealloc(ip, ret.location, root)
            ret.operands[i] = host
        for dev in copies:
            _dealloc(ip, ret.location, dev)


def _dynamic(value):
    return [s for s in ir.MemRefType(value.type).shape if s == ir.ShapedType.get_dynamic_size()]


def _root(value):
    """The buffer a view chain starts from (None for a block argument)."""
    while isinstance(value, ir.OpResult):
        owner = value.owner
        if owner.name in ("memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast",
                          "memref.reinterpret_cast"):
            value = owner.operands[0]
            continue
        return value
    return None


def _host_misuse(fn):
    """Host ops (outside launches) that read or write memory: they cannot touch device buffers."""
    def bad(op):
        if _in_launch(op) or op.name in VIEW_OPS or op.name.startswith(("arith.", "gpu.", "scf.yield", "func.")):
            return False
        if op.name in ("memref.alloc", "scf.for", "scf.if", "scf.while", "cf.br", "cf.cond_br"):
            return False
        return any(isinstance(v.type, ir.MemRefType) for v in op.operands)
    return collect(fn, bad)


@register("tfn-gpu-device-buffers", "Host side of GPU functions on device buffers: gpu.alloc, gpu.memcpy in and out, "
          "gpu.dealloc")
def gpu_device_buffers(module_op):
    rewrite_gpu_functions(module_op, "tfn-gpu-device-buffers", _device_function)


def rewrite_gpu_functions(module_op, pass_name, rewrite):
    """rewrite(fn) for each function of `module_op` that launches GPU kernels, unless a host op of some such
    function would touch device memory: each is reported (an error naming `pass_name`) and the pass fails."""
    failed = False
    for fn in funcs(module_op):
        if not contains(fn, lambda o: o.name == "gpu.launch"):
            continue
        for op in _host_misuse(fn):
            op.location.emit_error(f"{pass_name}: {op.name} would touch device memory on the host")
            failed = True
        if not failed:
            rewrite(fn)
    if failed:
        raise PassFailure()
