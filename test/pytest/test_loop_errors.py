"""A run-time error inside a data-dependent tensor loop stops the loop (the call then raises it) instead of
hanging: the program runs in a subprocess with a timeout, so a regression fails rather than hangs the suite."""
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent('''
    import numpy as np
    import tfn

    def bad(x):
        raise RuntimeError("boom in py_function")

    @tfn.function
    def callback_loop(x):
        y = x * 0.0
        while y == 0:
            y = tfn.py_function(bad, [x], tfn.float32)
        return y

    @tfn.function
    def index_loop(x, i):
        y = x[0] * 0.0
        while y == 0:
            y = x[i]  # out of range: a safe 0 is read and the error flag set
        return y

    for f, args in ((callback_loop, [tfn.constant(1.0)]),
                    (index_loop, [tfn.constant([0.0, 0.0]), tfn.constant(5)])):
        try:
            f(*args)
        except Exception as e:
            print(type(e).__name__ + ": " + str(e).splitlines()[0])
    print(index_loop(tfn.constant([0.0, 3.0]), tfn.constant(1)).numpy())
''')


def test_errors_stop_data_dependent_loops(tmp_path):
    script = tmp_path / "loops.py"
    script.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "RuntimeError: boom in py_function"
    assert lines[1].startswith("InvalidArgumentError: ") and "out of bounds" in lines[1], lines[1]
    assert lines[2] == "3.0"
