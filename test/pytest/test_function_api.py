"""The tfn.function and ConcreteFunction API programs reach for, with TF 2.21's results and error classes."""
import pytest

import tfn


@tfn.function
def scale(x, y=2):
    return x * y, tfn.cast(x, tfn.float32)


def test_output_shapes_and_dtypes():
    cf = scale.get_concrete_function(tfn.TensorSpec([None], tfn.int32))
    assert cf.output_shapes == (tfn.TensorShape([None]), tfn.TensorShape([None]))
    assert cf.output_dtypes == (tfn.int32, tfn.float32)

    @tfn.function
    def f(x):
        return {"a": x, "n": 3}
    cf = f.get_concrete_function(tfn.TensorSpec([2, 3], tfn.float32))
    assert cf.output_shapes == {"a": tfn.TensorShape([2, 3]), "n": tfn.TensorShape([])}
    assert cf.output_dtypes == {"a": tfn.float32, "n": tfn.int32}


def test_one_line_signature_and_repr():
    cf = scale.get_concrete_function(tfn.TensorSpec([None], tfn.int32))
    line = ("(x: TensorSpec(shape=(None,), dtype=tfn.int32, name=None), y: Literal[2]) -> "
            "Tuple[TensorSpec(shape=(None,), dtype=tfn.int32, name=None), TensorSpec(shape=(None,), dtype=tfn.float32, "
            "name=None)]")
    assert cf.pretty_printed_signature(verbose=False) == line  # TF 2.21's one line, tf. -> tfn.
    assert repr(cf).startswith(f"<ConcreteFunction {line} at 0x")
    assert cf.pretty_printed_signature().startswith("Input Parameters:\n")


def test_one_line_signature_with_varargs_and_kwargs_is_tfs():
    @tfn.function
    def f(x, *args, y=2, **kw):
        return x * y

    cf = f.get_concrete_function(tfn.TensorSpec([None], tfn.float32), 5, y=3, z=1)
    assert cf.pretty_printed_signature(verbose=False) == (
        "(x: TensorSpec(shape=(None,), dtype=tfn.float32, name=None), args_0: Literal[5], /, *, y: Literal[3], "
        "z: Literal[1]) -> TensorSpec(shape=(None,), dtype=tfn.float32, name=None)")


def test_flat_call_of_a_concrete_function():
    cf = scale.get_concrete_function(tfn.TensorSpec([None], tfn.int32))
    a, b = cf(tfn.constant([1, 2]))
    assert a.numpy().tolist() == [2, 4] and b.numpy().tolist() == [1.0, 2.0]


def test_tracing_count():
    @tfn.function
    def f(x):
        return x + 1

    assert f.experimental_get_tracing_count() == 0
    f(tfn.constant(1))
    f(tfn.constant(2))
    assert f.experimental_get_tracing_count() == 1
    f(tfn.constant(1.0))
    assert f.experimental_get_tracing_count() == 2


def test_variable_and_tensor_ref():
    v = tfn.Variable(1.0)
    w = tfn.Variable(1.0)
    refs = {v.ref(): "v", w.ref(): "w"}
    assert refs[v.ref()] == "v" and v.ref() != w.ref() and v.ref().deref() is v
    t = tfn.constant([1, 2])
    assert t.ref() == t.ref() and t.experimental_ref().deref() is t
    with pytest.raises(TypeError):
        hash(t)


def test_function_type_captures():
    v = tfn.Variable(2.0)
    big = tfn.constant([float(i) for i in range(1000)])

    @tfn.function
    def f(x):
        return tfn.reduce_sum(x * v + big)

    cf = f.get_concrete_function(tfn.TensorSpec([], tfn.float32))
    captures = cf.function_type.captures
    assert set(captures) == {id(v), id(big)}
    assert scale.get_concrete_function(tfn.TensorSpec([], tfn.int32)).function_type.captures == {}


def test_python_defaults_after_an_input_signature():
    @tfn.function(input_signature=[tfn.TensorSpec([], tfn.int32)])
    def g(x, y=3):
        return x * y

    assert g(tfn.constant(2)).numpy() == 6
    assert g(tfn.constant(2), 3).numpy() == 6
    # TF 2.21: the default is part of the signature (Literal[3]); another value is a TypeError
    with pytest.raises(TypeError, match=r"Can not cast 4 to Literal\[3\]"):
        g(tfn.constant(2), 4)


def test_a_parameter_beyond_the_input_signature_needs_a_default():
    f = tfn.function(lambda x, y: x + y, input_signature=[tfn.TensorSpec([], tfn.float32)])
    # TF 2.21: TypeError "input_signature missing type constraint for y"
    with pytest.raises(TypeError, match="input_signature missing type constraint for y"):
        f(tfn.constant(1.0), tfn.constant(2.0))


def test_unhashable_arguments_are_a_type_error():
    class Unhashable:
        __hash__ = None

    @tfn.function
    def f(x):
        return 1

    for value in (Unhashable(), {1, 2}, bytearray(b"x")):
        with pytest.raises(TypeError, match="Could not generate a generic TraceType"):
            f(value)


def test_modifying_an_input_list_or_dict_is_a_value_error():
    @tfn.function
    def append(items):
        items.append(tfn.constant(1))
        return items[0]

    @tfn.function
    def put(d):
        d["b"] = d["a"] + 1
        return d["a"]

    @tfn.function
    def copy_is_fine(items):
        items = list(items)
        items.append(tfn.constant(1))
        return items[-1]

    with pytest.raises(ValueError, match="should not modify its Python input arguments.*modified: items"):
        append([tfn.constant(0)])
    with pytest.raises(ValueError, match="modified: d"):
        put({"a": tfn.constant(0)})
    assert copy_is_fine([tfn.constant(0)]).numpy() == 1


def test_malformed_input_signatures_are_type_errors():
    with pytest.raises(TypeError, match="input_signature must be either a tuple or a list"):
        tfn.function(lambda x: x, input_signature=tfn.TensorSpec([], tfn.int32))
    with pytest.raises(TypeError, match="possibly nested sequence of TensorSpec objects"):
        tfn.function(lambda x: x, input_signature=[1])


def test_autograph_trace_prints_while_tracing(capsys):
    @tfn.function
    def f(x):
        tfn.autograph.trace("x is", x.shape)
        return x

    f(tfn.constant([1, 2]))
    f(tfn.constant([3, 4]))
    assert capsys.readouterr().out == "x is (2,)\n"


def test_name_scope_prefixes_op_names():
    seen = {}

    @tfn.function
    def f(x):
        with tfn.name_scope("block") as scope:
            y = x + 1
            with tfn.name_scope("inner") as inner:
                z = y * 2
        with tfn.name_scope("block") as again:
            w = z - 1
        seen.update(scopes=(scope, inner, again), names=(y.name, z.name, w.name))
        return w

    assert f(tfn.constant(1)).numpy() == 3
    assert seen["scopes"] == ("block/", "block/inner/", "block_1/")
    assert seen["names"] == ("block/add:0", "block/inner/multiply:0", "block_1/subtract:0")
    with tfn.name_scope("eager") as scope:
        assert scope == "eager/"
    with pytest.raises(ValueError, match="name for name_scope must be a string"):
        tfn.name_scope(3)


def test_concrete_function_flat_signature():
    @tfn.function
    def f(x, n, d):
        return x * n + d["a"]

    cf = f.get_concrete_function(tfn.TensorSpec([], tfn.int32), 3, {"a": tfn.TensorSpec([], tfn.int32)})
    x, a = tfn.constant(1), tfn.constant(2)
    assert cf(x, 3, {"a": a}).numpy() == 5  # the structured signature
    assert cf(x, d={"a": a}).numpy() == 5  # Python values keep their traced values
    assert cf(x, a).numpy() == 5  # the flat signature: one tensor per tensor leaf
    with pytest.raises(TypeError, match="Fallback to flat signature also failed"):
        cf(x, 4, {"a": a})


def test_tracing_count_includes_the_trace_after_variable_creation():
    class M(tfn.Module):
        def __init__(self):
            self.v = None

        @tfn.function
        def __call__(self, x):
            if self.v is None:
                self.v = tfn.Variable(2.0)
            return self.v * x

    m = M()
    assert m(tfn.constant(3.0)).numpy() == 6.0
    assert m.__call__.experimental_get_tracing_count() == 2


def test_structured_outputs_outputs_and_inputs():
    v = tfn.Variable(2.0)

    @tfn.function
    def f(x):
        return {"y": x * v, "n": 3, "none": None}

    cf = f.get_concrete_function(tfn.TensorSpec([None], tfn.float32))
    out = cf.structured_outputs
    assert sorted(out) == ["n", "none", "y"] and out["none"] is None
    assert out["y"].shape.as_list() == [None] and out["y"].dtype == tfn.float32
    assert out["n"].dtype == tfn.int32  # TF 2.21: a returned Python value is a tensor of the trace
    assert len(cf.outputs) == 2
    assert len(cf.inputs) == 2  # TF 2.21: the argument's placeholder and the captured variable's
    assert cf.inputs[0].shape.as_list() == [None]


def test_structured_input_signature_names_its_specs_as_tf():
    @tfn.function
    def f(x, ys, d, k=2):
        return x

    cf = f.get_concrete_function(tfn.TensorSpec([], tfn.float32), [tfn.TensorSpec([])], {"a": tfn.TensorSpec([])})
    # TF 2.21's value: specs named by their path, Python values as they are
    assert repr(cf.structured_input_signature) == repr(((tfn.TensorSpec([], tfn.float32, "x"), [
        tfn.TensorSpec([], tfn.float32, "ys_0")], {"a": tfn.TensorSpec([], tfn.float32, "d_a")}, 2), {}))
