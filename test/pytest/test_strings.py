"""String tensors: eagerly and in compiled functions (i64 handles into the runtime's per-call string table)."""
import numpy as np
import pytest

import tfn


def test_the_guide_double_example(capsys):
    @tfn.function
    def double(a):
        print("Tracing with", a)
        return a + a

    assert str(double(tfn.constant("a"))) == "tfn.Tensor(b'aa', shape=(), dtype=string)"
    assert str(double(tfn.constant("b"))) == "tfn.Tensor(b'bb', shape=(), dtype=string)"
    assert capsys.readouterr().out == 'Tracing with Tensor("a:0", shape=(), dtype=string)\n'
    concrete = double.get_concrete_function(tfn.TensorSpec(shape=[], dtype=tfn.string))
    assert concrete(tfn.constant("c")).numpy() == b"cc"
    assert repr(double(tfn.constant("x"))) == "<tfn.Tensor: shape=(), dtype=string, numpy=b'xx'>"


def test_eager_concat_equality_and_printing(capsys):
    a = tfn.constant("a")
    assert (a + a).numpy() == b"aa" and (a + "b").numpy() == b"ab"
    assert bool(tfn.equal(a, "a")) and bool(a == "a") and not bool(a != "a")
    assert (tfn.constant(["a", "b"]) == "b").numpy().tolist() == [False, True]
    tfn.print(a + a, tfn.constant([["x", 'q"']]))
    assert capsys.readouterr().err == 'aa [["x" "q\\""]]\n'


def test_compiled_string_ops_in_and_out(capsys):
    @tfn.function
    def f(s, t):
        tfn.print("got", s, t)
        joined = s + "-" + t
        return joined, joined == "a-b", tfn.not_equal(s, t), tfn.where(s == t, s, t + s)

    s, t = tfn.constant(["a", "xy\x00z"]), tfn.constant("b")
    joined, eq, ne, picked = f(s, t)
    assert joined.numpy().tolist() == [b"a-b", b"xy\x00z-b"] and joined.dtype == tfn.string
    assert eq.numpy().tolist() == [True, False] and ne.numpy().tolist() == [True, True]
    assert picked.numpy().tolist() == [b"ba", b"bxy\x00z"]
    assert capsys.readouterr().err == 'got ["a" "xy\\x00z"] b\n'
    assert f(tfn.constant(["b", "b"]), t)[3].numpy().tolist() == [b"b", b"b"]  # a second call: a fresh table


def test_string_constants_and_reshapes_compile():
    @tfn.function
    def f(x):
        table = tfn.constant([["p", ""], ["é", "\\"]])
        return tfn.reshape(table, [4]) + x, tfn.transpose(table)

    joined, transposed = f(tfn.constant("!"))
    assert joined.numpy().tolist() == [b"p!", b"!", "é!".encode(), b"\\!"]
    assert transposed.numpy().tolist() == [[b"p", "é".encode()], [b"", b"\\"]]


def test_string_signature_errors():
    double = tfn.function(lambda a: a + a)
    concrete = double.get_concrete_function(tfn.constant("a"))
    with pytest.raises(tfn.errors.InvalidArgumentError, match="int32"):
        concrete(tfn.constant(1))
    with pytest.raises(tfn.errors.InvalidArgumentError):
        tfn.constant("a") + tfn.constant(1)
    assert np.asarray(double(tfn.constant(["a", "b"]))).tolist() == [b"aa", b"bb"]


def test_numbers_do_not_convert_to_strings():
    a = tfn.constant("x")
    with pytest.raises(TypeError, match="Cannot convert 1 to EagerTensor of dtype string"):
        a + 1
    with pytest.raises(TypeError, match="dtype string"):
        tfn.function(lambda s: s + 1)(a)
    with pytest.raises(TypeError, match="dtype string"):
        tfn.constant([[1]], tfn.string)
