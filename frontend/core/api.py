"""The public functions: each op's function registered against its OpDef, and the public paths of each function.

`tfn`, `tfn.math`, `tfn.linalg` and `tfn.nn` take their op functions from `EXPORTS` (`namespace`); the
completeness test checks that every op has a function and every exported path resolves.
"""
from tfn.dialects import optable

OP_API = {}  # OpDef -> its public function
EXPORTS = {}  # public path ("add" is tfn.add, "math.add" is tfn.math.add) -> function
NAMESPACES = ("", "math", "linalg", "nn", "debugging")


def export(*paths):
    """Decorator exporting a public function at each path: "name" (tfn.name) or "math.name" (tfn.math.name)."""
    for path in paths:
        prefix, _, name = path.rpartition(".")
        if prefix not in NAMESPACES or not name.isidentifier():
            raise ValueError(f"bad export path {path!r}: want 'name' or one of {NAMESPACES[1:]} then '.name'")

    def deco(fn):
        taken = [path for path in paths if EXPORTS.get(path, fn) is not fn]
        if taken:
            raise ValueError(f"two public functions exported as tfn.{taken[0]}")
        EXPORTS.update(dict.fromkeys(paths, fn))
        return fn
    return deco


def op_api(opdef, exports=()):
    """Decorator registering a public function as the API of `opdef` (an OpDef) and exporting it at `exports`."""
    optable.require([opdef], "a public function")

    def deco(fn):
        if opdef in OP_API:
            raise ValueError(f"two public functions for {opdef.full_name}")
        OP_API[opdef] = fn
        return export(*exports)(fn)
    return deco


def namespace(prefix):
    """The functions exported in one namespace ("" for tfn itself, "math", ...): name -> function."""
    if prefix not in NAMESPACES:
        raise ValueError(f"unknown namespace {prefix!r}")
    return {path.rpartition(".")[2]: fn for path, fn in EXPORTS.items() if path.rpartition(".")[0] == prefix}
