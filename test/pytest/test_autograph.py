"""AutoGraph: converted control flow (what the guide's examples in examples/sections/autograph.py do beyond what
they print), conversion of the functions a tfn.function calls, and every AutoGraph error naming the variable and
the user's line."""
import os
import sys
import traceback
import warnings

import guide
import numpy as np
import pytest

import tfn
from tfn.autograph import AutoGraphWarning

HERE = __file__


def _line_of(fn, text):
    """The file line number of the first line of fn's source containing text."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# --- the guide's examples ------------------------------------------------------------------------------------

def test_simple_loop_prints_each_iteration(capsys):
    f = guide.run("autograph.py").namespace["f"]  # the guide's simple loop: while reduce_sum(x) > 1: print, tanh
    x = np.array([0.9, 0.8, 0.7], np.float32)
    out = f(tfn.constant(x)).numpy()
    expected, printed = x, []
    while expected.sum() > 1:
        printed.append(expected)
        expected = np.tanh(expected)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(printed) == 11
    assert lines[0] == "[0.9 0.8 0.7]"


def test_dynamic_rnn_accumulates_in_a_tensor_array():
    ns = guide.run("autograph.py").namespace  # the guide's dynamic_rnn: a `for` over tf.range writing a TensorArray
    x = np.random.default_rng(0).uniform(size=(2, 3, 4)).astype(np.float32)
    dynamic_rnn, rnn_step = ns["dynamic_rnn"], ns["rnn_step"]
    out = dynamic_rnn(rnn_step, tfn.constant(x), tfn.zeros([2, 4]))
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1), rtol=1e-6)
    text = dynamic_rnn.experimental_get_compiler_ir(rnn_step, tfn.constant(x), tfn.zeros([2, 4]))()
    assert text.count("scf.while") == 1


# --- conversion ----------------------------------------------------------------------------------------------

def test_python_conditions_and_loops_stay_python(capsys):
    @tfn.function
    def f(x, flag, n):
        if flag:
            print("true branch")
            x = x + 1
        else:
            print("false branch")
        for _ in range(n):
            x = x * 2
        k = 0
        while k < n:
            k += 1
        return x + k, (flag and "yes"), (flag or "no"), not flag

    out = f(tfn.constant(1), True, 3)
    assert out[0].numpy() == 19 and out[1].numpy() == b"yes" and out[2].numpy() and not out[3].numpy()
    assert capsys.readouterr().out == "true branch\n"
    text = f.experimental_get_compiler_ir(tfn.constant(1), False, 2)()
    assert "scf." not in text and text.count('"tfn.multiply"') == 2
    assert capsys.readouterr().out == "false branch\n"


def test_early_returns_in_branches():
    @tfn.function
    def sign(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1
        return 0

    assert [sign(tfn.constant(v)).numpy() for v in (5, -5, 0)] == [1, -1, 0]
    assert sign.experimental_get_compiler_ir(tfn.constant(1))().count("scf.if") == 2


def test_while_break_continue_and_return_in_python_loop():
    @tfn.function
    def f(x):
        total = x
        i = 0
        while True:
            i += 1
            if i % 2:
                continue
            if i > 6:
                break
            total = total + i
        for j in [10, 20, 30]:
            if j == 30:
                return total + j
        return total

    assert f(tfn.constant(1)).numpy() == 1 + 2 + 4 + 6 + 30


def test_user_functions_methods_closures_and_lambdas_are_converted():
    offset = tfn.constant(100)

    def helper(a, b=2):
        if a > b:
            a = a - b
        else:
            a = a + b
        return a + offset

    class Model:
        scale = 3

        def apply(self, x):
            if x > 0:
                y = x * self.scale
            else:
                y = -x
            return y

        def __call__(self, x):
            return self.apply(x) if x > 10 else x  # a conditional expression on a tensor: a select

    def counter():
        n = 0

        def bump(x):
            nonlocal n
            n += 1
            if x > 0:
                x = x + n
            return x
        return bump, lambda: n

    bump, count = counter()
    m = Model()

    @tfn.function
    def f(x):
        g = lambda v: v * 2 if v > 0 else v  # noqa: E731
        return helper(x), m.apply(x), m(x), g(x), bump(x)

    ir = f.experimental_get_compiler_ir(tfn.constant(5))()
    assert ir.count("scf.if") == 4 and ir.count('"tfn.select"') == 2
    assert [t.numpy() for t in f(tfn.constant(5))] == [103, 15, 5, 10, 6]
    assert [t.numpy() for t in f(tfn.constant(-5))] == [97, 5, -5, -5, -5]
    assert count() == 1  # the closure's cell is shared with the original: its nonlocal write ran in the one trace


def test_nested_function_and_tfn_function_calls_are_converted():
    @tfn.function
    def inner(x):
        if x > 0:
            x = x * 10
        return x

    @tfn.function
    def outer(x):
        def local(y):
            while y < 100:
                y = y * 2
            return y
        return local(inner(x))

    assert outer(tfn.constant(3)).numpy() == 120
    assert outer.experimental_get_compiler_ir(tfn.constant(3))().count("scf.while") == 1


def test_autograph_false_and_do_not_convert_leave_python(capsys):
    @tfn.function(autograph=False)
    def plain(x):
        if x > 0:
            return x
        return -x

    @tfn.autograph.experimental.do_not_convert
    def helper(x):
        if x > 0:
            return x
        return -x

    @tfn.function
    def calls_helper(x):
        return helper(x)

    for fn, text in ((plain, "if x > 0:"), (calls_helper, "if x > 0:")):
        with pytest.raises(tfn.errors.OperatorNotAllowedInGraphError) as info:
            fn(tfn.constant(1))
        assert isinstance(info.value, TypeError)
        assert "as a Python `bool` is not allowed" in str(info.value)
        assert "tfn.cond" in str(info.value)
        frames = [(fr.filename, fr.line) for fr in traceback.extract_tb(info.value.__traceback__)]
        assert (HERE, text) in frames  # the user's own line is in the traceback
    assert tfn.autograph.experimental.set_loop_options() is None


def test_library_code_is_not_converted_and_conversion_is_cached():
    def user(x):
        if x > 0:
            x = -x
        return x

    from tfn.autograph import convert
    assert convert(np.sum) is np.sum and convert(tfn.reduce_sum) is tfn.reduce_sum
    assert convert(traceback.format_exc) is traceback.format_exc
    first = convert(user)
    assert first is not user and convert(user) is first
    assert first(3) == -3  # eagerly, converted code is plain Python


def test_unavailable_source_warns_and_runs_unconverted():
    namespace = {}
    exec("def nosrc(x):\n    return x + 1 if x is not None else x\n", namespace)  # noqa: S102
    nosrc = namespace["nosrc"]

    @tfn.function
    def f(x):
        return nosrc(x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert f(tfn.constant(1)).numpy() == 2
    messages = [str(w.message) for w in caught if issubclass(w.category, AutoGraphWarning)]
    assert messages == ["AutoGraph could not convert nosrc (its source code is not available: could not get "
                        "source code); it runs unconverted, as plain Python."]


def test_large_unrolled_python_loop_warns():
    @tfn.function
    def f(x):
        for _ in range(3001):
            x = x + 1
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f.get_concrete_function(tfn.TensorSpec([], tfn.int32))
    messages = [str(w.message) for w in caught if issubclass(w.category, AutoGraphWarning)]
    assert len(messages) == 1 and "Large unrolled loop detected" in messages[0]
    assert f"{HERE}:{_line_of(f.python_function, 'for _ in range')}" in messages[0]


def test_set_loop_options_relaxes_a_shape():
    @tfn.function
    def grow(n):
        x = tfn.zeros([1])
        for _ in tfn.range(n):
            tfn.autograph.experimental.set_loop_options(shape_invariants=[(x, tfn.TensorShape([None]))])
            x = tfn.concat([x, x], 0)
        return x

    assert grow(tfn.constant(3)).shape == (8,)


# --- errors name the variable and the user's line --------------------------------------------------------------

def _error(fn, *args, cls=Exception):
    with pytest.raises(cls) as info:
        fn(*args)
    return str(info.value)


def test_variable_set_in_one_branch_and_used_after():
    @tfn.function
    def main_only(x):
        if x > 0:
            y = x
        return y

    @tfn.function
    def else_only(x):
        if x > 0:
            pass
        else:
            y = x
        return y

    @tfn.function
    def not_used_after(x):
        if x > 0:
            tmp = x * 2
            x = tmp
        return x

    msg = _error(main_only, tfn.constant(1), cls=ValueError)
    assert msg.startswith("'y' must also be initialized in the else branch")
    assert f"{HERE}:{_line_of(main_only.python_function, 'if x > 0')}" in msg
    msg = _error(else_only, tfn.constant(1), cls=ValueError)
    assert msg.startswith("'y' must also be initialized in the main branch")
    assert f"{HERE}:{_line_of(else_only.python_function, 'if x > 0')}" in msg
    assert not_used_after(tfn.constant(2)).numpy() == 4


def test_branch_dtype_mismatch_names_the_variable():
    @tfn.function
    def f(x):
        if x > 0:
            y = tfn.constant(1.0)
        else:
            y = tfn.constant(1)
        return y

    msg = _error(f, tfn.constant(1), cls=TypeError)
    assert "'y' has dtype float32 in the main branch, but dtype int32 in the else branch" in msg
    assert f"{HERE}:{_line_of(f.python_function, 'if x > 0')}" in msg


def test_loop_variable_errors():
    @tfn.function
    def dtype_change(n):
        x = tfn.constant(0.0)
        for i in tfn.range(n):
            x = i
        return x

    @tfn.function
    def undefined(n):
        for i in tfn.range(n):
            acc = i + acc  # noqa: F821
        return acc

    @tfn.function
    def shape_change(n):
        x = tfn.zeros([1])
        for _ in tfn.range(n):
            x = tfn.concat([x, x], 0)
        return x

    msg = _error(dtype_change, tfn.constant(3), cls=TypeError)
    assert "'x' has dtype float32 before the loop, but dtype int32 after one iteration" in msg
    assert f"{HERE}:{_line_of(dtype_change.python_function, 'for i in')}" in msg
    msg = _error(undefined, tfn.constant(3), cls=ValueError)
    assert msg.startswith("'acc' must be defined before the loop at "
                          f"{HERE}:{_line_of(undefined.python_function, 'for i in')}")
    msg = _error(shape_change, tfn.constant(3), cls=ValueError)
    assert "'x' has shape (1,) before the loop, but shape (2,) after one iteration" in msg
    assert "set_loop_options(shape_invariants=" in msg


def test_python_loops_with_tensor_jumps_are_clear_errors():
    @tfn.function
    def while_true(x):
        while True:
            x = x + 1
            if x > 10:
                break
        return x

    @tfn.function
    def python_for(x):
        for i in range(5):
            if x > i:
                break
        return x

    msg = _error(while_true, tfn.constant(1), cls=NotImplementedError)
    assert f"`while` loop at {HERE}:{_line_of(while_true.python_function, 'while True')}" in msg
    assert "started as a Python value, then changed to a tensor" in msg
    msg = _error(python_for, tfn.constant(1), cls=NotImplementedError)
    assert f"Python `for` loop at {HERE}:{_line_of(python_for.python_function, 'for i in')}" in msg


def test_errors_in_converted_code_point_at_the_user_line():
    @tfn.function
    def f(x):
        if x > 0:
            y = tfn.matmul(x, x)
        else:
            y = x
        return y

    with pytest.raises(tfn.errors.InvalidArgumentError) as info:
        f(tfn.constant(1))
    frames = traceback.extract_tb(info.value.__traceback__)
    line = _line_of(f.python_function, "tfn.matmul")
    assert (frames[-1].filename, frames[-1].lineno) == (HERE, line)
    assert frames[-1].line == "y = tfn.matmul(x, x)"
    ag_dir = os.path.dirname(tfn.autograph.__file__) + os.sep
    assert not any(fr.filename.startswith(ag_dir) for fr in frames)  # tfn's frames below the user's are hidden
    assert f"{HERE}:{line}" in str(info.value)


def test_converted_functions_run_eagerly_as_python():
    @tfn.function
    def f(x):
        if x > 0:
            x = x * 2
        return x

    tfn.config.run_functions_eagerly(True)
    try:
        assert f(tfn.constant(3)).numpy() == 6
    finally:
        tfn.config.run_functions_eagerly(False)
    assert sys.modules["tfn.autograph"].to_graph(f)(tfn.constant(-3)).numpy() == -3


def test_the_same_function_in_two_files_names_its_own_file(tmp_path):
    """Code objects compare equal without their file name: the converted code of the same function at the same
    lines of another file was reused, and tracebacks and errors raised while tracing named that other file."""
    import importlib.util
    source = "import tfn\n\n\n@tfn.function\ndef g(x):\n    if x.shape[0] > 1:  # (converted: it has an if)\n" \
             "        raise KeyError(x.shape)\n    return x\n"
    for name in ("first_copy", "second_copy"):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with pytest.raises(Exception) as caught:
            module.g(tfn.ones([3]))
        files = [frame.filename for frame in traceback.extract_tb(caught.value.__traceback__)]
        assert str(path) in files and not any(f.endswith("copy.py") and f != str(path) for f in files), files
