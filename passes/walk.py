"""Collecting ops from a module in program order."""
from mlir import ir


def collect(root, predicate):
    """The ops under `root` (pre-order) for which predicate(op) holds."""
    found = []

    def visit(op):
        if predicate(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def tfn_ops(root):
    return collect(root, lambda op: op.name.startswith("tfn."))


def funcs(root):
    return collect(root, lambda op: op.name == "func.func")
