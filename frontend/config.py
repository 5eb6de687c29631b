"""`tfn.config`: run tfn.functions eagerly (for debugging), ask whether code runs eagerly, see the target CPU."""
from tfn import runtime
from tfn.core import graph as graph_mod

_RUN_EAGERLY = [False]


def run_functions_eagerly(run_eagerly):
    """Make every tfn.function run its Python function eagerly instead of tracing (`True`), or not."""
    _RUN_EAGERLY[0] = bool(run_eagerly)


def functions_run_eagerly():
    """Whether tfn.functions currently run eagerly (set by `run_functions_eagerly`)."""
    return _RUN_EAGERLY[0]


def executing_eagerly():
    """False while a tfn.function is being traced on this thread, True otherwise."""
    return graph_mod.current() is None


def get_target():
    """The CPU target compiled code is generated for: ISA, vector width, cores, caches (`.describe()` says it in
    one line). Detected from the host once; TFN_TARGET_FEATURES (`native`, `avx512`, `avx2`, `sse`, `neon`) picks
    a lower instruction-set level, read when code is compiled."""
    return runtime.current_target()
