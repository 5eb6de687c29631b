"""A tfn.function calling itself, as the guide describes it: on Python values each depth traces once; on a
tensor the recursion cannot end at trace time and raises StagingError (TF reports a RecursionError in one)."""
import pytest

import tfn


@tfn.function
def module_level_countdown(n):
    if n > 0:
        return module_level_countdown(n - 1) + 1
    return tfn.constant(0)


@tfn.function
def module_level_tensor_recursion(n):
    if n > 0:
        return module_level_tensor_recursion(n - 1)
    else:
        return 1


def test_recursion_on_python_values_traces_once_per_depth(capsys):
    @tfn.function
    def recursive_fn(n):
        if n > 0:
            print("tracing")
            return recursive_fn(n - 1)
        else:
            return 1

    assert recursive_fn(5).numpy() == 1
    assert capsys.readouterr().out == "tracing\n" * 5
    assert module_level_countdown(4).numpy() == 4


def test_recursion_on_a_tensor_raises_staging_error():
    # TF 2.21: StagingError (reporting a RecursionError); like TF's, tfn's is a plain Exception
    with pytest.raises(tfn.errors.StagingError, match="calls itself recursively"):
        module_level_tensor_recursion(tfn.constant(5))
    assert not issubclass(tfn.errors.StagingError, RecursionError)


def test_unbounded_python_recursion_is_a_staging_error():
    @tfn.function
    def forever(n):
        return forever(n + 1)

    # TF 2.21: StagingError ("in user code: ... RecursionError: maximum recursion depth exceeded")
    with pytest.raises(tfn.errors.StagingError, match="in user code:(.|\n)*RecursionError"):
        forever(0)
