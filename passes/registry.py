"""tfn's passes by name, and PassManager construction mixing them with upstream passes."""
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager

from tfn.dialects import context as dialect_context
from tfn.passes.pipelines import PIPELINES

PASSES = {}


class PassFailure(Exception):
    """A tfn pass failed; its diagnostics were already emitted at the offending ops' locations."""


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str
    run: object  # fn(module_operation) -> None; emits diagnostics and raises PassFailure on error


def register(name, summary):
    """Decorator registering `fn(module_op)` as the tfn pass `name`."""
    def deco(fn):
        if name in PASSES:
            raise ValueError(f"pass {name} registered twice")
        PASSES[name] = Pass(name, summary, fn)
        return fn
    return deco


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


def _ensure_loaded():
    # start-up cost: the passes (~20 modules) load when a pipeline first runs, not at `import tfn`; each registers
    # itself on import.
    from tfn.passes import all_passes  # noqa: F401


def add_to(pm, pipeline):
    """Append a textual pipeline to a PassManager; tfn pass and pipeline names are expanded here."""
    _ensure_loaded()
    for element in split_pipeline(pipeline):
        name = element.split("{", 1)[0].strip()
        if name in PIPELINES:
            add_to(pm, PIPELINES[name].text)
        elif name in PASSES:
            pm.add(_external(PASSES[name]), name=name, argument=name, description=PASSES[name].summary)
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
