"""Python builtins over tensors inside a trace, as TF's AutoGraph converts them: range, len, int, float and abs
with tensors, enumerate and zip, chained comparisons, and lists of tensors packed where an op takes one tensor."""
import pytest

import tfn


def test_range_of_a_tensor_is_a_tensor_loop():
    @tfn.function
    def f(n):
        s = tfn.constant(0)
        for i in range(n):
            s += i
        return s

    assert f(tfn.constant(4)).numpy() == 6
    assert f(tfn.constant(0)).numpy() == 0
    assert len(f.get_concrete_function(tfn.TensorSpec([], tfn.int32)).graph.get_operations()) < 40


def test_range_of_python_ints_stays_python():
    @tfn.function
    def f(x):
        for i in range(3):
            x = x + i
        return x

    assert f(tfn.constant(1)).numpy() == 4


def test_len_of_a_tensor():
    @tfn.function
    def static(x):
        return len(x)

    @tfn.function(input_signature=[tfn.TensorSpec([None], tfn.int32)])
    def dynamic(x):
        return len(x)

    @tfn.function
    def scalar(x):
        return len(x)

    assert static(tfn.constant([1, 2, 3])) == 3
    assert dynamic(tfn.constant([1, 2, 3, 4])).numpy() == 4
    with pytest.raises(ValueError, match="len requires a non-scalar tensor"):
        scalar(tfn.constant(1))


def test_enumerate_zip_and_unpacking_of_tensors_are_not_allowed_as_in_tf():
    # TF 2.21: Python's enumerate/zip stay Python for tensors, and a graph tensor cannot be iterated, static
    # shape or not (OperatorNotAllowedInGraphError); the `for` over the tensor itself is a tensor loop
    @tfn.function
    def enum(x):
        s = tfn.constant(0)
        for i, v in enumerate(x):
            s += i * v
        return s

    @tfn.function
    def zipped(x, y):
        s = tfn.constant(0)
        for a, b in zip(x, y):
            s += a * b
        return s

    @tfn.function
    def unpack(x):
        a, b = x
        return a

    @tfn.function
    def direct(x):
        s = tfn.constant(0)
        for v in x:
            s += v
        return s

    x, y = tfn.constant([1, 2, 3]), tfn.constant([4, 5, 6])
    for f, args in ((enum, (x,)), (zipped, (x, y)), (unpack, (tfn.constant([1, 2]),))):
        with pytest.raises(tfn.errors.OperatorNotAllowedInGraphError, match="Iterating over a symbolic"):
            f(*args)
    assert direct(x).numpy() == 6


def test_chained_comparisons_of_tensors_are_a_tensor_and():
    # TF 2.21 converts `a < b < c` to `a < b and b < c`, the tensor `and` being tf.cond(a < b, lambda: b < c, ...)
    @tfn.function
    def eq(x, y, z):
        return x == y == z

    @tfn.function
    def between(a, b, c):
        return 0 < a < b <= c != 7

    assert eq(tfn.constant(1), tfn.constant(1), tfn.constant(1)).numpy()
    assert not eq(tfn.constant(1), tfn.constant(1), tfn.constant(2)).numpy()
    assert between(tfn.constant(1), tfn.constant(2), tfn.constant(2)).numpy()
    assert not between(tfn.constant(1), tfn.constant(2), tfn.constant(7)).numpy()
    assert not between(tfn.constant(3), tfn.constant(2), tfn.constant(5)).numpy()
    assert "ag__.compare_chain(0, ('Lt', lambda: a)" in tfn.autograph.to_code(between.python_function)


def test_chained_comparison_evaluates_each_operand_once_and_stops_on_a_python_false():
    calls = []

    def mid(v):
        calls.append(v)
        return v

    @tfn.function
    def f(a, b, c):
        return a < mid(b) < c, 3 < 2 < mid(c)

    inside, python_false = f(tfn.constant(1), tfn.constant(2), tfn.constant(3))
    assert inside.numpy() and python_false.dtype == tfn.bool and not python_false.numpy()
    assert len(calls) == 1  # b once (TF evaluates it twice); c never: 3 < 2 is a Python False


def test_chained_comparison_of_vectors_fails_as_tf_cond_on_a_vector():
    # TF: tf.cond(x == x, ...) on a vector predicate -> InvalidArgumentError ("must be a scalar")
    @tfn.function
    def f(x):
        return x == x == x

    with pytest.raises(tfn.errors.InvalidArgumentError, match="scalar"):
        f(tfn.constant([1, 2]))


def test_tensor_and_with_another_dtype_is_tf_conds_type_error():
    @tfn.function
    def f(x, y):
        return x > 0 and y

    with pytest.raises(TypeError, match="same number, type"):
        f(tfn.constant(1), tfn.constant(2))
    assert not f(tfn.constant(1), tfn.constant(False)).numpy()


def test_int_float_and_abs_of_a_tensor_are_ops():
    @tfn.function
    def f(x):
        return int(x), float(x), abs(-x), int("7"), float(2)

    i, fl, a, seven, two = f(tfn.constant(3))
    assert (i.dtype, fl.dtype, a.dtype) == (tfn.int32, tfn.float32, tfn.int32)
    assert (i.numpy(), fl.numpy(), a.numpy()) == (3, 3.0, 3)
    assert seven.numpy() == 7 and two.numpy() == 2.0


def test_lists_of_tensors_are_packed():
    @tfn.function
    def f(n):
        v = tfn.zeros([0], tfn.int32)
        for i in tfn.range(n):
            tfn.autograph.experimental.set_loop_options(shape_invariants=[(v, tfn.TensorShape([None]))])
            v = tfn.concat((v, [i]), 0)
        return v

    @tfn.function
    def g(x):
        return tfn.convert_to_tensor([[x[0], 1], [2, x[1]]])

    assert f(tfn.constant(3)).numpy().tolist() == [0, 1, 2]
    assert g(tfn.constant([5, 6])).numpy().tolist() == [[5, 1], [2, 6]]


def test_growing_a_list_tensor_without_an_invariant_is_rejected():
    @tfn.function
    def f(n):
        v = tfn.zeros([0], tfn.int32)
        for i in tfn.range(n):
            v = tfn.concat((v, [i]), 0)
        return v

    with pytest.raises(ValueError, match="'v' has shape \\(0,\\) before the loop, but shape \\(1,\\) after one"):
        f(tfn.constant(3))


def test_the_overloaded_builtins_make_a_function_need_conversion():
    from tfn.autograph import bytecode, operators
    assert bytecode.OVERLOADED_BUILTINS == frozenset(operators.BUILTINS)


def test_fill_ops_with_run_time_shapes():
    @tfn.function(input_signature=[tfn.TensorSpec([None, None], tfn.int32)])
    def f(x):
        n = tfn.shape(x)[0]
        return tfn.zeros(tfn.shape(x)), tfn.fill([n, 3, 1], 7), tfn.ones([0, tfn.shape(x)[1]], tfn.int64)

    a, b, c = f(tfn.constant([[1, 2], [3, 4], [5, 6]]))
    assert a.numpy().tolist() == [[0.0, 0.0]] * 3 and a.dtype == tfn.float32
    assert b.numpy().tolist() == [[[7]] * 3] * 3
    assert c.shape == (0, 2) and c.dtype == tfn.int64
    a, b, c = f(tfn.constant([[1]]))
    assert a.shape == (1, 1) and b.shape == (1, 3, 1) and c.shape == (0, 1)


def test_reshape_to_run_time_sizes():
    # TF 2.21: tf.reshape(x, [n, -1]) with a tensor n works in a tf.function (the result dims are unknown where
    # they come from tensors); a count that does not match is an InvalidArgumentError when it runs.
    @tfn.function
    def f(x, n):
        y = tfn.reshape(x, [n, 2, -1])
        assert y.shape.as_list() == [None, 2, None]
        return y

    assert f(tfn.range(12), tfn.constant(3)).numpy().tolist() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]],
                                                                    [[8, 9], [10, 11]]]
    with pytest.raises(tfn.errors.InvalidArgumentError):
        f(tfn.range(12), tfn.constant(5))

    @tfn.function
    def g(x, shape):
        return tfn.reshape(x, shape)

    assert g(tfn.ones([2, 3]), tfn.constant([3, -1])).numpy().tolist() == [[1.0, 1.0]] * 3
    assert g(tfn.range(4), tfn.constant([-1, 1])).numpy().tolist() == [[0], [1], [2], [3]]
    with pytest.raises(tfn.errors.InvalidArgumentError):
        g(tfn.range(4), tfn.constant([3, 1]))
    # zero sizes: an empty tensor takes any shape with a zero size and no -1; with a -1, TF's own message (not a
    # division by zero)
    assert g(tfn.ones([0, 3]), tfn.constant([5, 0])).shape == (5, 0)
    for x in (tfn.ones([0, 3]), tfn.ones([4, 3])):
        with pytest.raises(tfn.errors.InvalidArgumentError, match="Reshape cannot infer the missing input size for "
                           "an empty tensor unless all specified input sizes are non-zero"):
            g(x, tfn.constant([0, -1]))


def test_broadcast_to_a_run_time_shape():
    @tfn.function
    def f(x, n, m):
        return tfn.broadcast_to(x, [n, 2, m])

    # TF 2.21's values; a size neither 1 nor the input's is an InvalidArgumentError when it runs
    assert f(tfn.constant([[1], [2]]), tfn.constant(2), tfn.constant(3)).numpy().tolist() == [
        [[1, 1, 1], [2, 2, 2]], [[1, 1, 1], [2, 2, 2]]]
    assert f(tfn.constant([[1], [2]]), tfn.constant(1), tfn.constant(0)).shape == (1, 2, 0)
    g = tfn.function(lambda x, s: tfn.broadcast_to(x, s))
    assert g(tfn.constant([1.0, 2.0]), tfn.constant([2, 2])).numpy().tolist() == [[1.0, 2.0]] * 2
    with pytest.raises(tfn.errors.InvalidArgumentError):
        g(tfn.constant([1.0, 2.0]), tfn.constant([2, 3]))


def test_gradient_through_a_run_time_reshape():
    x = tfn.Variable(tfn.range(6, dtype=tfn.float32))

    @tfn.function
    def f(n):
        with tfn.GradientTape() as tape:
            y = tfn.reduce_sum(tfn.reshape(x, [n, -1]) * tfn.constant([[1.0, 2.0, 3.0]]))
        return tape.gradient(y, x)

    assert f(tfn.constant(2)).numpy().tolist() == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]  # TF 2.21's result


def test_a_run_time_shape_needs_a_known_rank():
    @tfn.function(input_signature=[tfn.TensorSpec([None], tfn.int32)])
    def f(shape):
        return tfn.zeros(shape)

    with pytest.raises(ValueError, match="1-D tensor of known length"):
        f(tfn.constant([2, 3]))


def test_unknown_rank_shape_invariants():
    @tfn.function
    def grow(n):
        v = tfn.zeros([0], tfn.int32)
        for i in tfn.range(n):
            tfn.autograph.experimental.set_loop_options(shape_invariants=[(v, tfn.TensorShape(None))])
            v = tfn.concat((v, [i]), 0)
        return v

    @tfn.function
    def while_loop(n):
        return tfn.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, tfn.concat([v, v], 0)),
                              [tfn.constant(0), tfn.ones([1])],
                              shape_invariants=[tfn.TensorShape([]), tfn.TensorShape(None)])[1]

    @tfn.function
    def rank_change(n):
        v = tfn.zeros([2])
        for _ in tfn.range(n):
            tfn.autograph.experimental.set_loop_options(shape_invariants=[(v, tfn.TensorShape(None))])
            v = tfn.reshape(v, [1, -1])
        return v

    assert grow(tfn.constant(3)).numpy().tolist() == [0, 1, 2]
    assert while_loop(tfn.constant(3)).shape == (8,)
    with pytest.raises(ValueError, match="'v' has rank 1 before the loop, but rank 2 after one iteration"):
        rank_change(tfn.constant(2))
