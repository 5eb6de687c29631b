"""The graphs being traced on each thread, innermost last: where ops go (None on top: they run eagerly)."""
import threading

_state = threading.local()


def current():
    """The innermost graph being traced on this thread, or None when executing eagerly."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def push(graph):
    """Make `graph` current on this thread until `pop()`; None runs ops eagerly (`tf.init_scope`)."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(graph)


def pop():
    _state.stack.pop()
