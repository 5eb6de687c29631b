"""AutoGraph's state through tensor control flow, as TF 2.21 carries it: attributes and subscripts assigned in
a tensor if/while/for, variables the branches only read before changing, and each branch traced from the
state before the `if`."""
import pytest

import tfn


class Box:
    pass


def test_subscript_assigned_in_both_branches_is_an_output():
    @tfn.function
    def f(a):
        x = {"a": a}
        if x["a"] > 0:
            x["b"] = 1
        else:
            x["b"] = -1
        return x["b"]

    assert f(tfn.constant(1)).numpy() == 1
    assert f(tfn.constant(-1)).numpy() == -1
    code = tfn.autograph.to_code(f)
    assert "return (ag__.ldu(lambda: x['b'], \"x['b']\"),)" in code
    assert "x['b'], = vars_" in code
    assert "(\"x['b']\",), 1)" in code


def test_each_branch_starts_from_the_state_before_the_if():
    @tfn.function
    def g(c):
        i, s = 0, 0
        if c > 0:
            i += 1
        else:
            s = i
        return s

    assert g(tfn.constant(0)).numpy() == 0
    assert g(tfn.constant(1)).numpy() == 0
    code = tfn.autograph.to_code(g)
    assert "return (s, i)" in code  # s is an output, i is only carried into the branches
    assert "('s', 'i'), 1)" in code


def test_list_item_and_attribute_are_loop_variables():
    @tfn.function
    def w(n):
        y = [tfn.constant(0), 5]
        o = Box()
        o.v = tfn.constant(1.0)
        i = tfn.constant(0)
        while i < n:
            y[0] = y[0] + i
            o.v = o.v * 2.0
            i += 1
        return y[0], o.v, y[1]

    a, b, c = w(tfn.constant(4))
    assert (a.numpy(), b.numpy(), c) == (6, 16.0, 5)
    code = tfn.autograph.to_code(w)
    assert "return (i, ag__.ldu(lambda: o.v, 'o.v'), ag__.ldu(lambda: y[0], 'y[0]'))" in code
    assert "i, o.v, y[0] = vars_" in code


def test_dict_item_in_a_tensor_for():
    @tfn.function
    def f(n):
        d = {"s": tfn.constant(0)}
        for i in tfn.range(n):
            d["s"] += i
        return d["s"]

    assert f(tfn.constant(5)).numpy() == 10


def test_attribute_assigned_in_a_tensor_if():
    class Counter:
        def __init__(self):
            self.n = tfn.constant(0)

        @tfn.function
        def bump(self, x):
            if x > 0:
                self.n = self.n + x
            return self.n

    assert Counter().bump(tfn.constant(3)).numpy() == 3
    assert Counter().bump(tfn.constant(-3)).numpy() == 0


def test_subscript_set_in_one_branch_only_is_rejected():
    @tfn.function
    def f(a):
        x = {}
        if a > 0:
            x["b"] = 1
        return x["b"]

    with pytest.raises(ValueError, match="'x\\['b'\\]' must also be initialized in the else branch"):
        f(tfn.constant(1))


def test_subscript_with_a_changing_dtype_in_a_loop_is_rejected():
    @tfn.function
    def f(n):
        x = {"v": tfn.constant(0)}
        for _ in tfn.range(n):
            x["v"] = tfn.constant(1.0)
        return x["v"]

    with pytest.raises(TypeError, match="dtype int32 before the loop, but dtype float32"):
        f(tfn.constant(2))


def test_python_numbers_differing_between_branches_become_a_tensor():
    @tfn.function
    def f(c):
        if c > 0:
            x = 1
        else:
            x = 2
        return x

    assert f(tfn.constant(1)).numpy() == 1
    assert f(tfn.constant(-1)).numpy() == 2


def test_return_inside_try_keeps_python_semantics():
    @tfn.function
    def f(x):
        try:
            return x + 1
        except ValueError:
            return x - 1

    @tfn.function
    def g(x):
        for i in range(3):
            try:
                if i == 1:
                    return x * 10
            except KeyError:
                pass
        return x

    assert f(tfn.constant(3)).numpy() == 4
    assert g(tfn.constant(3)).numpy() == 30


def test_a_constant_condition_stages_a_tensor_loop_with_tf_dtype_check():
    @tfn.function
    def h():
        n = tfn.constant(0)
        while tfn.constant(True):
            n = tfn.constant(0.0)
        return n

    with pytest.raises(TypeError, match="'n' has dtype int32 before the loop, but dtype float32"):
        h()


def test_while_constant_true_with_break():
    @tfn.function
    def f(x):
        i = tfn.constant(0)
        while tfn.constant(True):
            i += 1
            if i > x:
                break
        return i

    assert f(tfn.constant(5)).numpy() == 6
    assert f(tfn.constant(0)).numpy() == 1


def test_an_op_on_python_values_is_a_tensor_condition():
    @tfn.function
    def f():
        if tfn.greater(2, 1):
            r = tfn.constant(1)
        else:
            r = 2.5  # not an int32: both branches are traced, so TF rejects the mismatch
        return r

    with pytest.raises(TypeError, match="'r' has dtype int32 in the main branch, but dtype float32"):
        f()


def test_a_runaway_python_loop_while_tracing_stops_with_an_error(monkeypatch):
    import time

    from tfn.autograph import operators
    monkeypatch.setattr(operators, "RUNAWAY_LOOP_SECONDS", 1.0)

    @tfn.function
    def f(x):
        i = 0
        while i < 10:
            x = x + 1
        return x

    start = time.monotonic()
    with pytest.warns(tfn.autograph.AutoGraphWarning), pytest.raises(RuntimeError, match="does not end"):
        f(tfn.constant(1))
    assert time.monotonic() - start < 10


def test_a_variable_first_assigned_in_a_tensor_loop_is_defined_after_it():
    @tfn.function
    def f(n):
        i = tfn.constant(0)
        while i < n:
            y = i * 2
            i += 1
        return y

    assert f(tfn.constant(3)).numpy() == 4
    with pytest.raises(tfn.errors.InvalidArgumentError, match="loop must iterate at least once to initialize y"):
        f(tfn.constant(0))
    assert "('i', 'y'), {}, ('i',))" in tfn.autograph.to_code(f)  # y is used after the loop, i is loop-local


def test_a_loop_local_variable_needs_no_iteration():
    @tfn.function
    def f(n):
        s = tfn.constant(0)
        for i in tfn.range(n):
            t = i * 2
            s += t
        return s

    assert f(tfn.constant(0)).numpy() == 0 and f(tfn.constant(3)).numpy() == 6


def test_a_return_whose_value_raises_inside_try_has_not_returned():
    @tfn.function
    def f(x, d):
        try:
            return x + d["missing"]
        except KeyError:
            pass
        return x * 10

    @tfn.function
    def g(x):
        for _ in range(2):
            try:
                return int("not a number")
            except ValueError:
                x = x + 1
        return x

    assert f(tfn.constant(1), {"k": 1}).numpy() == 10
    assert g(tfn.constant(1)).numpy() == 3
    code = tfn.autograph.to_code(f)
    assert code.index("retval_ = x + d['missing']") < code.index("do_return = True")
