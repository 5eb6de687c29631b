"""tfn's module-level imports form no cycle, and no function imports a module unless a comment says why.

The import graph is read from the source (Python's `ast`), not by importing: each `tfn.*` module is found
through the package-dir mapping in pyproject.toml. An edge A -> B means A's module-level code imports B
(`import tfn.b`, `from tfn.b import x`, or `from tfn import b` where b is a module). Importing a submodule
also runs its packages' `__init__`; those implicit edges are left out, as every module would then depend on
`tfn/__init__.py`, which imports the whole API.

A function-level import is allowed only with a comment on its line, or in the comment lines above it, that says which
reason holds: `optional dependency` (a package tfn can run without) or `start-up cost` (a module too slow to
load at `import tfn`, or one needed only on a rare path).
"""
import ast
import os
import re
import subprocess
import sys
import tomllib

import tfn  # noqa: F401  (the ops modules it loads install TensorBase's operators)
from tfn.core.tensor import TensorBase

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r"#.*\b(optional dependency|start-up cost)\b")


def _package_dirs():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["package-dir"]


def _modules():
    """{dotted tfn module name: source path} for every .py file of every mapped package."""
    mods = {}
    for pkg, folder in _package_dirs().items():
        here = os.path.join(ROOT, folder)
        for name in sorted(os.listdir(here)):
            if not name.endswith(".py"):
                continue
            mods[pkg if name == "__init__.py" else f"{pkg}.{name[:-3]}"] = os.path.join(here, name)
    return mods


def _parse(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return ast.parse(text, filename=path), text.splitlines()


def _targets(node, mods):
    """The tfn modules an import statement loads: each name's deepest module (`from tfn import b` loads tfn.b)."""
    if isinstance(node, ast.Import):
        return [_deepest(alias.name, mods) for alias in node.names if alias.name.split(".")[0] == "tfn"]
    if node.level or not node.module or node.module.split(".")[0] != "tfn":
        return []
    return [_deepest(f"{node.module}.{alias.name}", mods) for alias in node.names]


def _deepest(name, mods):
    """The longest prefix of a dotted name that is a tfn module."""
    parts = name.split(".")
    while parts and ".".join(parts) not in mods:
        parts.pop()
    return ".".join(parts)


def _module_level_imports(tree):
    """Import statements run when the module loads: at top level, or under a top-level if/try/with."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, field, []))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)


def _function_imports(tree):
    """Import statements inside a function (run when the function is called)."""
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node


def import_graph():
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        tree, _ = _parse(path)
        graph[name] = sorted({t for node in _module_level_imports(tree) for t in _targets(node, mods)
                              if t and t != name})
    return graph


def _strongly_connected(graph):
    """Tarjan's strongly connected components (iterative), each as a sorted list."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    out.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(graph.get(nxt, ()))))
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
    return out


def _one_cycle(graph, comp):
    """A shortest cycle through the first module of a strongly connected component, as a path."""
    members, start = set(comp), comp[0]
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for nxt in graph[path[-1]]:
            if nxt == start:
                return path + [start]
            if nxt in members and nxt not in seen:
                seen.add(nxt)
                paths.append(path + [nxt])
    return comp


def test_no_import_cycle():
    graph = import_graph()
    cycles = [_one_cycle(graph, c) for c in _strongly_connected(graph) if len(c) > 1]
    text = "\n".join(" -> ".join(c) for c in cycles)
    assert not cycles, f"module-level import cycles among tfn modules:\n{text}"


def _comments(lines, lineno):
    """The import's line and the comment lines directly above it."""
    out, i = [lines[lineno - 1]], lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i])
        i -= 1
    return "\n".join(out)


def test_function_level_imports_say_why():
    bad = []
    for path in _modules().values():
        tree, lines = _parse(path)
        for node in _function_imports(tree):
            if not MARKER.search(_comments(lines, node.lineno)):
                bad.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not bad, ("imports inside functions without a `# optional dependency` or `# start-up cost` comment:\n"
                     + "\n".join(bad))


def test_graph_sees_known_edges():
    graph = import_graph()
    assert "tfn.core.tensor" in graph["tfn.core.dispatch"]
    assert "tfn.dtypes" in graph["tfn.core.tensor"]
    assert "tfn.dialects.optable" in graph["tfn.core.dispatch"]
    cyc = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    comps = [c for c in _strongly_connected(cyc) if len(c) > 1]
    assert comps == [["a", "b", "c"]] and _one_cycle(cyc, comps[0]) == ["a", "b", "c", "a"]


def test_import_tfn_installs_every_tensor_operator():
    ops = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "matmul"]
    names = [f"__{o}__" for o in ops] + [f"__r{o}__" for o in ops]
    names += ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__neg__", "__abs__", "__invert__",
              "__getitem__"]
    missing = [n for n in names if TensorBase.__dict__.get(n) is None]
    assert not missing, f"operators not installed on TensorBase by `import tfn`: {missing}"


def test_data_keras_random_load_on_first_use():
    """`import tfn` leaves tfn.autodiff, tfn.data, tfn.keras, tfn.random and tfn.saved_model unloaded (start-up
    cost); each loads when named."""
    code = ("import sys, tfn\n"
            "lazy = ('tfn.autodiff', 'tfn.data', 'tfn.keras', 'tfn.random', 'tfn.saved_model')\n"
            "print(sorted(m for m in sys.modules if m.startswith(lazy)))\n"
            "print(tfn.keras.layers.Dense.__name__, tfn.data.Dataset.__name__, tfn.random.uniform.__name__,\n"
            "      tfn.saved_model.save.__name__, tfn.autodiff.ForwardAccumulator.__name__)\n"
            "from tfn import data\n"
            "import tfn.random as r\n"
            "print(data is tfn.data, r is tfn.random, 'keras' in dir(tfn))\n"
            "try:\n    tfn.no_such_name\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "Dense Dataset uniform save ForwardAccumulator", "True True True",
                   "module 'tfn' has no attribute 'no_such_name'"]


def test_hashlib_loads_with_the_first_digest():
    """`import tfn` leaves hashlib (OpenSSL's libcrypto) unloaded (start-up cost); a compile's cache key loads it."""
    code = ("import sys, tfn\n"
            "print('hashlib' in sys.modules, '_hashlib' in sys.modules)\n"
            "print(float(tfn.function(lambda x: x * 3.0)(tfn.constant(2.0))), 'hashlib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["False False", "6.0 True"]
