"""tfn-fold-constants: a tfn op whose operands are all `tfn.constant`s becomes a `tfn.constant` of its result.

Tracing keeps every op a graph value, constants included, as TensorFlow does (a condition on `tf.constant(True)`
stages a tensor `if`); folding them is the compiler's optimisation. The value comes from the op's reference
kernel in the op table (the NumPy code eager execution runs), so a folded result equals the eager one. Left as
they are: ops with effects (`tfn.print`; the collectives, whose result holds the other replicas' values: folded,
the exchange would run in the compiler and its sum be cached with the code), results of dynamic shape or over
1024 elements (a big constant would bloat the IR), and ops whose kernel fails on these operands (the compiled op
reports the error when it runs). Before folding, each op that may report a run-time error gets its error code
written on it (runtime_errors.number_sites): a folded one leaves no gap in the numbering the runtime reads.
"""
import numpy as np
from mlir import ir

from tfn.dialects import attrs as attr_codec
from tfn.dialects import optable
from tfn.dialects.ops_collective import COLLECTIVES
from tfn.dialects.types import TensorType
from tfn.passes import tfn_to_linalg  # noqa: F401  (registers every op's run-time error formatter)
from tfn.passes.lowering import runtime_errors
from tfn.passes.registry import register
from tfn.passes.walk import tfn_ops

_LIMIT = 1024  # elements of one folded result
_EFFECTS = frozenset(("print",) + COLLECTIVES)


def _constant_operands(op, constants):
    """The (array, TensorType) of each operand when op has operands and all are tfn.constant results, else None.

    `constants` maps each constant's result to its op (looked up by value: asking a value for its owner would
    make the bindings look for a Python module of the tfn dialect at every call)."""
    operands = op.operands
    found = []
    for i in range(len(operands)):  # (by index, stopping at the first other operand: iterating an operand list
        c = constants.get(operands[i])  # ends with an exception raised through the bindings, ~3 us an op)
        if c is None:
            return None
        found.append(c)
    if not found:
        return None
    return [attr_codec.from_mlir("dense", c.attributes["value"]) for c in found]


def _foldable(opdef, op):
    if opdef is None or opdef.name in _EFFECTS:
        return False
    for r in op.results:
        shape = TensorType.from_mlir(r.type).shape
        if None in shape or int(np.prod(shape)) > _LIMIT:
            return False
    return True


def _fold(opdef, op, operands):
    """The op's results as constant attributes, or None."""
    attrs = {n: attr_codec.from_mlir(k, op.attributes[n]) for n, k in opdef.attrs.items()}
    types = [TensorType.from_mlir(r.type) for r in op.results]
    try:
        arrays = opdef.run_kernel([a for a, _ in operands], attrs)
    except Exception:  # noqa: BLE001  (kept: the compiled op reports the error when the function runs)
        return None
    return [attr_codec.to_mlir("dense", (optable.numpy_result(a, t), t)) for a, t in zip(arrays, types)]


@register("tfn-fold-constants", "Replace tfn ops whose operands are all constants by constants of their results "
          "(computed by the op table's reference kernels)")
def fold_constants(module_op):
    constants = {}
    ops = list(tfn_ops(module_op))
    runtime_errors.number_sites(ops)
    for op in ops:
        if op.name == "tfn.constant":
            constants[op.results[0]] = op
            continue
        operands = _constant_operands(op, constants)
        if operands is None:
            continue
        opdef = optable.OPS.get(op.name[len("tfn."):])
        if not _foldable(opdef, op):
            continue
        values = _fold(opdef, op, operands)
        if values is None:
            continue
        with ir.InsertionPoint(op), op.location:
            for r, v in zip(op.results, values):
                c = ir.Operation.create("tfn.constant", results=[r.type], attributes={"value": v})
                r.replace_all_uses_with(c.results[0])
                constants[c.results[0]] = c
        op.erase()
