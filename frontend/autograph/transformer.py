"""The AutoGraph source transform: a user function's AST -> the AST of its converted twin.

`if`/`while`/`for` become calls to `ag__.if_stmt`/`while_stmt`/`for_stmt` with their blocks as nested
functions and the variables they change as state (`get_state`/`set_state`); `and`/`or`/`not`/`x if c else y`
become `ag__.and_`/`or_`/`not_`/`if_exp`; calls go through `ag__.converted_call`. Every new node takes the
location of the statement it replaces, so tracebacks and op locations show the user's own lines.
"""
import ast

from tfn.autograph import analysis, jumps

AG = "ag__"
# Builtins that read their caller's frame: called directly, never through converted_call.
_FRAME_BUILTINS = frozenset(("locals", "globals", "vars", "eval", "exec", "dir", "super"))
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Names:
    """Fresh identifiers that do not collide with any name the function uses."""

    def __init__(self, node):
        self.used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        self.used |= {a.arg for n in ast.walk(node) if isinstance(n, ast.arguments)
                      for a in n.args + n.kwonlyargs + n.posonlyargs + [n.vararg, n.kwarg] if a}

    def new(self, base):
        name, i = base, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        return name


def _load(name):
    return ast.Name(id=name, ctx=ast.Load())


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


def _ag(attr):
    return ast.Attribute(value=_load(AG), attr=attr, ctx=ast.Load())


def _call(func, *args, keywords=()):
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _def(name, params, body):
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()], decorator_list=[], returns=None,
                           type_params=[])


def _header(s):
    """A one-line location at a statement's header (a multi-line one would move method calls to its last line)."""
    head = getattr(s, "test", None) or getattr(s, "iter", None)
    same_line = getattr(head, "end_lineno", None) == s.lineno and getattr(head, "lineno", None) == s.lineno
    end = head.end_col_offset if same_line else s.col_offset + 1
    return ast.Pass(lineno=s.lineno, end_lineno=s.lineno, col_offset=s.col_offset, end_col_offset=end)


def _located(nodes, where):
    """Give generated nodes (those without a location) the header location of the statement they replace."""
    loc = _header(where)
    for n in nodes:
        for child in ast.walk(n):
            if not hasattr(child, "lineno") or child.lineno == 0:
                ast.copy_location(child, loc)
    return nodes


class FunctionConverter:
    """Convert one function scope (its nested functions are converted as their own scopes)."""

    def __init__(self, fn_node, params, globals_):
        self.fn = fn_node
        self.names = Names(fn_node)
        self.globals = set(globals_)
        self.params = set(params)

    def convert(self):
        fn = self.fn
        fn.body = jumps.lower_loops(fn.body, self.names)
        if jumps.needs_return_lowering(fn.body):
            jumps.lower_returns(fn, self.names, AG)
        _annotate_modified(fn.body)
        analysis.defined(fn.body, self.params | _declared(fn.body, ast.Nonlocal))
        analysis.live(fn.body, set())
        fn.body = self.block(fn.body)
        return fn

    def block(self, stmts):
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [convert_nested(s, self.globals)]
        if isinstance(s, ast.ClassDef):
            return [s]
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and getattr(s, field):
                setattr(s, field, self.block(getattr(s, field)))
        for h in getattr(s, "handlers", []):
            h.body = self.block(h.body)
        if isinstance(s, ast.If):
            return _located(self.if_stmt(s), s)
        if isinstance(s, ast.While):
            return _located(self.while_stmt(s), s)
        if isinstance(s, ast.For):
            return _located(self.for_stmt(s), s)
        return [s]

    # --- state of one statement ---------------------------------------------------------------------

    def _state(self, s, live):
        """(state names, nonlocal names, names to pre-bind as Undefined) of a converted loop: the variables it
        changes that are live into or out of it, then the attributes and subscripts it assigns (TF's rule)."""
        modified = s._ag_modified - self.globals
        state = sorted(modified & live) + _composites(s, s._ag_live_in)
        nonlocal_ = sorted(n for n in modified if n in s._ag_defined or n in live)
        undefined = [n for n in state if n not in s._ag_defined and n in modified]
        return state, nonlocal_, undefined

    def _decls(self, nonlocal_, s):
        decls = [ast.Nonlocal(names=nonlocal_)] if nonlocal_ else []
        globals_ = sorted(s._ag_modified & self.globals)
        return decls + ([ast.Global(names=globals_)] if globals_ else [])

    def _state_fns(self, state):
        get_name, set_name, arg = self.names.new("get_state"), self.names.new("set_state"), self.names.new("vars_")
        getter = _def(get_name, [], [ast.Return(value=ast.Tuple(elts=[_state_load(n) for n in state],
                                                                ctx=ast.Load()))])
        simple = [n for n in state if n.isidentifier()]
        setter_body = [ast.Assign(targets=[ast.Tuple(elts=[_state_store(n) for n in state], ctx=ast.Store())],
                                  value=_load(arg))] if state else [ast.Pass()]
        setter_body = ([ast.Nonlocal(names=simple)] if simple else []) + setter_body
        return [getter, _def(set_name, [arg], setter_body)], get_name, set_name

    def _prebind(self, undefined):
        return [ast.Assign(targets=[_store(n)], value=_call(_ag("Undefined"), ast.Constant(n))) for n in undefined]

    # --- statements --------------------------------------------------------------------------------

    def if_stmt(self, s):
        """`ag__.if_stmt(test, body, orelse, get_state, set_state, names, nouts)`: the state is the outputs (the
        variables changed and live after the `if`, and the attributes and subscripts assigned) followed by the
        changed variables only read before being changed (each branch starts from their values before the `if`)."""
        outputs, nonlocal_, undefined = self._state(s, s._ag_live_out)
        modified = s._ag_modified - self.globals
        inputs = sorted((modified & s._ag_live_in) - s._ag_live_out)
        undefined += [n for n in inputs if n not in s._ag_defined]
        state = outputs + inputs
        body_name, else_name = self.names.new("if_body"), self.names.new("else_body")
        fns, get_name, set_name = self._state_fns(state)
        body = _def(body_name, [], self._decls(nonlocal_, s) + s.body)
        orelse = _def(else_name, [], self._decls(nonlocal_, s) + s.orelse)
        call = _call(_ag("if_stmt"), s.test, _load(body_name), _load(else_name), _load(get_name), _load(set_name),
                     _strs(state), ast.Constant(len(outputs)))
        return self._prebind(undefined) + fns + [body, orelse, ast.Expr(value=call)]

    def while_stmt(self, s):
        state, nonlocal_, undefined = self._state(s, s._ag_live_in | s._ag_live_out)
        opts, body_stmts = _loop_options(s.body)
        test_name, body_name = self.names.new("loop_test"), self.names.new("loop_body")
        fns, get_name, set_name = self._state_fns(state)
        test = _def(test_name, [], [ast.Return(value=s.test)])
        body = _def(body_name, [], self._decls(nonlocal_, s) + body_stmts)
        call = _call(_ag("while_stmt"), _load(test_name), _load(body_name), _load(get_name), _load(set_name),
                     _strs(state), opts, *_loop_local(s, state))
        return self._prebind(undefined) + fns + [test, body, ast.Expr(value=call)]

    def for_stmt(self, s):
        state, nonlocal_, undefined = self._state(s, s._ag_live_in | s._ag_live_out)
        opts, body_stmts = _loop_options(s.body)
        body_name, item = self.names.new("loop_body"), self.names.new("itr")
        fns, get_name, set_name = self._state_fns(state)
        bind = ast.Assign(targets=[s.target], value=_load(item))
        body = _def(body_name, [item], self._decls(nonlocal_, s) + [ast.copy_location(bind, s)] + body_stmts)
        out = self._prebind(undefined) + fns + [body]
        extra = ast.Constant(None)
        flags = getattr(s, "_ag_extra", [])
        if flags:
            extra_name = self.names.new("extra_test")
            test = ast.BoolOp(op=ast.And(), values=[jumps.not_flag(f) for f in flags]) if len(flags) > 1 \
                else jumps.not_flag(flags[0])
            out.append(_def(extra_name, [], [ast.Return(value=test)]))
            extra = _load(extra_name)
        call = _call(_ag("for_stmt"), s.iter, extra, _load(body_name), _load(get_name), _load(set_name),
                     _strs(state), opts, *_loop_local(s, state))
        return out + [ast.Expr(value=call)]


def _composites(s, live_in):
    """The attributes and subscripts a statement assigns whose names are all live into it, as source text."""
    return sorted(key for key, support in s._ag_composites.items() if support <= live_in)


def _state_load(name):
    """A state entry read by get_state: a variable, or `ag__.ldu(lambda: x.a, "x.a")` (Undefined if missing)."""
    if name.isidentifier():
        return _load(name)
    return _call(_ag("ldu"), _thunk(_parse(name)), ast.Constant(name))


def _state_store(name):
    if name.isidentifier():
        return _store(name)
    target = _parse(name)
    target.ctx = ast.Store()
    return target


def _parse(source):
    """An expression node for source text, without locations (it takes those of the statement it serves)."""
    node = ast.parse(source, mode="eval").body
    for n in ast.walk(node):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(n, attr):
                delattr(n, attr)
    return node


def _loop_local(s, state):
    """[names of the loop's state not live after it] when there are any (they may start the loop undefined)."""
    local = [n for n in state if n not in s._ag_live_out and n.isidentifier()]
    return [_strs(local)] if local else []


def _declared(stmts, kind):
    return {n for s in stmts for node in ast.walk(s) if isinstance(node, kind) for n in node.names}


def _annotate_modified(stmts):
    """Record on each if/while/for the names it binds, before its blocks move into nested functions."""
    for s in stmts:
        if isinstance(s, (ast.If, ast.While, ast.For)):
            s._ag_modified = analysis.bound(s.body + s.orelse + ([s.target] if isinstance(s, ast.For) else []))
            s._ag_composites = analysis.composites(s.body + s.orelse)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list):
                _annotate_modified(getattr(s, field))
        for h in getattr(s, "handlers", []):
            _annotate_modified(h.body)


def _loop_options(body):
    """(`set_loop_options` keywords as a dict node, the body without that directive)."""
    keys, values, rest = [], [], []
    for s in body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and _callee_name(s.value) == "set_loop_options":
            for kw in s.value.keywords:
                keys.append(ast.Constant(kw.arg))
                values.append(kw.value)
            continue
        rest.append(s)
    return ast.Dict(keys=keys, values=values), rest


def _callee_name(call):
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def convert_nested(fn_node, globals_):
    """Convert a nested def in place and mark it as converted (converted_call then calls it directly)."""
    params = _params(fn_node.args)
    if _is_generator(fn_node) or isinstance(fn_node, ast.AsyncFunctionDef):
        return fn_node
    inner_globals = set(globals_) | _declared(fn_node.body, ast.Global)
    FunctionConverter(fn_node, params, inner_globals).convert()
    fn_node.decorator_list = fn_node.decorator_list + [_ag("autograph_artifact")]
    return fn_node


def _params(args):
    return {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a}


def _is_generator(fn_node):
    todo = list(fn_node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (*_SCOPES, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return False


class ExpressionConverter(ast.NodeTransformer):
    """and/or/not, conditional expressions and calls; runs after the statement conversion."""

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for v in reversed(node.values[:-1]):
            result = _call(_ag(fn), _thunk(v), _thunk(result))
        return ast.copy_location(result, node)

    def visit_Compare(self, node):
        """`a < b < c` -> `ag__.compare_chain(a, ("<", lambda: b), ("<", lambda: c))`: on tensors TF's
        `a < b and b < c` (b evaluated once), Python's chain otherwise."""
        self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        links = [ast.Tuple(elts=[ast.Constant(type(op).__name__), _thunk(right)], ctx=ast.Load())
                 for op, right in zip(node.ops, node.comparators)]
        return ast.copy_location(_call(_ag("compare_chain"), node.left, *links), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(_call(_ag("not_"), node.operand), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call(_ag("if_exp"), node.test, _thunk(node.body), _thunk(node.orelse)), node)

    def visit_Lambda(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call(_ag("autograph_artifact"), node), node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == AG and f.attr == "ldu":
            return node  # a state read made by the statement conversion
        self.generic_visit(node)
        if isinstance(f, ast.Name) and f.id in _FRAME_BUILTINS:
            if f.id == "super" and not node.args:
                return node  # given its arguments by the caller (see convert_function)
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == AG:
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        kwargs = ast.Dict(keys=[k.arg and ast.Constant(k.arg) for k in node.keywords],
                          values=[k.value for k in node.keywords]) if node.keywords else ast.Constant(None)
        func = _ag("converted_call")
        ast.copy_location(func, node)
        func.end_lineno, func.end_col_offset = node.lineno, node.col_offset  # (see _header)
        return ast.copy_location(_call(func, f, args, kwargs), node)


def _thunk(expr):
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])
    return ast.copy_location(ast.Lambda(args=args, body=expr), expr)


def fix_super(fn_node, self_name):
    """`super()` -> `super(__class__, self)`: the converted code is compiled outside its class body."""
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super" and not n.args \
                and self_name:
            n.args = [_load("__class__"), _load(self_name)]


def bind_nonlocals(tree, free_vars):
    """Pre-bind, as Undefined, each name a nested function declares nonlocal but its parent never binds (a
    name local to one converted block whose inner blocks were themselves converted)."""
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        own = analysis.bound(fn.body) | _params(fn.args) | _declared_here(fn.body) | set(free_vars)
        needed = set()
        for child in _direct_defs(fn.body):
            needed |= {n for s in child.body if isinstance(s, ast.Nonlocal) for n in s.names}
        missing = sorted(needed - own)
        if missing:
            pre = [ast.Assign(targets=[_store(n)], value=_call(_ag("Undefined"), ast.Constant(n))) for n in missing]
            fn.body = _located(pre, fn.body[0]) + fn.body


def _declared_here(stmts):
    return {n for s in stmts if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}


def _direct_defs(stmts):
    """Function definitions nested in `stmts` without an intermediate function (lambdas have no nonlocal)."""
    todo, out = list(stmts), []
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(n)
        elif not isinstance(n, (ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return out
