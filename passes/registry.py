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
from tfn.passes import options as pass_options
from tfn.passes import target as target_mod
from tfn.passes.pipelines import PIPELINES

PASSES = {}  # the passes loaded so far: name -> Pass


class PassFailure(Exception):
    """A tfn pass failed; its diagnostics were already emitted at the offending ops' locations."""


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str
    run: object  # fn(module_operation, **options) -> None; emits diagnostics and raises PassFailure on error
    options: tuple = ()  # the pass's declared options (passes/options.py Option), passed to run by keyword


def _module_name(name):
    return "tfn.passes." + name.replace("-", "_")


def register(name, summary, options=()):
    """Decorator registering `fn(module_op, **options)` as the tfn pass `name` with its declared options,
    defined in the file named after it."""
    def deco(fn):
        if name in PASSES:
            raise ValueError(f"pass {name} registered twice")
        if fn.__module__ != _module_name(name):
            raise ValueError(f"pass {name} must be defined in {_module_name(name)}, not {fn.__module__}")
        PASSES[name] = Pass(name, summary, fn, tuple(options))
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


def add_to(pm, pipeline, target=None):
    """Append a textual pipeline to a PassManager; tfn pass and pipeline names are expanded here.

    A tfn pass's options are parsed (OptionError, a ValueError, on an unknown option or a bad value); those not
    given take the defaults of `target` (default: target.current())."""
    target = target_mod.current() if target is None else target
    for element in split_pipeline(pipeline):
        name, text = pass_options.split_element(element)
        if name in PIPELINES:
            pass_options.parse(name, text, ())  # a named pipeline takes no options
            add_to(pm, PIPELINES[name].text, target)
        elif (p := get_pass(name)) is not None:
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

# The pass manager verifies the whole module after every pass unless told not to: on bench case (h)'s training step
# (~12,000 ops in the LLVM stage) that was ~130 of tfn-pipeline's ~410 ms. `run` verifies once, after the pipeline
# (translation to LLVM IR must never see invalid IR); with VERIFY_EACH_PASS set to 1 in the environment (the test
# suite sets it) it verifies after each pass, as tfn-opt always does, so a pass that breaks the IR is named.
VERIFY_EACH_PASS = "TFN_VERIFY_EACH_PASS"


def verify_each_pass():
    """Whether `run` verifies the module after each pass (TFN_VERIFY_EACH_PASS=1) or once after the pipeline."""
    return os.environ.get(VERIFY_EACH_PASS, "0") == "1"


def run(pipeline, module_op, target=None):
    """Run `pipeline` on a builtin.module operation in the current context, tfn passes' options defaulting to
    `target`'s (default: target.current()); raises ir.MLIRError on failure.

    In the shared context a pass manager built earlier is reused: taken out of the pool while it runs (a
    pipeline run meanwhile, by a pass or another thread, gets its own) and put back after a successful run.
    The module is verified once, after the last pass (after each with TFN_VERIFY_EACH_PASS=1)."""
    ctx = ir.Context.current
    target = target_mod.current() if target is None else target
    each = verify_each_pass()
    if not dialect_context.is_shared(ctx):
        pm = pass_manager(pipeline, ctx, target)
        pm.enable_verifier(each)
        pm.run(module_op)
        if not each:
            module_op.verify()
        return
    pipeline = spelled_out(pipeline, target)  # what runs: a pass manager of one target never serves another
    pool = _idle.setdefault((pipeline, each), [])
    try:
        pm = pool.pop()
    except IndexError:
        pm = pass_manager(pipeline, ctx, target)
        pm.enable_verifier(each)
    pm.run(module_op)
    if not each:
        module_op.verify()
    pool.append(pm)


def pipeline_text(name, target=None):
    """The pipeline `name` spelled out for `target` (default: target.current()): named pipelines expanded, every
    tfn pass with options given all of them explicitly. The same text compiles the same way on any machine, so
    hashing it (with the target's cache_key) keys artifacts by target."""
    return spelled_out(name, target_mod.current() if target is None else target)


@functools.lru_cache(maxsize=None)
def spelled_out(pipeline, target):
    """A pipeline text with named pipelines expanded and every tfn pass's options explicit for `target`; the text
    itself when it has neither to spell out."""
    parts = _explicit(pipeline, target)
    return pipeline if parts == split_pipeline(pipeline) else ", ".join(parts)


def _explicit(pipeline, target):
    """The elements of a pipeline text, named pipelines expanded and tfn passes' options all given."""
    out = []
    for element in split_pipeline(pipeline):
        name, given = pass_options.split_element(element)
        if name in PIPELINES:
            pass_options.parse(name, given, ())  # a named pipeline takes no options
            out += _explicit(PIPELINES[name].text, target)
            continue
        p = get_pass(name)
        if p is not None and p.options:
            values = pass_options.resolve(p.options, pass_options.parse(name, given, p.options), target)
            out.append(f"{name}{{{pass_options.render(p.options, values)}}}")
        else:
            out.append(element)
    return out
