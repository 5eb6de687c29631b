"""AutoGraph leaves a function as it is when its bytecode shows it cannot need conversion."""
import subprocess
import sys
import textwrap
import warnings

import tfn
from tfn.autograph import AutoGraphWarning
from tfn.autograph.bytecode import needs_conversion
from tfn.autograph.conversion import _plain, convert

SCALE = 2.0


def _scaled(x):
    return x * SCALE


def _branchy(x):
    if x > 0:
        return x
    return -x


def _calls_branchy(x):
    return _branchy(x) + 1


class _Layer:
    def __call__(self, x):
        return x + 1


_layer = _Layer()


def test_straight_line_functions_are_not_converted():
    def plain(x, w):
        return tfn.matmul(x, w) + _scaled(x)

    def calls_instance(x):
        return _layer(x) + tfn.reduce_sum(x)

    for fn in (plain, _scaled, calls_instance):
        assert not needs_conversion(fn, _plain), fn
        assert convert(fn) is fn


def test_control_flow_or_unknown_callees_are_converted():
    def boolean(x, y):
        return x and y

    def negation(x):
        return not x

    def conditional(x):
        return 1 if x else 2

    def loop(x):
        return [v for v in x]

    def inner_lambda(x):
        return (lambda v: v or 1)(x)

    def calls_parameter(f, x):
        return f(x)

    def calls_method(x):
        return x.numpy()

    cases = (boolean, negation, conditional, loop, inner_lambda, calls_parameter, calls_method, _branchy,
             _calls_branchy)
    for fn in cases:
        assert needs_conversion(fn, _plain), fn
        assert convert(fn) is not fn


def test_skipped_functions_trace_and_do_not_warn():
    namespace = {"tfn": tfn}
    exec("def nosrc(x):\n    return tfn.square(x) + 1\n", namespace)  # noqa: S102

    @tfn.function
    def f(x):
        return namespace["nosrc"](x) + _calls_branchy(x)

    with warnings.catch_warnings():
        warnings.simplefilter("error", AutoGraphWarning)
        assert f(tfn.constant(-3.0)).numpy() == 14.0


def test_first_call_of_a_straight_line_function_skips_the_source_transform(tmp_path):
    script = tmp_path / "first_call.py"
    script.write_text(textwrap.dedent('''
        import tfn
        import tfn.autograph.conversion as conversion
        parsed = []
        original = conversion._converted_ast
        conversion._converted_ast = lambda fn: parsed.append(fn.__name__) or original(fn)

        @tfn.function
        def f(x):
            return tfn.tanh(x) * 2.0 + 1.0

        f(tfn.constant([1.0, 2.0]))
        print(parsed)
    '''))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
