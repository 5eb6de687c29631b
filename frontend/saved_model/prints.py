"""The tfn.print sites of a saved function: the only run-time callbacks a saved model keeps, since a print op holds
all its handler needs (its text, stream and summarize attributes) while a py_function's handler is Python code."""
from mlir import ir

from tfn.dialects import attrs, optable


def sites(module):
    """{callback site: the attributes of the tfn.print op calling it} in traced `module` (nested regions too)."""
    opdef = optable.OPS["print"]
    found = {}

    def visit(op):
        if op.name == "tfn.print":
            values = {n: attrs.from_mlir(kind, op.attributes[n]) for n, kind in opdef.attrs.items()
                      if n in op.attributes}
            found[values["site"]] = values
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def handlers(module, count):
    """The handlers of a loaded function's `count` callback sites, all tfn.print ops (save checked so)."""
    opdef = optable.OPS["print"]
    found = sites(module)
    return [_handler(opdef, found[i]) for i in range(count)]


def _handler(opdef, values):
    return lambda arrays: opdef.run_kernel(arrays, values)
