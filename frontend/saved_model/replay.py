"""A loaded function run op by op from its stored IR, eagerly through core/dispatch: each op is recorded on the
tapes, so a loaded model is differentiable (fine-tuned with a GradientTape) without its Python source."""
from tfn.core import dispatch
from tfn.dialects import attrs, optable
from tfn.dialects.errors import UnimplementedError


def run(module, symbol, name, inputs):
    """The results (tensors) of function `symbol` of tfn-dialect `module` on `inputs` (tensors or variables, one per
    argument), computed by the ops' eager kernels in program order."""
    func = next(op for op in module.body.operations if op.attributes["sym_name"].value == symbol)
    block = func.regions[0].blocks[0]
    values = dict(zip(block.arguments, inputs))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [values[v] for v in op.operands]
        opdef = optable.OPS.get(op.name[len("tfn."):]) if op.name.startswith("tfn.") else None
        if opdef is None or op.regions:
            raise UnimplementedError(f"the loaded function '{name}' holds {op.name}, which is not differentiable "
                                     "after loading yet: call it outside a GradientTape")
        kwargs = {n: attrs.from_mlir(kind, op.attributes[n]) for n, kind in opdef.attrs.items()
                  if n in op.attributes}
        out = dispatch.apply(opdef, [values[v] for v in op.operands], kwargs)
        for r, t in zip(op.results, out if isinstance(out, list) else [out]):
            values[r] = t
    raise ValueError(f"the stored IR of '{name}' has no return")
