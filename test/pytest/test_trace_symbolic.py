"""Inside a trace every tensor is a graph value, constants included (TF 2.21): `tfn.constant(...)` and ops on
constants are symbolic, conditions on them stage tensor control flow with TF's checks, their values still serve
as static shapes and axes (TF's constant_value), and the compiler folds them (tfn-fold-constants)."""
import re

import pytest

import tfn


def test_constants_and_ops_on_them_are_symbolic_in_a_trace():
    seen = {}

    @tfn.function
    def f(x):
        c = tfn.constant(3)
        seen["reprs"] = [repr(c), repr(c + 1), repr(tfn.greater(2, 1))]
        seen["numpy"] = hasattr(c, "numpy")
        with pytest.raises(TypeError):
            [1, 2, 3, 4][c]  # noqa: B018  (a graph value is no Python index)
        return x + c

    assert f(tfn.constant(1)).numpy() == 4
    assert seen["reprs"] == ['Tensor("constant:0", shape=(), dtype=int32)', 'Tensor("add:0", shape=(), dtype=int32)',
                             'Tensor("greater:0", shape=(), dtype=bool)']
    assert seen["numpy"] is False
    ops = [op.type for op in f.get_concrete_function(tfn.constant(1)).graph.get_operations()]
    # c, the 1 of c + 1, and greater's 2 and 1 are graph constants; nothing was computed while tracing
    assert ops.count("Const") == 4 and ops.count("AddV2") == 2 and ops.count("Greater") == 1


def test_a_constant_condition_without_autograph_is_not_a_python_bool():
    @tfn.function(autograph=False)
    def f():
        if tfn.constant(True):
            return 1
        return 2

    with pytest.raises(tfn.errors.OperatorNotAllowedInGraphError):
        f()


def test_a_constant_condition_stages_both_branches_with_tfs_checks():
    @tfn.function
    def mismatch():
        if tfn.constant(True):
            x = tfn.constant(1)
        else:
            x = tfn.constant(1.0)
        return x

    @tfn.function
    def strings():
        if tfn.constant(5) > 3:
            r = "yes"
        else:
            r = "no"
        return r

    with pytest.raises(TypeError, match="'x' has dtype int32 in the main branch, but dtype float32"):
        mismatch()
    assert strings().numpy() == b"yes"


def test_known_values_still_give_static_shapes_axes_and_indices():
    @tfn.function
    def f():
        z = tfn.zeros(tfn.constant([2, 3]))
        r = tfn.reshape(tfn.range(6), tfn.constant([3, 2]) * 1)
        s = tfn.reduce_sum(r, axis=tfn.constant(0))
        p = tfn.pad(tfn.ones([1, 1]), tfn.constant([[1, 0], [0, 1]]))
        x = tfn.constant([1, 2, 3])
        return z.shape, r.shape, s, p.shape, x[tfn.constant(1)], x[: tfn.constant(2)].shape

    z, r, s, p, item, head = f()
    assert z.numpy().tolist() == [2, 3] and r.numpy().tolist() == [3, 2] and s.numpy().tolist() == [6, 9]
    assert p.numpy().tolist() == [2, 2] and item.numpy() == 2 and head.numpy().tolist() == [2]


def test_ops_on_constants_are_folded_by_the_compiler():
    @tfn.function
    def f(x):
        return x + (tfn.constant(3) + tfn.constant(4)) * 2

    assert f(tfn.constant(1)).numpy() == 15
    traced = f.experimental_get_compiler_ir(tfn.constant(1))(stage="tfn")
    linalg = f.experimental_get_compiler_ir(tfn.constant(1))(stage="linalg")
    assert traced.count('"tfn.add"') == 2 and '"tfn.multiply"' in traced
    assert re.search(r"arith.constant (dense<)?14\b", linalg) and linalg.count("arith.addi") == 1
    assert "arith.muli" not in linalg


def test_python_outputs_stay_values_not_graph_tensors():
    @tfn.function
    def f(a):
        return False, 5, a

    flag, five, a = f(tfn.constant(1))
    assert repr(flag) == "<tfn.Tensor: shape=(), dtype=bool, numpy=False>" and five.numpy() == 5


def test_the_shape_of_a_static_tensor_is_known_while_tracing():
    # TF folds Shape of a fully defined shape for shape inference: tf.shape(x)[0] * 2 is a static reshape size
    @tfn.function
    def f(x):
        return tfn.reshape(x, [tfn.shape(x)[0] * 2, -1])

    assert f(tfn.ones([2, 4])).shape == (4, 2)
    # a size known only when it runs: the result's dims are unknown while tracing (as TF's)
    cf = f.get_concrete_function(tfn.TensorSpec([None, 4], tfn.float32))
    assert cf.output_shapes.as_list() == [None, None]
    assert cf(tfn.ones([3, 4])).shape == (6, 2)
