"""Lower `break`, `continue` and `return` inside control flow to flag variables, as TF's AutoGraph does.

After lowering, a converted `if`/`while`/`for` never jumps out of its body: a jump sets a flag, the rest of
its block runs under `if not flag:` (or moves into the `else` of an `if` whose other branch always jumps),
and a loop's test gains `not flag`. A loop's `else:` block moves after the loop (guarded by the break flag).
"""
import ast

NEVER, MAYBE, ALWAYS = 0, 1, 2
_LOOPS = (ast.While, ast.For)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def assign(name, value):
    return ast.Assign(targets=[_name(name, True)], value=value, lineno=0)


def not_flag(name):
    return ast.UnaryOp(op=ast.Not(), operand=_name(name))


def _contains(node, kinds, into_loops):
    """Whether `node` (a statement) holds a jump of `kinds` that belongs to the current block's loop/function."""
    if isinstance(node, kinds):
        return True
    if isinstance(node, _SCOPES) or (not into_loops and isinstance(node, _LOOPS)):
        return False
    return any(_contains(c, kinds, into_loops) for c in ast.iter_child_nodes(node))


class _Lowering:
    """Lower one kind of jump (Return, Break or Continue) in a block, with flag `flag`."""

    def __init__(self, kind, flag, retval=None):
        self.kind, self.flag, self.retval = kind, flag, retval
        self.into_loops = kind is ast.Return
        self.loops = []  # loops whose body may jump (their tests gain `not flag`)

    def block(self, stmts):
        """(lowered statements, NEVER|MAYBE|ALWAYS jumps)."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, self.kind):
                out += self._replace(s)
                return out, ALWAYS  # the rest of the block is dead code
            if not _contains(s, self.kind, self.into_loops):
                out.append(s)
                continue
            rest = stmts[i + 1:]
            if rest and isinstance(s, ast.If) and self._move_into_other_branch(s, rest):
                rest = []
            mode = self._compound(s)
            out.append(s)
            if mode == ALWAYS or not rest:
                return out, mode
            guarded, _ = self.block(rest)
            out.append(ast.copy_location(ast.If(test=not_flag(self.flag), body=guarded, orelse=[]), rest[0]))
            return out, MAYBE
        return out, NEVER

    def _replace(self, s):
        stmts = [ast.copy_location(assign(self.flag, ast.Constant(True)), s)]
        if self.kind is ast.Return:
            # the value first: if computing it raises (inside a `try`), no return has happened, as in Python
            value = s.value if s.value is not None else ast.Constant(None)
            stmts.insert(0, ast.copy_location(assign(self.retval, value), s))
        return stmts

    def _compound(self, s):
        """Lower the blocks of a compound statement in place; return how it jumps."""
        if isinstance(s, ast.If):
            s.body, s._ag_body_mode = self.block(s.body)
            s.orelse, s._ag_else_mode = self.block(s.orelse)
            return self._if_mode(s)
        if isinstance(s, _LOOPS):
            s.body, _ = self.block(s.body)
            self.loops.append(s)
            return MAYBE
        modes = []
        for field in ("body", "orelse", "finalbody"):
            if getattr(s, field, None):
                lowered, m = self.block(getattr(s, field))
                setattr(s, field, lowered)
                modes.append(m)
        for h in getattr(s, "handlers", []):
            h.body, m = self.block(h.body)
            modes.append(MAYBE if m else NEVER)
        return ALWAYS if isinstance(s, ast.With) and modes == [ALWAYS] else (MAYBE if any(modes) else NEVER)

    @staticmethod
    def _if_mode(s):
        a, b = s._ag_body_mode, s._ag_else_mode
        return a if a == b else MAYBE

    def _move_into_other_branch(self, s, rest):
        """When one branch always jumps, the rest of the block runs only after the other: move it there (it is
        then lowered inside that branch, and needs no flag test when that branch does not jump)."""
        if self._always(s.body):
            s.orelse = s.orelse + rest
            return True
        if self._always(s.orelse):
            s.body = s.body + rest
            return True
        return False

    def _always(self, stmts):
        """Whether a block (not yet lowered) jumps on every path."""
        for s in stmts:
            if isinstance(s, self.kind):
                return True
            if isinstance(s, ast.If) and s.orelse and self._always(s.body) and self._always(s.orelse):
                return True
            if isinstance(s, ast.With) and self._always(s.body):
                return True
        return False


def _add_test(loop, flag):
    """Make loop stop once `flag` is set: `while not flag and test`, or an extra test for `for`."""
    if isinstance(loop, ast.While):
        loop.test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[not_flag(flag), loop.test]), loop.test)
    else:
        loop._ag_extra = getattr(loop, "_ag_extra", []) + [flag]


def lower_loops(stmts, names):
    """Lower break/continue of every loop in `stmts` (not in nested functions); move loop else-blocks out."""
    out = []
    for s in stmts:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and not isinstance(s, _SCOPES):
                setattr(s, field, lower_loops(getattr(s, field), names))
        for h in getattr(s, "handlers", []):
            h.body = lower_loops(h.body, names)
        if not isinstance(s, _LOOPS):
            out.append(s)
            continue
        out += _lower_loop(s, names)
    return out


def _lower_loop(loop, names):
    before, after = [], []
    if any(_contains(c, ast.Break, False) for c in loop.body):
        flag = names.new("break_")
        low = _Lowering(ast.Break, flag)
        loop.body, _ = low.block(loop.body)
        before.append(ast.copy_location(assign(flag, ast.Constant(False)), loop))
        _add_test(loop, flag)
        if loop.orelse:
            after.append(ast.copy_location(ast.If(test=not_flag(flag), body=loop.orelse, orelse=[]), loop.orelse[0]))
    else:
        after += loop.orelse
    loop.orelse = []
    if any(_contains(c, ast.Continue, False) for c in loop.body):
        flag = names.new("continue_")
        low = _Lowering(ast.Continue, flag)
        body, _ = low.block(loop.body)
        loop.body = [ast.copy_location(assign(flag, ast.Constant(False)), loop.body[0])] + body
    return before + [loop] + after


def needs_return_lowering(fn_body):
    """Whether a `return` sits inside a compound statement (so a converted region would have to jump)."""
    return any(not isinstance(s, ast.Return) and _contains(s, ast.Return, True) for s in fn_body)


def lower_returns(fn_node, names, ag):
    """Rewrite the function body with `do_return`/`retval_` flags and one final `return`."""
    flag, retval = names.new("do_return"), names.new("retval_")
    low = _Lowering(ast.Return, flag, retval)
    body, _ = low.block(fn_node.body)
    for loop in low.loops:
        _add_test(loop, flag)
    first = fn_node.body[0]
    undefined = ast.Call(func=ast.Attribute(value=_name(ag), attr="UndefinedReturnValue", ctx=ast.Load()),
                         args=[], keywords=[])
    ret = ast.Return(value=ast.Call(func=ast.Attribute(value=_name(ag), attr="retval", ctx=ast.Load()),
                                    args=[_name(retval)], keywords=[]))
    prologue = [ast.copy_location(assign(flag, ast.Constant(False)), first),
                ast.copy_location(assign(retval, undefined), first)]
    last = fn_node.body[-1]
    fn_node.body = prologue + body + [ast.copy_location(ret, last)]
