"""Static facts about one function's statements: names bound, names read, possibly-defined and live sets."""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound_by(node, out):
    """Add the names `node` binds in the current scope (not those of nested scopes)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out.add(node.name)
        return
    if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        out.add(node.id)
    elif isinstance(node, ast.alias):
        out.add((node.asname or node.name).split(".")[0])
    elif isinstance(node, ast.ExceptHandler) and node.name:
        out.add(node.name)
    for child in ast.iter_child_nodes(node):
        _bound_by(child, out)


def bound(nodes):
    """Names bound (assigned, deleted, defined, imported) by statements, in this scope."""
    out = set()
    for n in nodes if isinstance(nodes, list) else [nodes]:
        _bound_by(n, out)
    return out


def _composite_key(node):
    """The source of a target like `x.a`, `x["b"]` or `y[i]` (a name reached by attributes and subscripts whose
    keys are constants or names), with the names it depends on; None for any other target."""
    support, n = set(), node
    while isinstance(n, (ast.Attribute, ast.Subscript)):
        if isinstance(n, ast.Subscript):
            key = n.slice
            if isinstance(key, ast.Name):
                support.add(key.id)
            elif not isinstance(key, ast.Constant):
                return None
        n = n.value
    if not isinstance(n, ast.Name) or n is node:
        return None
    support.add(n.id)
    return ast.unparse(node), frozenset(support)


def _targets(node):
    if isinstance(node, (ast.Assign,)):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
        return [node.target]
    return []


def composites(nodes):
    """{source: names it depends on} of the attributes and subscripts assigned by statements, in this scope."""
    out, todo = {}, list(nodes)
    while todo:
        n = todo.pop()
        if isinstance(n, (*_SCOPES, *_COMPREHENSIONS)):
            continue
        for t in _targets(n):
            for e in ast.walk(t):
                if isinstance(e, (ast.Attribute, ast.Subscript)) and isinstance(e.ctx, ast.Store):
                    key = _composite_key(e)
                    if key is not None:
                        out.setdefault(*key)
        todo.extend(ast.iter_child_nodes(n))
    return out


def reads(node):
    """Names read anywhere in `node`, nested scopes included (a closure may read them later)."""
    out = set()
    for n in ast.walk(node) if not isinstance(node, list) else [m for x in node for m in ast.walk(x)]:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, ast.Delete):
            out.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return out


def _header_reads(s):
    """Names read by a compound statement's own header (not its blocks)."""
    if isinstance(s, (ast.If, ast.While)):
        return reads(s.test)
    if isinstance(s, ast.For):
        return reads(s.iter) | set(getattr(s, "_ag_extra", ()))  # the flags its extra test reads (jumps.py)
    if isinstance(s, ast.With):
        return reads([i.context_expr for i in s.items])
    return set()


def defined(stmts, before):
    """Annotate each compound statement with `_ag_defined` (names possibly bound before it); return after."""
    d = set(before)
    for s in stmts:
        d = _defined_stmt(s, d)
    return d


def _defined_stmt(s, d):
    if isinstance(s, ast.If):
        s._ag_defined = set(d)
        return defined(s.body, d) | defined(s.orelse, d)
    if isinstance(s, (ast.While, ast.For)):
        s._ag_defined = set(d)
        inner = d | bound(s)  # a later iteration sees what an earlier one bound
        defined(s.body, inner)
        defined(s.orelse, inner)
        return inner
    if isinstance(s, ast.With):
        s._ag_defined = set(d)
        return defined(s.body, d | bound([i.optional_vars for i in s.items if i.optional_vars]))
    if isinstance(s, ast.Try):
        after = defined(s.body, d)
        for h in s.handlers:
            after |= defined(h.body, d | after | ({h.name} if h.name else set()))
        after = defined(s.orelse, after)
        return defined(s.finalbody, after)
    return d | bound(s)


def live(stmts, out):
    """Annotate compound statements with `_ag_live_out` (and loops with `_ag_live_in`); return live-in."""
    for s in reversed(stmts):
        out = _live_stmt(s, out)
    return out


def _live_stmt(s, out):
    if isinstance(s, ast.If):
        s._ag_live_out = set(out)
        s._ag_live_in = reads(s.test) | live(s.body, out) | live(s.orelse, out)
        return s._ag_live_in
    if isinstance(s, (ast.While, ast.For)):
        return _live_loop(s, out)
    if isinstance(s, ast.With):
        s._ag_live_out = set(out)
        return _header_reads(s) | live(s.body, out)
    if isinstance(s, ast.Try):
        after = live(s.finalbody, out)
        handlers = set().union(*[live(h.body, after) for h in s.handlers]) if s.handlers else set()
        return live(s.body, live(s.orelse, after) | handlers) | handlers
    if isinstance(s, _SCOPES) or not isinstance(s, ast.stmt) or _is_simple(s):
        return (out - _definitely_bound(s)) | reads(s)
    return out | reads(s)  # anything else (match, ...): assume it reads everything it names


def _is_simple(s):
    return not any(isinstance(getattr(s, f, None), list) and getattr(s, f) and isinstance(getattr(s, f)[0], ast.stmt)
                   for f in ("body", "orelse", "finalbody", "handlers"))


def _definitely_bound(s):
    if isinstance(s, ast.Delete):
        return set()
    return bound(s)


def _live_loop(s, out):
    """Live sets of a loop: iterate the body to a fixed point (a value may flow into the next iteration)."""
    after = live(s.orelse, out)
    target = bound(s.target) if isinstance(s, ast.For) else set()
    tests = _header_reads(s) if isinstance(s, ast.While) else set(getattr(s, "_ag_extra", ()))
    head = after | tests
    while True:
        body_in = live(s.body, head | tests)
        new = head | body_in - target
        if new == head:
            break
        head = new
    s._ag_live_out = set(out)
    s._ag_live_in = head | _header_reads(s)
    return s._ag_live_in
