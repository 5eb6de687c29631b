"""A trace seen as TF's GraphDef (`concrete.graph.as_graph_def().node`) and its operations (`get_operations()`).

Nodes come from the traced IR: one `Placeholder` per function input (named like the parameter), one node per
top-level op (named like its symbolic tensors: `add`, `add_1`; typed with TF's op name: `AddV2`), and one
`Identity` per returned value. A node's `input` names the values it reads: `"add"` for an op's first result,
`"split:1"` for its second. Ops nested in a control-flow op's regions are part of that op's node; values
those regions read from outside become the node's inputs.
"""
from tfn.core.tensor import SymbolicTensor
from tfn.dialects import optable
from tfn.dialects.types import TensorType


class NodeDef:
    """One node: `name`, `op` (TF's op type), `input` (names of the values it reads), `attr`, `device`."""

    __slots__ = ("name", "op", "input", "attr", "device")

    def __init__(self, name, op, inputs, attr=None):
        self.name = name
        self.op = op
        self.input = list(inputs)
        self.attr = dict(attr or {})
        self.device = ""

    def __str__(self):
        lines = [f'name: "{self.name}"', f'op: "{self.op}"'] + [f'input: "{i}"' for i in self.input]
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


class GraphDef:
    """The nodes of one trace, in program order (inputs first, outputs last)."""

    __slots__ = ("node",)

    def __init__(self, nodes):
        self.node = list(nodes)

    def __str__(self):
        return "".join("node {\n" + "".join(f"  {line}\n" for line in str(n).splitlines()) + "}\n"
                       for n in self.node)


class Operation:
    """One node of a trace as TF's tf.Operation: `name`, `type`, `inputs`, `outputs` (symbolic tensors), `node_def`."""

    __slots__ = ("node_def", "inputs", "outputs", "graph")

    def __init__(self, node_def, inputs, outputs, graph):
        self.node_def = node_def
        self.inputs = inputs
        self.outputs = outputs
        self.graph = graph

    @property
    def name(self):
        return self.node_def.name

    @property
    def type(self):
        return self.node_def.op

    def __repr__(self):
        return f"<tfn.Operation '{self.name}' type={self.type}>"


def as_graph_def(graph):
    """The GraphDef of a FuncGraph (finished or not)."""
    return GraphDef(node for node, _, _ in _walk(graph))


def get_operations(graph):
    """The Operations of a FuncGraph, in the order of `as_graph_def().node`."""
    return [Operation(node, [_tensor(graph, v, n) for v, n in ins], [_tensor(graph, v, n) for v, n in outs], graph)
            for node, ins, outs in _walk(graph)]


def _tensor(graph, value, name):
    try:
        return SymbolicTensor(value, TensorType.from_mlir(value.type), graph, name)
    except (TypeError, ValueError, KeyError):  # a value of a non-tensor type: its name stands for it
        return name


def _walk(graph):
    """(NodeDef, [(value, tensor name)] read, [(value, tensor name)] made) for each node."""
    names = _Names(graph)
    value_names = {}
    out = []
    for i, arg in enumerate(graph.block.arguments):
        name = names.fresh(graph.inputs[i].name.split(":")[0] if i < len(graph.inputs) else f"arg{i}")
        value_names[arg] = f"{name}:0"
        out.append((NodeDef(name, "Placeholder", []), [], [(arg, f"{name}:0")]))
    ops = list(graph.block.operations)
    for op in ops:
        if op.operation.name == "func.return":
            continue
        name = graph.op_names.get(op) or names.fresh(op.operation.name.rsplit(".", 1)[-1])
        reads = [(v, value_names[v]) for v in _reads(op, value_names)]
        made = [(r, f"{name}:{j}") for j, r in enumerate(op.results)]
        value_names.update(made)
        out.append((NodeDef(name, _op_type(op), [_input_name(n) for _, n in reads], _attrs(op)), reads, made))
    if ops and ops[-1].operation.name == "func.return":
        for v in ops[-1].operands:
            name = names.fresh("Identity")
            out.append((NodeDef(name, "Identity", [_input_name(value_names[v])]), [(v, value_names[v])],
                        [(v, f"{name}:0")]))
    return out


def _reads(op, known):
    """The values `op` reads: its operands (repeats kept, as TF), then outer values its regions read."""
    order = [v for v in op.operands if v in known]
    seen = set(order)
    for v in _region_reads(op):
        if v in known and v not in seen:
            seen.add(v)
            order.append(v)
    return order


def _region_reads(op):
    return [v for region in op.regions for block in region for inner in block.operations
            for v in list(inner.operands) + _region_reads(inner)]


def _input_name(tensor_name):
    """TF's input reference: `add` for output 0, `split:1` otherwise."""
    node, index = tensor_name.rsplit(":", 1)
    return node if index == "0" else tensor_name


def _op_type(op):
    opdef = optable.lookup(op.operation.name)
    if opdef is not None:
        return opdef.tf_name
    return "".join(p.capitalize() for p in op.operation.name.rsplit(".", 1)[-1].split("_"))


def _attrs(op):
    opdef = optable.lookup(op.operation.name)
    if opdef is None:
        return {}
    try:
        return optable.decode_attrs(opdef, op)
    except (ValueError, KeyError, TypeError):
        return {}


class _Names:
    """Unique node names: the names ops were made with are taken; others get `base`, `base_1`, ..."""

    def __init__(self, graph):
        self.taken = set(graph.op_names.values())

    def fresh(self, base):
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name
