"""`return` inside converted tensor loops, and loop variables undefined before a tensor loop (TF's
auto-initialisation: the body's first trace gives the type, the loop starts from zeros of it)."""
import numpy as np
import pytest

import tfn

HERE = __file__


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_return_inside_for_over_range_the_guide_way():
    @tfn.function
    def find(x, t):
        for i in tfn.range(tfn.shape(x)[0]):
            if x[i] > t:
                return i
        return -1

    x = tfn.constant([1.0, 5.0, 3.0, 7.0])
    got = [find(x, tfn.constant(t)).numpy() for t in (4.0, 6.0, 0.0, 10.0)]
    assert got == [1, 3, 0, -1]
    assert find(x, tfn.constant(4.0)).dtype == tfn.int32
    ir = find.experimental_get_compiler_ir(x, tfn.constant(4.0))("tfn")
    assert ir.count("scf.while") == 1


def test_return_inside_while_and_for_over_a_tensor_with_structured_values():
    @tfn.function
    def first_negative(x):
        i = tfn.shape(x)[0] * 0
        while i < tfn.shape(x)[0]:
            if x[i] < 0:
                return x[i] * 2.0, i
            i += 1
        return tfn.constant(0.0), i

    @tfn.function
    def first_big(x):
        for v in x:
            if v > 2:
                return v
        return tfn.constant(-1.0)

    value, index = first_negative(tfn.constant([1.0, 2.0, -4.0, 5.0]))
    assert (value.numpy(), index.numpy()) == (-8.0, 2)
    value, index = first_negative(tfn.constant([1.0, 2.0]))
    assert (value.numpy(), index.numpy()) == (0.0, 2)
    assert first_big(tfn.constant([1.0, 2.0, 3.0, 4.0])).numpy() == 3.0
    assert first_big(tfn.constant([1.0])).numpy() == -1.0


def test_return_only_inside_the_loop_is_a_clear_error():
    @tfn.function
    def no_return_after(n):
        for i in tfn.range(n):
            if i > 2:
                return i

    with pytest.raises(ValueError) as info:
        no_return_after(tfn.constant(5))
    line = _line_of(no_return_after.python_function, "for i in")
    assert str(info.value).startswith(f"the function returns inside the tensor loop at {HERE}:{line}, but can also "
                                      "finish the loop without returning")


def test_variable_assigned_in_the_body_before_use_starts_undefined():
    debug = False

    @tfn.function
    def f(n):
        total = tfn.constant(0)
        for i in tfn.range(n):
            if debug:
                tfn.print(last)  # noqa: F821  (read only on a Python path not taken: `last` is a loop variable)
            last = i * 2
            total += last
        return total

    assert f(tfn.constant(4)).numpy() == 12


def test_undefined_before_the_loop_read_first_is_an_error_used_after_needs_an_iteration():
    @tfn.function
    def read_first(n):
        total = tfn.constant(0)
        for i in tfn.range(n):
            if i > 0:
                total += prev  # noqa: F821
            prev = i  # noqa: F841  (read by the next iteration)
        return total

    @tfn.function
    def used_after(n):
        for i in tfn.range(n):
            last = i
        return last

    with pytest.raises(ValueError) as info:
        read_first(tfn.constant(3))
    assert str(info.value).startswith(f"'prev' must be defined before the loop at {HERE}:"
                                      f"{_line_of(read_first.python_function, 'for i in')}: it is a loop variable "
                                      "(the loop changes it and reads it before assigning it)")
    # TF 2.21 defines `last` from the body's first assignment, and fails at run time if the loop never ran
    assert used_after(tfn.constant(3)).numpy() == 2
    with pytest.raises(tfn.errors.InvalidArgumentError, match="loop must iterate at least once to initialize last"):
        used_after(tfn.constant(0))


def test_nested_loops_with_return():
    @tfn.function
    def find2(m, t):
        for i in tfn.range(tfn.shape(m)[0]):
            for j in tfn.range(tfn.shape(m)[1]):
                if m[i, j] == t:
                    return tfn.stack([i, j])
        return tfn.constant([-1, -1])

    m = tfn.constant(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert find2(m, tfn.constant(6)).numpy().tolist() == [1, 2]
    assert find2(m, tfn.constant(99)).numpy().tolist() == [-1, -1]


def test_mismatched_returns_are_named_as_the_return_value():
    @tfn.function
    def f(x):
        if x > 0:
            return x
        return None

    with pytest.raises(ValueError, match="'the return value' must have the same nested structure") as e:
        f(tfn.constant(1))
    assert "retval_" not in str(e.value)
