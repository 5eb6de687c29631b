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


def contains(root, predicate):
    """Whether some op under `root` (pre-order) satisfies predicate(op); the walk stops at the first."""
    found = []

    def visit(op):
        if predicate(op):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def callee_of(op):
    """The symbol a call op (func.call, llvm.call) names; None for an indirect call."""
    attr = op.attributes["callee"] if "callee" in op.attributes else None
    return ir.FlatSymbolRefAttr(attr).value if attr is not None else None


def tfn_ops(root):
    return collect(root, lambda op: op.name.startswith("tfn."))


def funcs(root):
    return collect(root, lambda op: op.name == "func.func")


def replace_declared_calls(root, attr, emit):
    """Replace each func.call of a func.func declaration carrying attribute `attr` by the values
    emit(call, declaration) builds (at the call, with its location), then erase those declarations."""
    decls = {fn.attributes["sym_name"].value: fn for fn in funcs(root) if attr in fn.attributes}
    if not decls:
        return
    calls = collect(root, lambda o: o.name == "func.call" and callee_of(o) in decls)
    for call in calls:
        with ir.InsertionPoint(call), call.location:
            new = emit(call, decls[callee_of(call)])
        for old, value in zip(call.results, new):
            old.replace_all_uses_with(value)
        call.erase()
    for fn in decls.values():
        fn.erase()


def defined_before(value, op):
    """Whether `value` is an argument of its function or the result of an op before `op` in op's block (so a
    rewrite at `op` may use it)."""
    if isinstance(value, ir.BlockArgument):
        parent = value.owner.owner
        return getattr(parent, "operation", parent).name == "func.func"
    owner = getattr(value.owner, "operation", value.owner)
    op = getattr(op, "operation", op)
    if not isinstance(owner, ir.Operation) or owner.block != op.block:
        return False
    for o in op.block.operations:
        o = getattr(o, "operation", o)
        if o == owner:
            return True
        if o == op:
            return False
    return False
