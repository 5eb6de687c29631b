"""tfn.GradientTape's API and TF's errors; tapes eagerly, inside tfn.function and around calls of one."""
import re

import numpy as np
import pytest

import tfn


def test_call_is_one_recorded_op_with_a_compiled_backward():
    w = tfn.Variable([[1.0, -2.0], [0.5, 3.0]])

    @tfn.function
    def layer(x):
        return tfn.tanh(tfn.matmul(x, w))

    x = tfn.constant([[0.1, 0.2], [0.3, -0.4]])
    for _ in range(2):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(layer(x) * layer(x))
        got = tape.gradient(y, [x, w])
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.tanh(tfn.matmul(x, w)) ** 2)
    want = tape.gradient(y, [x, w])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5)
    assert len(layer._tfn_backward.experimental_trace_log()) == 1  # one backward trace, reused by every call
    assert layer._tfn_backward._concretes[0]._executable is not None


def test_concrete_function_and_method_calls_under_a_tape():
    class Dense(tfn.Module):
        def __init__(self):
            self.w = tfn.Variable([[1.0, 2.0], [3.0, 4.0]])

        @tfn.function
        def __call__(self, x, scale=1.0):
            return {"y": tfn.tanh(tfn.matmul(x, self.w)) * scale, "n": tfn.shape(x)}

    m, x = Dense(), tfn.constant([[0.1, 0.2]])
    concrete = m.__call__.get_concrete_function(x, scale=2.0)
    grads = []
    for call in (lambda: m(x, scale=2.0), lambda: concrete(x, scale=2.0)):
        with tfn.GradientTape() as tape:
            loss = tfn.reduce_sum(call()["y"])
        grads.append(tape.gradient(loss, m.w).numpy())
    with tfn.GradientTape() as tape:
        loss = tfn.reduce_sum(tfn.tanh(tfn.matmul(x, m.w)) * 2.0)
    want = tape.gradient(loss, m.w).numpy()
    for g in grads:
        np.testing.assert_allclose(g, want, rtol=1e-5)


def test_call_that_writes_a_variable_is_differentiated_without_repeating_the_write():
    v = tfn.Variable(2.0)
    count = tfn.Variable(0.0, trainable=False)

    @tfn.function
    def f(x):
        count.assign_add(1.0)
        return x * v

    x = tfn.constant(3.0)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert [float(g) for g in tape.gradient(y, [x, v])] == [2.0, 3.0]
    assert float(count.numpy()) == 1.0


def _grads(tape, y, xs):
    return [None if g is None else float(g) for g in tape.gradient(y, xs)]


def test_variables_read_are_watched_and_int_sources_get_none():
    v = tfn.Variable(3.0)
    frozen = tfn.Variable(5.0, trainable=False)
    i = tfn.constant(2)
    with tfn.GradientTape() as tape:
        with pytest.warns(UserWarning, match="The dtype of the watched tensor must be floating"):
            tape.watch(i)
        y = v * frozen + tfn.cast(i, tfn.float32)
    assert _grads(tape, y, [v, frozen, i]) == [5.0, None, None]


def test_watch_accessed_variables_false():
    v, w = tfn.Variable(3.0), tfn.Variable(4.0)
    with tfn.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    assert _grads(tape, y, [v, w]) == [None, 3.0]
    assert tape.watched_variables() == (w,)


def test_nested_sources_non_scalar_targets_and_output_gradients():
    x = tfn.constant([1.0, 2.0])
    b = tfn.Variable(0.5)
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x + b
        s = tfn.reduce_sum(y)
    g = tape.gradient(y, {"x": x, "b": [b]})
    assert g["x"].numpy().tolist() == [2.0, 4.0] and float(g["b"][0]) == 2.0
    g = tape.gradient(y, x, output_gradients=tfn.constant([1.0, 10.0]))
    assert g.numpy().tolist() == [2.0, 40.0]
    g = tape.gradient([y, s], x)
    assert g.numpy().tolist() == [4.0, 8.0]


def test_unconnected_gradients():
    x, z = tfn.constant(1.0), tfn.constant([1.0, 2.0])
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    assert tape.gradient(y, z) is None
    assert tape.gradient(y, z, unconnected_gradients=tfn.UnconnectedGradients.ZERO).numpy().tolist() == [0.0, 0.0]
    assert tape.gradient(y, z, unconnected_gradients="zero").shape == (2,)
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tape.gradient(y, z, unconnected_gradients="ones")


def test_non_persistent_tape_gives_one_set_of_gradients():
    x = tfn.constant(3.0)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to compute one set"):
        tape.gradient(y, x)


def test_persistent_tape_gives_many():
    x = tfn.constant(3.0)
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(z, y)) == 18.0


def test_stop_recording_reset_and_errors():
    x = tfn.constant(2.0)
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            a = x * x
        b = x * x
        with pytest.raises(ValueError, match="Tape is still recording"):
            tape.__enter__()
    assert tape.gradient(a, x) is None
    assert float(tape.gradient(b, x)) == 4.0
    with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not recording"):
        with tape.stop_recording():
            pass
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * x * x
    assert tape.gradient(z, [y, x])[1] == 12.0
    with pytest.raises(ValueError, match="Passed in object 'x' of type 'str', not tfn.Tensor or tfn.Variable"):
        tfn.GradientTape().watch("x")
    with pytest.raises(TypeError, match="Argument `target` should be"):
        tfn.GradientTape().gradient(None, x)


def test_stop_gradient():
    x = tfn.constant(3.0)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = x * tfn.stop_gradient(x)
    assert float(tape.gradient(y, x)) == 3.0


def test_custom_gradient():
    @tfn.custom_gradient
    def log1pexp(x):
        e = tfn.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tfn.math.log(1 + e), grad

    x = tfn.constant(100.0, tfn.float64)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == 1.0


def test_custom_gradient_with_variables():
    v = tfn.Variable(2.0)

    @tfn.custom_gradient
    def scaled(x):
        def grad(dy, variables):
            return dy * 10.0, [dy * 100.0 for _ in variables]
        return x * v, grad

    x = tfn.constant(1.0)
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    assert _grads(tape, y, [x, v]) == [10.0, 100.0]

    @tfn.custom_gradient
    def bad(x):
        return x * v, lambda dy: dy
    with tfn.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="grad_fn must accept a keyword argument 'variables'"):
            bad(x)


def test_jacobian_and_batch_jacobian():
    x = tfn.constant([[1.0, 2.0], [3.0, 4.0]])
    with tfn.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    j = tape.jacobian(y, x)
    assert j.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(j.numpy().reshape(4, 4), np.diag([2.0, 4.0, 6.0, 8.0]))
    bj = tape.batch_jacobian(y, x)
    assert bj.numpy().tolist() == [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]


def test_gradient_ops_in_a_traced_function_compile_to_one_function():
    w = tfn.Variable([[0.5], [-1.0]])

    @tfn.function
    def step(x, y):
        with tfn.GradientTape() as tape:
            loss = tfn.reduce_mean(tfn.square(tfn.matmul(x, w) - y))
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
        return loss

    x, y = tfn.constant([[1.0, 2.0], [3.0, 4.0]]), tfn.constant([[1.0], [2.0]])
    step(x, y)
    ir_text = step.experimental_get_compiler_ir(x, y)(stage="tfn")
    assert ir_text.count("func.func") == 1 and ir_text.count('"tfn.matmul"') == 2  # forward, d/dw (x is no source)
    np.testing.assert_allclose(w.numpy(), [[0.5 + 0.1 * 16.0], [-1.0 + 0.1 * 23.0]], rtol=1e-6)  # dL/dw = [-16, -23]


def test_while_loop_gradients_keep_the_intermediates():
    w = tfn.Variable(1.5, dtype=tfn.float64)

    @tfn.function
    def f(x, n):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            _, y = tfn.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x + w), [0, x])
        return y, tape.gradient(y, [x, w])

    def numeric(x, wv, n):
        y = x
        for _ in range(n):
            y = y * x + wv
        return y

    for n in (3, 0):
        y, (gx, gw) = f(tfn.constant(2.0, tfn.float64), tfn.constant(n))
        e = 1e-6
        assert float(y) == numeric(2.0, 1.5, n)
        np.testing.assert_allclose(float(gx), (numeric(2 + e, 1.5, n) - numeric(2 - e, 1.5, n)) / (2 * e), rtol=1e-6)
        np.testing.assert_allclose(float(gw), (numeric(2.0, 1.5 + e, n) - numeric(2.0, 1.5 - e, n)) / (2 * e),
                                   rtol=1e-6, atol=1e-9)


def test_while_loop_gradients_with_matrices_and_maximum_iterations():
    @tfn.function
    def f(a, b):
        with tfn.GradientTape() as tape:
            tape.watch([a, b])
            s = tfn.while_loop(lambda s: tfn.reduce_sum(s) < 100.0, lambda s: tfn.tanh(tfn.matmul(s, b)) * 3.0 + s,
                               [a], maximum_iterations=5)[0]
            loss = tfn.reduce_sum(s * s)
        return tape.gradient(loss, [a, b])

    def numeric(a, b):
        s = a
        for _ in range(5):
            if s.sum() >= 100:
                break
            s = np.tanh(s @ b) * 3.0 + s
        return (s * s).sum()

    a, b = np.full((2, 2), 0.1), np.eye(2) * 0.5 + 0.1
    ga, gb = f(tfn.constant(a), tfn.constant(b))
    for got, k in ((ga, 0), (gb, 1)):
        want = np.zeros((2, 2))
        for idx in np.ndindex(2, 2):
            args = [[a.copy(), b.copy()], [a.copy(), b.copy()]]
            args[0][k][idx] += 1e-6
            args[1][k][idx] -= 1e-6
            want[idx] = (numeric(*args[0]) - numeric(*args[1])) / 2e-6
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_autograph_loop_gradients():
    @tfn.function
    def f(x, n):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in tfn.range(n):
                y = y * x
            z = tfn.constant(0.0)
            for row in tfn.stack([x, x * 2.0]):  # x[i] at a run-time index in the body
                z = z + row * row
            s = x
            while s < 10.0:
                s = s * 1.5
        return tape.gradient([y, z, s], x)

    assert float(f(tfn.constant(2.0), tfn.constant(3))) == 4 * 8.0 + 10 * 2.0 + 1.5 ** 4  # s: 2 -> 10.125


@pytest.mark.parametrize("how", ["cond", "if", "while", "for"])
def test_control_flow_raises_instead_of_a_wrong_gradient(how):
    def body(x):
        if how == "cond":  # a cond with an effect in a branch (tracing it again would repeat the print)
            return tfn.cond(x > 0, lambda: tfn.print(x) or x * x, lambda: -x)
        if how == "while":  # an effect in the body
            return tfn.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tfn.print(i) or y * x), [0, x])[1]
        return None

    @tfn.function
    def f(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            if how == "if":
                if x > 0:
                    tfn.print("positive")  # an effect: the branch cannot be traced again for its gradient
                    y = x * x
                else:
                    y = -x
            elif how == "for":
                y = x
                for i in tfn.range(3):
                    tfn.print(i)  # an effect in the body
                    y = y * x
            else:
                y = body(x)
        return tape.gradient(y, x)

    construct = {"cond": "tfn.cond", "if": "a tensor `if` statement"}.get(how, "a tensor-dependent loop")
    with pytest.raises(LookupError, match=re.escape(f"Gradients through {construct}") + r".* at .*test_gradients_"
                                          r"tape.py:\d+"):
        f(tfn.constant(2.0))


def test_cond_gradients_differentiate_the_branch_taken():
    v = tfn.Variable(3.0)

    @tfn.function
    def f(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.cond(x > 0, lambda: x * x * v, lambda: -x + v)
            z = y * 2.0
        return tape.gradient(z, [x, v])

    assert [float(g) for g in f(tfn.constant(2.0))] == [24.0, 8.0]
    assert [float(g) for g in f(tfn.constant(-2.0))] == [-2.0, 2.0]
    assert "scf.if" in f.experimental_get_compiler_ir(tfn.constant(1.0))(stage="tfn")


def test_autograph_if_gradients():
    v = tfn.Variable(2.0)

    @tfn.function
    def f(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = x
            if x > 0:
                y = y * x * v
            else:
                y = -y
            z = y + 1.0
        return z, tape.gradient(z, [x, v]), y  # y: still the forward value after the gradient

    z, g, y = f(tfn.constant(3.0))
    assert (float(z), [float(t) for t in g], float(y)) == (19.0, [12.0, 9.0], 18.0)
    z, g, y = f(tfn.constant(-3.0))
    assert (float(z), [float(t) for t in g], float(y)) == (4.0, [-1.0, 0.0], 3.0)


def test_cond_second_derivatives():
    @tfn.function
    def f(x):
        with tfn.GradientTape() as t2:
            t2.watch(x)
            with tfn.GradientTape() as t1:
                t1.watch(x)
                y = tfn.cond(x > 0, lambda: x * x * x, lambda: tfn.sin(x))
            d = t1.gradient(y, x)
        return d, t2.gradient(d, x)

    np.testing.assert_allclose([float(t) for t in f(tfn.constant(2.0))], [12.0, 12.0])
    np.testing.assert_allclose([float(t) for t in f(tfn.constant(-1.0))], [np.cos(-1.0), -np.sin(-1.0)], rtol=1e-5)


def test_control_flow_not_on_the_path_is_fine():
    @tfn.function
    def f(x, n):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            z = tfn.constant(0.0)
            for _ in tfn.range(n):
                z = z + 1.0
            y = x * z
        return tape.gradient(y, x)

    assert float(f(tfn.constant(2.0), tfn.constant(3))) == 3.0


def test_forward_accumulator_jvps():
    a = np.array([1.0, 2.0, 3.0])
    x, t = tfn.constant(a), tfn.constant([1.0, 0.0, 2.0], tfn.float64)
    with tfn.autodiff.ForwardAccumulator(x, t) as acc:
        y = tfn.sin(x) * x
        s = tfn.reduce_sum(y)
        unrelated = tfn.constant(1.0) * 2.0
    want = (np.cos(a) * a + np.sin(a)) * [1.0, 0.0, 2.0]
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(acc.jvp([y, s])[1].numpy(), want.sum(), rtol=1e-12)
    assert acc.jvp(unrelated) is None
    assert float(acc.jvp(unrelated, unconnected_gradients=tfn.UnconnectedGradients.ZERO)) == 0.0
    v = tfn.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tfn.autodiff.ForwardAccumulator(v, tfn.constant([[1.0, 0.0], [0.0, 0.0]])) as acc:
        z = tfn.matmul(v, v)
    assert acc.jvp(z).numpy().tolist() == [[2.0, 2.0], [3.0, 0.0]]
    with pytest.raises(ValueError, match="must have the shape"):
        tfn.autodiff.ForwardAccumulator(x, tfn.constant([1.0]))


def test_forward_accumulator_compiled():
    @tfn.function
    def f(x, t):
        with tfn.autodiff.ForwardAccumulator(x, t) as acc:
            y = tfn.tanh(x) * 2.0
        return acc.jvp(y)

    x = np.array([0.5, -1.0], np.float32)
    np.testing.assert_allclose(f(tfn.constant(x), tfn.constant([1.0, 3.0])).numpy(),
                               2 * (1 - np.tanh(x) ** 2) * [1.0, 3.0], rtol=1e-5)


def test_custom_gradient_of_a_variable_passed_as_its_argument():
    """A variable given to a custom_gradient function is one of its inputs (grad_fn's dx is its gradient), eagerly
    and traced; it was left out of the inputs, so the gradient was silently None."""
    @tfn.custom_gradient
    def g(x):
        return x * 2, lambda dy: dy * 3

    v = tfn.Variable([1.0, 2.0])

    def step():
        with tfn.GradientTape() as tape:
            y = tfn.reduce_sum(g(v) * v)
        return tape.gradient(y, v)
    for run in (step, tfn.function(step)):
        np.testing.assert_allclose(run().numpy(), [5.0, 10.0])  # g(v) + 3 * v
    frozen = tfn.Variable([1.0], trainable=False)
    with tfn.GradientTape() as tape:
        y = g(frozen)
    assert tape.gradient(y, frozen) is None
