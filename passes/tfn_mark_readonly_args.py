"""tfn-mark-readonly-args: mark function arguments non-writable so bufferization never writes user buffers."""
from mlir import ir

from tfn.passes.registry import register
from tfn.passes.walk import funcs


@register("tfn-mark-readonly-args",
          "Mark public function arguments `bufferization.writable = false` (inputs are immutable)")
def mark_readonly_args(module_op):
    for fn in funcs(module_op):
        if "sym_visibility" in fn.attributes or not fn.regions[0].blocks:
            continue
        n = len(fn.regions[0].blocks[0].arguments)
        arg_attrs = [ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)}) for _ in range(n)]
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
