"""`tfn.autograph.experimental`: directives for AutoGraph."""
import functools

from tfn.autograph.conversion import mark_do_not_convert


def do_not_convert(func=None):
    """Decorator: AutoGraph calls `func` as plain Python (it is never converted)."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return mark_do_not_convert(wrapper)


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """In a converted loop body, options of that loop (`shape_invariants=[(var, shape), ...]` relaxes the shape
    a loop variable keeps across iterations). AutoGraph reads the call from the source; run, it does nothing."""
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants
