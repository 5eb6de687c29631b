"""tfn.function: tracing once per signature, Python values baked in, nested outputs, compiler IR."""
import numpy as np
import pytest

import tfn


def test_traces_once_per_dtype_and_shape(capsys):
    @tfn.function
    def double(a):
        print("Tracing with", a)
        return a + a

    assert double(tfn.constant(1)).numpy() == 2
    assert double(tfn.constant(2)).numpy() == 4
    assert double(tfn.constant(1.5)).numpy() == 3.0
    assert double(tfn.constant([1, 2])).numpy().tolist() == [2, 4]
    out = capsys.readouterr().out.splitlines()
    assert out == ['Tracing with Tensor("a:0", shape=(), dtype=int32)',
                   'Tracing with Tensor("a:0", shape=(), dtype=float32)',
                   'Tracing with Tensor("a:0", shape=(2,), dtype=int32)']


def test_python_values_are_baked_in_and_retrace():
    calls = []

    @tfn.function
    def f(x, n):
        calls.append(n)
        return x * n

    x = tfn.constant([1.0, 2.0])
    assert f(x, 2.0).numpy().tolist() == [2.0, 4.0]
    assert f(x, 3.0).numpy().tolist() == [3.0, 6.0]
    assert f(x, 2.0).numpy().tolist() == [2.0, 4.0]
    assert calls == [2.0, 3.0]


def test_nested_outputs_and_keywords():
    @tfn.function
    def f(x, scale=2.0, *, offset):
        return {"y": x * scale, "pair": (x + offset, [x - offset, None])}

    r = f(tfn.constant([1.0]), offset=1.0)
    assert r["y"].numpy().tolist() == [2.0]
    assert r["pair"][0].numpy().tolist() == [2.0]
    assert r["pair"][1][0].numpy().tolist() == [0.0]
    assert r["pair"][1][1] is None


def test_numpy_arguments_are_tensors():
    f = tfn.function(lambda x: x + 1)
    assert f(np.array([1, 2], np.int64)).dtype == tfn.int64


def test_functions_call_functions():
    @tfn.function
    def inner(a, b):
        return a * b

    @tfn.function
    def outer(a):
        return inner(a, a) + 1.0

    assert outer(tfn.constant([3.0])).numpy().tolist() == [10.0]
    assert "tfn.multiply" in outer.experimental_get_compiler_ir(tfn.constant([3.0]))()


def test_compiler_ir_stages():
    f = tfn.function(lambda x: tfn.exp(x) + 1.0)
    get = f.experimental_get_compiler_ir(tfn.constant([1.0, 2.0]))
    assert '"tfn.exp"' in get(stage="tfn")
    assert "linalg.generic" in get(stage="linalg")
    assert "memref" in get(stage="bufferized")
    assert "llvm.func" in get(stage="llvm")
    with pytest.raises(ValueError, match="unknown stage"):
        get(stage="nope")


def test_ops_carry_user_locations():
    f = tfn.function(lambda x: tfn.sqrt(x))
    concrete = f.get_concrete_function(tfn.constant([1.0]))
    text = concrete.graph.module.operation.get_asm(enable_debug_info=True)
    assert "test_function.py" in text


def test_input_signature_accepts_dynamic_shapes_and_rejects_others():
    f = tfn.function(lambda x: x * 2, input_signature=[tfn.TensorSpec([None], tfn.int32)])
    assert f(tfn.constant([1, 2, 3])).numpy().tolist() == [2, 4, 6]
    assert f(tfn.constant([4])).numpy().tolist() == [8]
    with pytest.raises(TypeError, match="Can not cast"):
        f(tfn.constant([[1]]))
    with pytest.raises(TypeError, match="Can not cast"):
        f(tfn.constant([1.0]))


def test_symbolic_tensor_as_bool_raises():
    @tfn.function(autograph=False)  # (AutoGraph would make the `if` an scf.if)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(tfn.errors.OperatorNotAllowedInGraphError):
        f(tfn.constant(1.0))


def test_leaked_symbolic_tensor():
    leaked = []

    @tfn.function
    def f(x):
        leaked.append(x + 1)
        return x

    f(tfn.constant(1.0))
    with pytest.raises(AttributeError):
        leaked[0].numpy_nonexistent  # noqa: B018
    with pytest.raises(AttributeError, match="'SymbolicTensor' object has no attribute 'numpy'"):
        leaked[0].numpy()

    @tfn.function
    def g(y):
        return y + leaked[0]

    with pytest.raises(TypeError, match="out of scope"):
        g(tfn.constant(1.0))
