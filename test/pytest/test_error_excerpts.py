"""User errors end with the user's code: `file:line:col:`, the source line and a caret under the column."""
import inspect
import re

import pytest

import tfn
from tfn.dialects.locations import excerpt, show_source

EXCERPT = re.compile(r"\n  (?P<file>.+):(?P<line>\d+):(?P<col>\d+):\n    (?P<text>.+)\n    (?P<pad> *)\^$")


def _line_of(fn, marker):
    """(line number, text) of the source line of `fn` holding `marker`."""
    lines, first = inspect.getsourcelines(fn)
    index = next(i for i, text in enumerate(lines) if marker in text)
    return first + index, lines[index]


def _check_excerpt(message, fn, marker, expression):
    """`message` ends with the excerpt of the line of `fn` holding `marker`, the caret under `expression`."""
    m = EXCERPT.search(message)
    assert m, message
    line, text = _line_of(fn, marker)
    col = text.index(expression) + 1
    assert (m["file"], int(m["line"]), int(m["col"])) == (__file__, line, col)
    assert m["text"] == text.strip()
    assert m["text"][len(m["pad"]):].startswith(expression)


def test_a_trace_time_dtype_error_shows_the_expression():
    @tfn.function
    def f(x):
        y = tfn.cast(x, tfn.int32)
        return tfn.exp(x) * y  # the bad op

    with pytest.raises(tfn.errors.InvalidArgumentError) as info:
        f(tfn.constant([1.0]))
    message = str(info.value)
    assert "in tfn.function 'f' at " in message  # the message keeps its text; the excerpt follows it
    _check_excerpt(message, f.python_function, "# the bad op", "tfn.exp(x) * y")


def test_an_autograph_error_shows_the_statement():
    @tfn.function
    def f(x):
        if tfn.reduce_sum(x) > 0.0:  # the if
            y = x
        return y

    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch") as info:
        f(tfn.constant([1.0]))
    _check_excerpt(str(info.value), f.python_function, "# the if", "if tfn.reduce_sum")


def test_a_run_time_index_error_shows_the_op():
    @tfn.function
    def f(x, i):
        z = x * 2.0
        return z + tfn.gather(x, i)  # the gather

    f(tfn.constant([1.0, 2.0]), tfn.constant([1, 0]))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 2\)") as info:
        f(tfn.constant([1.0, 2.0]), tfn.constant([0, 5]))
    _check_excerpt(str(info.value), f.python_function, "# the gather", "tfn.gather(x, i)")


def test_a_leaked_tensor_shows_where_it_was_made():
    leaked = []

    @tfn.function
    def f(x):
        leaked.append(tfn.exp(x))  # the leak
        return x

    @tfn.function
    def g(x):
        return x + leaked[0]

    f(tfn.constant(1.0))
    with pytest.raises(TypeError, match="is out of scope") as info:
        g(tfn.constant(1.0))
    _check_excerpt(str(info.value), f.python_function, "# the leak", "tfn.exp(x)")


def test_the_caret_counts_characters_of_byte_columns():
    # MLIR and Python count columns in UTF-8 bytes: "é" is two bytes, so byte column 10 is the 9th character, "+".
    assert show_source("y = 'é' + x", 10) == "y = 'é' + x\n        ^"
    assert show_source("\tz = x", 4, "  ") == "  \tz = x\n  \t  ^"


def test_no_excerpt_without_source():
    assert excerpt(("<string>", 3, 5)) == ""
    assert excerpt((__file__, 1, 1)).endswith(':1:1:\n    """User errors end with the user\'s code: `file:line:col:`, '
                                              'the source line and a caret under the column."""\n    ^')
