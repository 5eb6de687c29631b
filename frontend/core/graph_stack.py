"""The graphs being traced on each thread, innermost last: where ops go (None on top: they run eagerly)."""
import threading

_state = threading.local()
# Held while tracing or compiling (MLIR work on the shared context) and while a call key finds its trace, so
# concurrent first calls of one signature trace once. Reentrant: a trace calls other functions, which may trace.
# Calls of traces already compiled never take it: a thread calls them while another traces.
TRACE_LOCK = threading.RLock()


def current():
    """The innermost graph being traced on this thread, or None when executing eagerly."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def stack():
    """The graphs being traced on this thread, outermost first (a copy; None entries run ops eagerly)."""
    return list(getattr(_state, "stack", ()))


def push(graph):
    """Make `graph` current on this thread until `pop()`; None runs ops eagerly (`tf.init_scope`)."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(graph)


def pop():
    _state.stack.pop()
