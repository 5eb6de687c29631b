"""A `while` on tensors as one scf.while: the condition and the body are traced once into a temporary op, then
moved into the final one, which carries the loop tensors and only the state keys the loop changes.

A loop is traced again (at most 4 times) when its first trace teaches it something its start must know: a
TensorArray's or Pending's first element type, or a variable first written inside the loop."""
from mlir import ir

from tfn.control_flow.eager import eager_while
from tfn.control_flow.loop_state import AUTOGRAPH_HINT, LoopVars, Regions
from tfn.control_flow.statement import Statement, erase, move_ops, tensor_type, to_symbolic
from tfn.control_flow.values import rebuild_all
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor
from tfn.gradients.recording import ACTIVE as _TAPES
from tfn.gradients.recording import record_opaque

_TRACES = 4


def build_while(cond_fn, body_fn, loop_vars, names, where=None, shape_invariants=None):
    """The loop variables after `while cond_fn(*vars): vars = body_fn(*vars)`; traced: one scf.while.

    loop_vars: tuple of values (nested structures allowed); body_fn returns a tuple of the same length.
    shape_invariants: None, a sequence parallel to loop_vars (None or a shape per var) or {name: shape}."""
    g = graph_mod.current()
    if g is None:
        return eager_while(cond_fn, body_fn, list(loop_vars), names)
    if isinstance(shape_invariants, dict):
        shape_invariants = [shape_invariants.get(n) for n in names]
    loop = LoopVars(Statement(g, where), tuple(names), shape_invariants, AUTOGRAPH_HINT)
    return trace_while(loop, cond_fn, body_fn, tuple(loop_vars))


def trace_while(loop, cond_fn, body_fn, loop_vars, name=None):
    """The loop's results, rebuilt as loop_vars; traced again while a trace teaches the loop's start more."""
    for _ in range(_TRACES):
        loop.start(loop_vars)
        result = WhileTrace(loop, name).run(cond_fn, body_fn)
        if result is not None:
            return result
    raise loop.st.fail(ValueError, "the loop's TensorArrays and variables did not settle after 4 traces")


class WhileTrace:
    """One trace of a loop into a temporary scf.while: its initial values (loop tensors, then the graph's state
    keys), the types they keep, and the graph state before it."""

    def __init__(self, loop, name):
        self.loop, self.st, self.name = loop, loop.st, name
        g = self.st.g
        inits, types = loop.init_types()
        self.inits = [self.st.relax(t, tt) for t, tt in zip(inits, types)]
        self.snapshot = dict(g.state)
        self.keys = list(self.snapshot)
        self.state_inits = [to_symbolic(g, self.snapshot[k]) for k in self.keys]
        self.all_types = types + [tensor_type(t) for t in self.state_inits]
        self.tmp = None
        self.scopes = (graph_mod.Scope("the condition of a while loop"), graph_mod.Scope("the body of a while loop"))

    def _new_op(self, inits, types, ip):
        """An scf.while with blocks for `types`, started from the values `inits`."""
        # start-up cost: MLIR's Python module of scf loads with the first tensor `if`/`while`
        from mlir.dialects import scf

        loc, mtypes = self.st.location(), [t.to_mlir() for t in types]
        op = scf.WhileOp(mtypes, inits, loc=loc, ip=ip)
        op.before.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
        op.after.blocks.append(*mtypes, arg_locs=[loc] * len(mtypes))
        return op

    def run(self, cond_fn, body_fn):
        """The loop's results, or None when the loop must be traced again."""
        g = self.st.g
        self.tmp = self._new_op([t._mlir for t in self.inits + self.state_inits], self.all_types, g.ip)
        try:
            learned, regions = self._trace_regions(cond_fn, body_fn)
            g.state = self.snapshot
            if learned:  # TensorArrays got their first element shape: give them buffers, retrace
                self._abandon()
                for leaf, new in learned:
                    leaf._tfn_learn(new)
                return None
            if self._first_used_state(regions):
                self._abandon()  # a variable first written in the loop: carry it from the start
                return None
            return self._finish(regions)
        except BaseException:
            g.state = self.snapshot
            erase(g, self.tmp.operation)
            raise

    def _abandon(self):
        erase(self.st.g, self.tmp.operation)
        self._erase_unused()

    def _erase_unused(self):
        """Erase the constants and casts this abandoned trace made for the loop's initial values."""
        given = {id(t) for f in self.loop.flats for t in f.tensors}
        for t in self.inits:
            owner = t._mlir.owner
            if id(t) in given or not isinstance(owner, ir.Operation) and not hasattr(owner, "operation"):
                continue
            op = owner.operation if hasattr(owner, "operation") else owner
            if op.name in ("tfn.constant", "tensor.cast") and next(iter(t._mlir.uses), None) is None:
                erase(t._graph, op)

    def _block_vars(self, block, prefix):
        """The loop variables and {state key: value} of a region's block arguments."""
        g, keys = self.st.g, self.keys
        args = [g.wrap(a, t, f"{prefix}:{i}") for i, (a, t) in enumerate(zip(block.arguments, self.all_types))]
        n = len(args) - len(keys)
        return rebuild_all(self.loop.flats, args[:n]), dict(zip(keys, args[n:]))

    def _trace_regions(self, cond_fn, body_fn):
        """Trace cond and body: ([(composite, its value after the body)] to learn from, else Regions)."""
        g, loop = self.st.g, self.loop
        before, after = self.tmp.before.blocks[0], self.tmp.after.blocks[0]
        base = g.unique_name("while")
        with g.inside(before, self.scopes[0]):
            values, g.state = self._block_vars(before, base + "/cond")
            c = cond_fn(*values)
            if not isinstance(c, SymbolicTensor):
                c = to_symbolic(g, c if isinstance(c, TensorBase) else convert_to_tensor(c))
            c_i1 = self.st.extract_pred(c, "the loop condition")
            cond_state, cond_all = [g.state[k] for k in self.keys], g.state
        with g.inside(after, self.scopes[1]):
            values, g.state = self._block_vars(after, base + "/body")
            out = body_fn(*values)
            body_all = g.state
            out = loop.check_body(out)
            learned = loop.learned_buffers(out)
            if learned:
                return learned, None
            tensors = loop.body_tensors(out, self.all_types)
            tensors += loop.state_tensors(g.state, self.keys, self.all_types[len(tensors):])
        return [], Regions(c_i1, cond_state, tensors, cond_all, body_all)

    def _first_used_state(self, regions):
        """Put state keys first used in the loop into g.state; True if one was written there (trace again)."""
        g, retrace = self.st.g, False
        for scope, state in zip(self.scopes, (regions.cond_all, regions.body_all)):
            for key, init in self.st.new_state(self.snapshot, state, scope.what, self.tmp.operation).items():
                g.state[key] = init
                retrace |= state[key] is not init
        return retrace

    def _finish(self, regions):
        """Build the final scf.while carrying the loop tensors and only the state keys the loop changes."""
        g, keys, inits = self.st.g, self.keys, self.inits + self.state_inits
        before, after = self.tmp.before.blocks[0], self.tmp.after.blocks[0]
        n = len(self.all_types) - len(keys)
        keep = list(range(n)) + [n + i for i in range(len(keys))
                                 if regions.cond_state[i]._mlir != before.arguments[n + i]
                                 or regions.body[n + i]._mlir != after.arguments[n + i]]
        kept_types = [self.all_types[i] for i in keep]
        final = self._new_op([inits[i]._mlir for i in keep], kept_types, ir.InsertionPoint(self.tmp))
        remap = _Remap(((before, final.before.blocks[0]), (after, final.after.blocks[0])), keep, inits)
        cond_fwd = list(before.arguments)[:n] + [regions.cond_state[i - n]._mlir for i in keep[n:]]
        yields = [regions.body[i]._mlir for i in keep]
        remap.replace_arguments()
        cond_fwd, yields = [remap(v) for v in cond_fwd], [remap(v) for v in yields]
        self._move_into(final, remap(regions.cond), cond_fwd, yields)
        base = g.unique_name(self.name or "while")
        results = [g.wrap(r, t, f"{base}:{i}") for i, (r, t) in enumerate(zip(final.results, kept_types))]
        if _TAPES:  # without a gradient rule (see IfBuilder._replace_op)
            values = ([t for f in self.loop.flats for t in f.tensors] + list(inits) + list(regions.body)
                      + list(regions.cond_state))
            record_opaque("a tensor-dependent loop (tfn.while_loop, or a `while`/`for` over tensors)", values,
                          results, self.st.where)
        for i, r in zip(keep[n:], results[n:]):
            g.state[keys[i - n]] = r
        return rebuild_all(self.loop.flats, results[:n])

    def _move_into(self, final, cond, cond_fwd, yields):
        """Move the traced regions' ops into the final op, end them, and erase the temporary op."""
        # start-up cost: MLIR's Python module of scf loads with the first tensor `if`/`while`
        from mlir.dialects import scf

        loc = self.st.location()
        new_before, new_after = final.before.blocks[0], final.after.blocks[0]
        move_ops(self.tmp.before.blocks[0], new_before)
        move_ops(self.tmp.after.blocks[0], new_after)
        scf.ConditionOp(cond, cond_fwd, loc=loc, ip=ir.InsertionPoint(new_before))
        scf.YieldOp(yields, loc=loc, ip=ir.InsertionPoint(new_after))
        erase(self.st.g, self.tmp.operation)


class _Remap:
    """The temporary op's block arguments in terms of the final op: a kept one is the final block's argument,
    a dropped one (a state key the loop does not change) its initial value."""

    def __init__(self, pairs, keep, inits):
        self.pairs, self.keep, self.inits = pairs, keep, inits

    def _replacement(self, new_block, i):
        return new_block.arguments[self.keep.index(i)] if i in self.keep else self.inits[i]._mlir

    def replace_arguments(self):
        for old_block, new_block in self.pairs:
            for i, arg in enumerate(old_block.arguments):
                arg.replace_all_uses_with(self._replacement(new_block, i))

    def __call__(self, v):
        """A value recorded before the block arguments were replaced, mapped to its replacement."""
        try:
            arg = ir.BlockArgument(v)
        except ValueError:  # not a block argument
            return v
        for old, new in self.pairs:
            if arg.owner == old:
                return self._replacement(new, arg.arg_number)
        return v
