"""tfn-gpu-device-abi: the host side of GPU functions whose arguments and results are device memory.

The runtime's GPU calling convention (runtime/device_executable.py), used in place of tfn-gpu-device-buffers where
the runtime manages device memory itself: in every func.func holding a `gpu.launch` (after tfn-gpu-map), memref
arguments are device buffers the runtime allocated and filled (used where they are: no copy in); `memref.alloc` /
`memref.dealloc` / `memref.copy` outside the kernels become `gpu.alloc` / `gpu.dealloc` / `gpu.memcpy`; each
returned buffer is returned as the device buffer it is (the runtime owns it from then on and frees it) — unless it
is not one this call allocated whole (an argument, a view into one, a constant): then it is copied into a fresh
`gpu.alloc`, so every result is a buffer of its own. No host<->device copy is left in the function: the runtime
makes (and counts) all of them.

Host ops that would read or write device memory are errors naming the op, as in tfn-gpu-device-buffers.
"""
from mlir import ir

from tfn.passes.registry import register
from tfn.passes.tfn_gpu_device_buffers import (
    _alloc,
    _dealloc,
    _dims,
    _memcpy,
    _root,
    host_buffers_to_device,
    rewrite_gpu_functions,
)
from tfn.passes.walk import collect


def _device_function(fn):
    host_buffers_to_device(fn)
    for ret in collect(fn, lambda o: o.name == "func.return"):
        ip = ir.InsertionPoint(ret)
        returned = set()
        for i, value in enumerate(list(ret.operands)):
            if not isinstance(value.type, ir.MemRefType):
                continue
            root = _root(value)
            whole = root is not None and root == value and root.owner.name == "gpu.alloc"
            if whole and value not in returned:
                returned.add(value)
                continue
            result_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results[i]
            fresh = _alloc(ip, ret.location, result_type, _dims(ip, ret.location, value)).result
            _memcpy(ip, ret.location, fresh, value)
            if root is not None and root.owner.name == "gpu.alloc" and root not in returned:
                _dealloc(ip, ret.location, root)  # a view of a temporary: the temporary goes
            ret.operands[i] = fresh


@register("tfn-gpu-device-abi", "Host side of GPU functions for the runtime: device-memory arguments and results, "
          "gpu.alloc / gpu.dealloc / gpu.memcpy on the device only")
def gpu_device_abi(module_op):
    rewrite_gpu_functions(module_op, "tfn-gpu-device-abi", _device_function)
