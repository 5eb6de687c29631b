"""Imports flow one way, dialects <- passes <- runtime <- frontend: every import statement of the source, including
those inside functions, is read with `ast` and checked against the layer of the file that holds it."""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = {"dialects": 0, "passes": 1, "runtime": 2, "frontend": 3}  # folder -> rank: import only ranks <= own
PACKAGES = {"tfn.dialects": "dialects", "tfn.passes": "passes", "tfn.runtime": "runtime", "tfn.tools": "tools"}
# The frontend reaches passes only through the runtime; this file needs the passes' folder, not their code.
FRONTEND_PASSES_ALLOWED = {"frontend/core/graph.py": "its folder names frames internal to tfn"}


def _sources(folder):
    for here, dirs, files in os.walk(os.path.join(ROOT, folder)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.relpath(os.path.join(here, f), ROOT)


def imported_modules(source):
    """(line, module) for each module an import statement or `importlib.import_module("...")` names; `from a import
    b` names a.b (b may be a submodule)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names if alias.name != "*"]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            out.append((node.lineno, node.args[0].value))
    return out


def _imports(path):
    with open(os.path.join(ROOT, path)) as f:
        return imported_modules(f.read())


def _folder(module):
    """The source folder of a tfn module name (frontend for the public package), else None (not tfn)."""
    if module != "tfn" and not module.startswith("tfn."):
        return None
    for package, folder in PACKAGES.items():
        if module == package or module.startswith(package + "."):
            return folder
    return "frontend"


def _within(module, package):
    return module == package or module.startswith(package + ".")


def test_the_checker_sees_imports_inside_functions_and_by_name():
    src = ("def f():\n    from tfn.passes.lowering import callbacks\n"
           "def g():\n    import importlib\n    importlib.import_module('tfn.passes.lowering.gather')\n"
           "from tfn.passes import lowering\n")
    found = [m for _, m in imported_modules(src)]
    assert found.count("tfn.passes.lowering") == 2 and "tfn.passes.lowering.gather" in found


@pytest.mark.parametrize("folder", sorted(LAYERS))
def test_no_layer_imports_a_higher_one(folder):
    wrong = [f"{path}:{line}: {module}" for path in _sources(folder) for line, module in _imports(path)
             if LAYERS.get(_folder(module), -1) > LAYERS[folder]]
    assert not wrong, "imports of a higher layer:\n" + "\n".join(wrong)


def test_no_frontend_module_imports_the_lowerings():
    """The compiled-code <-> runtime contract lives in tfn.dialects.abi; lowering internals stay behind the runtime."""
    wrong = [f"{path}:{line}: {module}" for path in _sources("frontend") for line, module in _imports(path)
             if _within(module, "tfn.passes.lowering")]
    assert not wrong, "frontend imports of tfn.passes.lowering:\n" + "\n".join(wrong)


def test_the_frontend_reaches_passes_only_through_the_runtime():
    wrong = [f"{path}:{line}: {module}" for path in _sources("frontend") for line, module in _imports(path)
             if _within(module, "tfn.passes") and path not in FRONTEND_PASSES_ALLOWED]
    assert not wrong, "frontend imports of tfn.passes (compile through tfn.runtime):\n" + "\n".join(wrong)
