"""tfn.types.experimental (TraceType, FunctionType, TensorSpec) and tfn.nest, with TensorFlow's rules and errors."""
import collections
import weakref

import pytest

import tfn as tf
from tfn.tracing import trace_type
from tfn.types.experimental import FunctionType, TensorSpec, TraceType

Point = collections.namedtuple("Point", "x y")


def test_public_names():
    assert tf.types.experimental.TensorSpec is tf.TensorSpec is TensorSpec
    assert tf.types.experimental.PolymorphicFunction is tf.PolymorphicFunction
    f = tf.function(lambda x: x)
    assert isinstance(f, tf.types.experimental.PolymorphicFunction)
    c = f.get_concrete_function(tf.constant(1))
    assert isinstance(c.function_type, FunctionType)
    assert all(isinstance(t, TraceType) for t in (trace_type.of(1), trace_type.of([1]), trace_type.of({"a": 1}),
                                                  trace_type.of(tf.constant(1)), trace_type.of(object())))
    assert list(c.function_type.parameters) == ["x"]
    assert c.function_type.parameters["x"].type_constraint == TensorSpec([], tf.int32)


def test_tensor_spec_subtyping():
    fixed, some, unranked = TensorSpec([1, 2]), TensorSpec([None, 2]), TensorSpec(None)
    assert fixed.is_subtype_of(some) and some.is_subtype_of(unranked) and fixed.is_subtype_of(unranked)
    assert not some.is_subtype_of(fixed) and not unranked.is_subtype_of(some)
    assert not fixed.is_subtype_of(TensorSpec([1, 2], tf.int32))
    assert fixed.most_specific_common_supertype([TensorSpec([3, 2])]) == TensorSpec([None, 2])
    assert fixed.most_specific_common_supertype([TensorSpec([3])]) == unranked
    assert fixed.most_specific_common_supertype([TensorSpec([1, 2], tf.int32)]) is None
    assert TensorSpec([2], name="a").most_specific_common_supertype([TensorSpec([2], name="a")]).name == "a"
    with pytest.raises(ValueError, match="needs a tfn.function trace"):
        fixed.placeholder_value()


def test_structure_and_literal_types():
    a, b = trace_type.of([1, tf.constant([1.0])]), trace_type.of([1, tf.constant([1.0, 2.0])])
    assert repr(a) == "List[Literal[1], TensorSpec(shape=(1,), dtype=tfn.float32, name=None)]"
    assert a.most_specific_common_supertype([b]) == trace_type.of([1, TensorSpec([None])])
    assert a.is_subtype_of(a.most_specific_common_supertype([b]))
    assert trace_type.of([2, tf.constant([1.0])]).most_specific_common_supertype([a]) is None
    assert trace_type.of({3: 4, 1: 2}) == trace_type.of({1: 2, 3: 4})  # mappings: key order does not matter
    assert trace_type.of([1, 2]) != trace_type.of([2, 1])
    assert trace_type.of(Point(1, 2)) != trace_type.of((1, 2))
    assert trace_type.of(1) != trace_type.of(1.0) and trace_type.of(True) != trace_type.of(1)
    assert trace_type.of(Point(1, 2)).placeholder_value(None) == Point(1, 2)


def test_generic_objects():
    class Obj:
        pass

    o = Obj()
    t = trace_type.of(o)
    assert t == trace_type.of(o) and t != trace_type.of(Obj()) and hash(t) == hash(trace_type.of(o))
    assert t.placeholder_value(None) is o
    ref = weakref.ref(o)
    del o
    assert ref() is None and t != t.__class__(Obj()) and repr(t) == "Weakref[<deleted object>]"
    for unhashable in ({1, 2}, bytearray(b"x")):  # TF: no generic trace type for an unhashable object
        with pytest.raises(TypeError, match="Could not generate a generic TraceType"):
            trace_type.of(unhashable)


def test_nest_flatten_and_pack():
    s = {"b": [1, (2, 3)], "a": Point(4, None), "c": {}}
    assert tf.nest.flatten(s) == [4, None, 1, 2, 3]
    assert tf.nest.flatten(None) == [None] and tf.nest.flatten("ab") == ["ab"] and tf.nest.flatten([]) == []
    packed = tf.nest.pack_sequence_as(s, list("vwxyz"))
    assert packed == {"b": ["x", ("y", "z")], "a": Point("v", "w"), "c": {}} and list(packed) == ["b", "a", "c"]
    assert isinstance(packed["a"], Point)
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    assert tf.nest.flatten(od) == [2, 1]
    assert tf.nest.pack_sequence_as(od, [5, 6]) == collections.OrderedDict([("z", 6), ("a", 5)])
    dd = collections.defaultdict(list, {"k": 1})
    assert tf.nest.pack_sequence_as(dd, [2]).default_factory is list
    assert tf.nest.pack_sequence_as(1, [7]) == 7
    assert tf.nest.is_nested([1]) and tf.nest.is_nested({}) and not tf.nest.is_nested("ab")
    assert not tf.nest.is_nested(tf.constant([1]))
    assert tf.nest.flatten_with_tuple_paths({"a": [1, {"b": 2}]}) == [(("a", 0), 1), (("a", 1, "b"), 2)]
    assert tf.nest.flatten_with_joined_string_paths({"a": [1, 2]}) == [("a/0", 1), ("a/1", 2)]


def test_nest_errors_as_tf():
    with pytest.raises(ValueError, match=r"Could not pack sequence. Structure had 2 atoms, but flat_sequence had 3 "
                       r"items.  Structure: \[1, 2\], flat_sequence: \[1, 2, 3\]."):
        tf.nest.pack_sequence_as([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="Structure had 3 atoms, but flat_sequence had 2 items"):
        tf.nest.pack_sequence_as([1, [2, 3]], [1, 2])
    with pytest.raises(TypeError, match="Attempted to pack value:\n  5\ninto a structure, but found incompatible "
                       "type `<class 'int'>` instead."):
        tf.nest.pack_sequence_as([1], 5)
    with pytest.raises(ValueError, match="The target structure is of type `<class 'int'>`"):
        tf.nest.pack_sequence_as(1, [1, 2])
    with pytest.raises(TypeError, match="nest only supports dicts with sortable keys."):
        tf.nest.flatten({1: 1, "a": 2})


def test_assert_same_structure_and_map_structure():
    tf.nest.assert_same_structure([1, (2, {"a": 3})], ["x", ("y", {"a": None})])
    with pytest.raises(ValueError) as e:
        tf.nest.assert_same_structure([1, 2], [1, 2, 3])
    assert str(e.value) == (
        "The two structures don't have the same nested structure.\n\nFirst structure: type=list str=[1, 2]\n\n"
        "Second structure: type=list str=[1, 2, 3]\n\nMore specifically: The two structures don't have the same "
        "number of elements. First structure: type=list str=[1, 2], second structure: type=list str=[1, 2, 3].\n"
        "Entire first structure:\n[., .]\nEntire second structure:\n[., ., .]")
    with pytest.raises(TypeError, match="The two namedtuples don't have the same sequence type. First structure "
                       "type=list str=\\[1\\] has type list, while second structure type=tuple str=\\(1,\\) has type "
                       "tuple"):
        tf.nest.assert_same_structure([1], (1,))
    tf.nest.assert_same_structure([1], (1,), check_types=False)
    with pytest.raises(ValueError, match='Substructure "type=list str=\\[1\\]" is a sequence, while substructure '
                       '"type=int str=1" is not'):
        tf.nest.assert_same_structure([[1]], [1])
    with pytest.raises(ValueError, match="The two dictionaries don't have the same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    assert tf.nest.map_structure(lambda a, b: a + b, {"k": [1, 2]}, {"k": [10, 20]}) == {"k": [11, 22]}
    assert tf.nest.map_structure(lambda t: t * 2, Point(tf.constant(1), 3)).y == 6
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        tf.nest.map_structure(lambda: 0)
    with pytest.raises(ValueError, match="Only valid keyword arguments are `check_types` and `expand_composites`, "
                       "not: `bogus`"):
        tf.nest.map_structure(lambda a: a, [1], bogus=1)
    assert tf.nest.map_structure_with_paths(lambda p, v: f"{p}={v}", {"a": [1]}) == {"a": ["a/0=1"]}


def test_a_nan_argument_is_its_own_literal_type():
    """A Python float NaN equals nothing, itself included (and each NaN object hashes apart): its Literal type did
    not match the trace made for it, so every call raised 'Can not cast nan to Literal[nan]'."""
    import numpy as np
    assert trace_type.of(float("nan")) == trace_type.of(float("nan"))
    assert hash(trace_type.of(float("nan"))) == hash(trace_type.of(float("nan")))
    assert trace_type.of(float("nan")) != trace_type.of(1.0)
    f = tf.function(lambda x: x * 2)
    assert np.isnan(f(float("nan")).numpy()) and np.isnan(f(float("nan")).numpy())
    assert f(1.5).numpy() == 3.0
    assert f.experimental_get_tracing_count() == 2


def test_shape_dimensions_are_integers_or_none():
    """TensorShape([2.5]) was truncated to (2,) (and TensorSpec([2.5]) traced a function for it); TF's Dimension
    takes integers (anything with __index__) and None only."""
    import numpy as np
    with pytest.raises(TypeError, match="Dimension value must be integer or None"):
        tf.TensorSpec([2.5])
    with pytest.raises(TypeError, match="Dimension value must be integer or None"):
        tf.TensorShape([1, "a"])
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        tf.TensorShape([-1])
    assert tf.TensorShape([np.int64(3), None]).as_list() == [3, None]
