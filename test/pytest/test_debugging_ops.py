"""tfn.debugging.check_numerics and tfn.ensure_shape: eager and compiled checks (the compiled ones when the function
runs, naming the op and the user's line), the refined static shape, gradients passed through."""
import numpy as np
import pytest

import tfn

ERR = tfn.errors.InvalidArgumentError


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_check_numerics_passes_finite_values_and_names_nan_and_inf(dtype):
    f = tfn.function(lambda a: tfn.debugging.check_numerics(a * 2, "doubled"))
    ok = np.array([[1.0, -2.0], [0.5, 3.0]], dtype)
    for run in (lambda a: tfn.debugging.check_numerics(a * 2, "doubled"), f):
        np.testing.assert_array_equal(run(tfn.constant(ok)).numpy(), ok * 2)
        with pytest.raises(ERR, match="doubled : Tensor had NaN values"):
            run(tfn.constant(np.array([1.0, np.inf, np.nan], dtype)))
        with pytest.raises(ERR, match="doubled : Tensor had Inf values"):
            run(tfn.constant(np.array([1.0, -np.inf], dtype)))


def test_compiled_check_names_the_line_even_when_its_result_is_unused():
    @tfn.function
    def step(a):
        tfn.debugging.check_numerics(a, "input of step")
        return a + 1
    assert step(tfn.constant([1.0])).numpy().tolist() == [2.0]
    with pytest.raises(ERR, match=r"(?s)input of step : Tensor had NaN values.*CheckNumerics.*"
                                  r"test_debugging_ops.py.*check_numerics\(a, \"input of step\"\)"):
        step(tfn.constant([np.nan]))
    scalar = tfn.function(lambda a: tfn.debugging.check_numerics(a, "s"))
    with pytest.raises(ERR, match="Inf values"):
        scalar(tfn.constant(np.inf))


def test_check_numerics_rejects_integers():
    with pytest.raises(ERR, match="CheckNumerics does not support dtype int32"):
        tfn.debugging.check_numerics(tfn.constant([1]), "m")


def test_ensure_shape_refines_the_static_shape_and_checks_when_it_runs():
    shapes = []

    @tfn.function(input_signature=[tfn.TensorSpec([None, None], tfn.float32)])
    def f(a):
        b = tfn.ensure_shape(a, [None, 2])
        shapes.append(b.shape.as_list())
        return b * 2
    assert f(tfn.constant([[1.0, 2.0]])).numpy().tolist() == [[2, 4]]
    assert shapes == [[None, 2]]
    with pytest.raises(ERR, match=r"(?s)Shape of tensor \[1,3\] is not compatible with expected shape \[\?,2\].*"
                                  r"EnsureShape.*test_debugging_ops.py"):
        f(tfn.constant([[1.0, 2.0, 3.0]]))
    assert tfn.ensure_shape(tfn.constant([[1, 2]]), tfn.TensorShape([1, None])).numpy().tolist() == [[1, 2]]
    assert tfn.ensure_shape(tfn.constant([1, 2]), None).numpy().tolist() == [1, 2]
    with pytest.raises(ERR, match=r"Shape of tensor \[1,2\] is not compatible with expected shape \[\?,3\]"):
        tfn.ensure_shape(tfn.constant([[1, 2]]), [None, 3])
    with pytest.raises(ERR, match="not compatible"):
        tfn.ensure_shape(tfn.constant([[1, 2]]), [2])
    with pytest.raises(ERR, match="not compatible"):  # a static mismatch is found while tracing
        tfn.function(lambda a: tfn.ensure_shape(a, [3]))(tfn.constant([1, 2]))


def test_gradients_pass_through_and_are_checked():
    x = tfn.constant([1.0, 4.0])
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.ensure_shape(tfn.debugging.check_numerics(x * x, "sq"), [2]))
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 8.0]
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.sqrt(tfn.debugging.check_numerics(x - 1.0, "shifted")))
    with pytest.raises(ERR, match="detected in gradient. shifted : Tensor had Inf values"):
        tape.gradient(y, x)
