"""tfn's passes by name, and PassManager construction mixing them with upstream passes.

A tfn pass lives in the file named after it (`tfn-to-linalg` in passes/tfn_to_linalg.py, xDSL's rule): the
registry lists the files and imports a pass's module on its first use; the module registers the pass.
"""
import functools
import importlib
import os
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager

from tfn.dialects import context as dialect_context
from tfn.passes.pipelines import PIPELINES

PASSES = {}  # the passes loaded so far: name -> Pass


class PassFailure(Exception):
    """A tfn pass failed; its diagnostics were already emitted at the offending ops' locations."""


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str
    run: object  # fn(module_operation) -> None; emits diagnostics and raises PassFailure on error


def _module_name(name):
    return "tfn.passes." + name.replace("-", "_")


def register(name, summary):
    """Decorator registering `fn(module_op)` as the tfn pass `name`, defined in the file named after it."""
    def deco(fn):
        if name in PASSES:
            raise ValueError(f"pass {name} registered twice")
        if fn.__module__ != _module_name(name):
            raise ValueError(f"pass {name} must be defined in {_module_name(name)}, not {fn.__module__}")
        PASSES[name] = Pass(name, summary, fn)
        return fn
    return deco


@functools.cache
def pass_names():
    """The name of every tfn pass, one per `tfn_*.py` file of this package (pass name = file name)."""
    files = os.listdir(os.path.dirname(__file__))
    return tuple(sorted(f[:-3].replace("_", "-") for f in files if f.startswith("tfn_") and f.endswith(".py")))


def get_pass(name):
    """The tfn pass `name`, its module imported on first use; None when no tfn pass has that name."""
    found = PASSES.get(name)
    if found is not None or name not in pass_names():
        return found
    importlib.import_module(_module_name(name))
    if name not in PASSES:
        raise ValueError(f"{_module_name(name)} does not register the pass {name}")
    return PASSES[name]


def all_passes():
    """Every tfn pass by name (imports each pass's module: for listings, not for running a pipeline)."""
    return {name: get_pass(name) for name in pass_names()}


def _external(p):
    def run(op, pass_):
        try:
            p.run(op)
        except PassFailure:
            pass_.signal_pass_failure()
    run.__name__ = p.name.replace("-", "_")
    return run


def split_pipeline(text):
    """Split a textual pipeline at its top-level commas, dropping an outer `builtin.module(...)`."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def add_to(pm, pipeline):
    """Append a textual pipeline to a PassManager; tfn pass and pipeline names are expanded here."""
    for element in split_pipeline(pipeline):
        name = element.split("{", 1)[0].strip()
        if name in PIPELINES:
            add_to(pm, PIPELINES[name].text)
        elif (tfn_pass := get_pass(name)) is not None:
            pm.add(_external(tfn_pass), name=name, argument=name, description=tfn_pass.summary)
        else:
            pm.add(element)  # upstream; raises ValueError naming the element when unknown
    return pm


def pass_manager(pipeline, context=None):
    """A PassManager on builtin.module running `pipeline` (tfn and upstream names)."""
    # A dialect must never load while a pipeline runs multi-threaded, and the shared context starts with
    # tfn's dialects only (dialects/context.py): load every registered one first (no-op once loaded).
    (context if context is not None else ir.Context.current).load_all_available_dialects()
    pm = PassManager("builtin.module", context=context)
    return add_to(pm, pipeline)


# Idle PassManagers of the shared context (it lives as long as the process) by pipeline, reused by `run`:
# building one costs ~0.4 ms and its first run initializes every pass (canonicalize alone gathers the patterns
# of all loaded dialects), ~3 ms of a small function's compile.
_idle = {}


def run(pipeline, module_op):
    """Run `pipeline` on a builtin.module operation in the current context; raises ir.MLIRError on failure.

    In the shared context a pass manager built earlier is reused: taken out of the pool while it runs (a
    pipeline run meanwhile, by a pass or another thread, gets its own) and put back after a successful run."""
    ctx = ir.Context.current
    if not dialect_context.is_shared(ctx):
        pass_manager(pipeline, ctx).run(module_op)
        return
    pool = _idle.setdefault(pipeline, [])
    try:
        pm = pool.pop()
    except IndexError:
        pm = pass_manager(pipeline, ctx)
    pm.run(module_op)
    pool.append(pm)
