"""tfn's passes by name, and PassManager construction mixing them with upstream passes."""
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager

from tfn.dialects import context as dialect_context
from tfn.passes import options as pass_options
from tfn.passes import target as target_mod

PASSES = {}


class PassFailure(Exception):
    """A tfn pass failed; its diagnostics were already emitted at the offending ops' locations."""


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str
    run: object  # fn(module_operation, **options) -> None; emits diagnostics and raises PassFailure on error
    options: tuple = ()  # the pass's declared options (passes/options.py Option), passed to run by keyword


def register(name, summary, options=()):
    """Decorator registering `fn(module_op, **options)` as the tfn pass `name` with its declared options."""
    def deco(fn):
        if name in PASSES:
            raise ValueError(f"pass {name} registered twice")
        PASSES[name] = Pass(name, summary, fn, tuple(options))
        return fn
    return deco


def _external(p, values):
    def run(op, pass_):
        try:
            p.run(op, **values)
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
    from tfn.passes import all_passes  # noqa: F401  (registers every tfn pass and pipeline)


def add_to(pm, pipeline, target=None):
    """Append a textual pipeline to a PassManager; tfn pass and pipeline names are expanded here.

    A tfn pass's options are parsed (OptionError, a ValueError, on an unknown option or a bad value); those not
    given take the defaults of `target` (default: target.current())."""
    _ensure_loaded()
    from tfn.passes.pipelines import PIPELINES
    target = target_mod.current() if target is None else target
    for element in split_pipeline(pipeline):
        name, text = pass_options.split_element(element)
        if name in PIPELINES:
            pass_options.parse(name, text, ())  # a named pipeline takes no options
            add_to(pm, PIPELINES[name].text, target)
        elif name in PASSES:
            p = PASSES[name]
            values = pass_options.resolve(p.options, pass_options.parse(name, text, p.options), target)
            pm.add(_external(p, values), name=name, argument=name, description=p.summary)
        else:
            pm.add(element)  # upstream; raises ValueError naming the element when unknown
    return pm


def pass_manager(pipeline, context=None, target=None):
    """A PassManager on builtin.module running `pipeline` (tfn and upstream names; tfn passes' options default to
    `target`'s, default: target.current())."""
    # A dialect must never load while a pipeline runs multi-threaded, and the shared context starts with
    # tfn's dialects only (dialects/context.py): load every registered one first (no-op once loaded).
    (context if context is not None else ir.Context.current).load_all_available_dialects()
    pm = PassManager("builtin.module", context=context)
    return add_to(pm, pipeline, target)


# Idle PassManagers of the shared context (it lives as long as the process) by pipeline (spelled out: the options
# of the target's passes named), reused by `run`:
# building one costs ~0.4 ms and its first run initializes every pass (canonicalize alone gathers the patterns
# of all loaded dialects), ~3 ms of a small function's compile.
_idle = {}


def run(pipeline, module_op, target=None):
    """Run `pipeline` on a builtin.module operation in the current context, tfn passes' options defaulting to
    `target`'s (default: target.current()); raises ir.MLIRError on failure.

    In the shared context a pass manager built earlier is reused: taken out of the pool while it runs (a
    pipeline run meanwhile, by a pass or another thread, gets its own) and put back after a successful run."""
    from tfn.passes.pipelines import spelled_out
    ctx = ir.Context.current
    target = target_mod.current() if target is None else target
    if not dialect_context.is_shared(ctx):
        pass_manager(pipeline, ctx, target).run(module_op)
        return
    pipeline = spelled_out(pipeline, target)  # what runs: a pass manager of one target never serves another
    pool = _idle.setdefault(pipeline, [])
    try:
        pm = pool.pop()
    except IndexError:
        pm = pass_manager(pipeline, ctx, target)
    pm.run(module_op)
    pool.append(pm)
