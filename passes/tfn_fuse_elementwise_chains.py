"""tfn-fuse-elementwise-chains: fuse trees of elementwise linalg.generic ops into one generic each, in linear time.

Upstream linalg-fuse-elementwise-ops fuses one producer into its consumer at a time, cloning the producer's body
into a new op each time: on a chain of n elementwise ops the bodies it clones add up to ~n^2 / 2 ops (a 1,000-op
chain: ~1 s), and every splat constant it folds into the grown op rebuilds it again. This pass does what that one
would end with for the common case, in one step per tree: a generic whose result has a single use, as an input
read through the identity map by a generic in the same block, is merged into it (both all-parallel, one result
written through the identity map, the init's block argument unused). Each tree of such ops becomes one generic
whose body is the members' bodies in program order; its inputs are the members' other inputs, each (value, map)
once, and an input that is a splat constant becomes a scalar constant in the body. Broadcast producers, ops with
several results or uses, reductions and anything else are left to linalg-fuse-elementwise-ops, which runs next.
"""
from mlir import ir
from mlir.dialects import arith, linalg

from tfn.passes.registry import register


class _Attrs:
    """Facts about the uniqued attributes of one run (a function's generics share a few): an indexing_maps
    attribute's maps and which of them are identities, whether an iterator_types attribute is all parallel."""

    def __init__(self):
        self._maps, self._parallel = {}, {}

    def maps(self, op):
        """([AffineMap], [is identity]) of op's indexing maps."""
        attr = op.attributes["indexing_maps"]
        found = self._maps.get(attr)
        if found is None:
            maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(attr)]
            found = self._maps[attr] = (maps, [_identity(m) for m in maps])
        return found

    def all_parallel(self, op):
        attr = op.attributes["iterator_types"]
        found = self._parallel.get(attr)
        if found is None:  # linalg's iterator types: parallel or reduction
            found = self._parallel[attr] = "reduction" not in str(attr)
        return found


def _is_simple(op, attrs):
    """Whether `op` is an all-parallel linalg.generic on tensors with one result, written through the identity
    map, whose init's block argument the body never reads."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.regions[0].blocks) != 1:
        return False
    if not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    block = op.regions[0].blocks[0]
    if next(iter(block.arguments[len(block.arguments) - 1].uses), None) is not None:
        return False
    if not attrs.all_parallel(op):
        return False
    return attrs.maps(op)[1][-1]


def _identity(m):
    return m.n_symbols == 0 and m.n_dims == len(m.results) and m == ir.AffineMap.get_identity(m.n_dims)


def _owner(value):
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _splat_scalar(owner):
    """The scalar attribute of `owner` if it is a splat arith.constant of ints or floats, else None."""
    if owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return None
    scalar = attr.get_splat_value()
    return scalar if isinstance(scalar, (ir.FloatAttr, ir.IntegerAttr)) else None


def _consumer(op, attrs):
    """The generic in op's block reading op's single-use result as an input through the identity map, or None
    (the caller checks it is simple)."""
    uses = iter(op.results[0].uses)
    use = next(uses, None)
    if use is None or next(uses, None) is not None:
        return None
    user = _owner_of_use(use)
    if user is None or user.name != "linalg.generic" or user.block != op.block:
        return None
    index = use.operand_number
    n_inputs = len(user.operands) - 1
    if index >= n_inputs or not attrs.maps(user)[1][index]:
        return None
    return user


def _owner_of_use(use):
    owner = use.owner
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _generics(root):
    """The linalg.generic ops under `root` in program order, not looking inside their bodies (most of a big
    function's ops)."""
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@register("tfn-fuse-elementwise-chains",
          "Fuse trees of single-use elementwise linalg.generic ops into one generic each (linear time)")
def fuse_elementwise_chains(module_op):
    attrs = _Attrs()
    simple = [op for op in _generics(module_op) if _is_simple(op, attrs)]
    if len(simple) < 2:
        return
    # Every relation is found before the IR changes, by index: an Operation's hash is not stable across rewrites.
    index = {op: i for i, op in enumerate(simple)}
    into = [index.get(c) if (c := _consumer(op, attrs)) is not None else None for op in simple]
    members, groups = {}, []  # consumer index -> its producers' members so far; the groups to fuse
    for i in range(len(simple)):  # program order: a producer's group is complete before its consumer's
        group = members.pop(i, []) + [i]
        if into[i] is None:
            if len(group) > 1:
                groups.append(sorted(group))
        else:
            members.setdefault(into[i], []).extend(group)
    for group in groups:
        _fuse([simple[i] for i in group], attrs)


def _fuse(group, attrs):
    """Replace the generics of `group` (program order, the root last, every other one feeding exactly one later
    member) by one generic."""
    root = group[-1]
    inside = {op: i for i, op in enumerate(group)}
    inputs, in_maps, slots = [], [], {}  # external (value, map) -> block argument index
    splats = {}  # the ops defining external inputs -> their splat scalar, or None
    plan = []  # per member: per input ("arg", block argument index) / ("const", attr) / ("member", member index)
    for m in group:
        maps = attrs.maps(m)[0]
        entry = []
        for value, vmap in zip(list(m.operands)[:-1], maps[:-1]):
            producer = _owner(value)
            if isinstance(producer, ir.Operation):
                member = inside.get(producer)
                if member is not None:
                    entry.append(("member", member))
                    continue
                scalar = splats.get(producer, False)
                if scalar is False:
                    scalar = splats[producer] = _splat_scalar(producer)
                if scalar is not None:
                    entry.append(("const", scalar))
                    continue
            key = (value, str(vmap))
            if key not in slots:
                slots[key] = len(inputs)
                inputs.append(value)
                in_maps.append(vmap)
            entry.append(("arg", slots[key]))
        plan.append(entry)
    init = list(root.operands)[-1]
    out_map = attrs.maps(root)[0][-1]
    loc = root.location
    with loc, ir.InsertionPoint(root):
        fused = linalg.GenericOp([root.results[0].type], inputs, [init],
                                 ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in in_maps + [out_map]]),
                                 root.attributes["iterator_types"])
    types = [ir.RankedTensorType(v.type).element_type for v in inputs + [init]]
    block = fused.regions[0].blocks.append(*types, arg_locs=[loc] * len(types))
    yielded, constants = [], {}  # each member's yielded value, in order
    with loc, ir.InsertionPoint(block):
        for m, entry in zip(group, plan):
            body = m.regions[0].blocks[0]
            args = body.arguments
            for i, (kind, what) in enumerate(entry):
                if kind == "arg":
                    new = block.arguments[what]
                elif kind == "member":
                    new = yielded[what]
                else:
                    new = constants.get(what)  # (attributes are uniqued: equal values, one key)
                    if new is None:
                        new = constants[what] = arith.ConstantOp(what.type, what).result
                args[i].replace_all_uses_with(new)
            ops = body.operations  # (indexed: iterating an operation list costs more)
            for _ in range(len(ops) - 1):
                block.append(ops[0])  # (moves it)
            yielded.append(ops[0].operands[0])
        linalg.YieldOp([yielded[-1]])
    root.results[0].replace_all_uses_with(fused.results[0])
    for m in reversed(group):
        m.erase()
