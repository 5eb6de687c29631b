"""Shape ops: eager ≡ compiled ≡ NumPy over dtypes, empty, rank-0 and dynamic shapes; TF's errors."""
import numpy as np
import pytest
from opcheck import assert_close, rand

import tfn

RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.int32, np.bool_, np.uint8, np.int64, np.float16]


def _many(x):
    """Every shape op applied to a rank-3 tensor, as a tuple (shared by the static and dynamic tests)."""
    return (tfn.transpose(x), tfn.transpose(x, [1, 0, 2]), tfn.reshape(x, [-1]), tfn.reshape(x, [3, -1]),
            tfn.reshape(x, [-1, 3, 1]), tfn.expand_dims(x, 0), tfn.expand_dims(x, -1), tfn.expand_dims(x, 2),
            tfn.squeeze(tfn.expand_dims(x, 1), 1), tfn.squeeze(tfn.expand_dims(x, 3), [-1]),
            tfn.concat([x, x], 0), tfn.concat([x, x, x], -1), tfn.concat([x], 1),
            tfn.stack([x, x, x], 0), tfn.stack([x, x], -1), tfn.stack([x], 2),
            *tfn.unstack(x, axis=1), *tfn.unstack(x, num=4, axis=-1))


def _many_ref(a):
    return (a.T, a.transpose(1, 0, 2), a.reshape(-1), a.reshape(3, -1), a.reshape(-1, 3, 1), a[None],
            a[..., None], a[:, :, None], a, a, np.concatenate([a, a], 0), np.concatenate([a, a, a], -1), a,
            np.stack([a, a, a], 0), np.stack([a, a], -1), np.stack([a], 2),
            *[a[:, i] for i in range(3)], *[a[..., i] for i in range(4)])


def _check_tuple(eager, compiled, want):
    assert len(eager) == len(compiled) == len(want)
    for e, c, w in zip(eager, compiled, want):
        assert e.dtype == c.dtype and e.dtype.np == w.dtype
        assert_close(e.numpy(), w)
        assert_close(c.numpy(), w)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_static_shapes(dt):
    for shape in [(2, 3, 4), (0, 3, 4)]:
        a = rand(shape, dt, RNG)
        x = tfn.constant(a)
        _check_tuple(_many(x), tfn.function(_many)(x), _many_ref(a))


@pytest.mark.parametrize("dt", [np.float32, np.bool_, np.uint8], ids=lambda d: np.dtype(d).name)
def test_dynamic_shapes(dt):
    f = tfn.function(_many, input_signature=[tfn.TensorSpec([None, 3, 4], tfn.as_dtype(dt))])
    for n in (2, 1, 0):
        a = rand((n, 3, 4), dt, RNG)
        x = tfn.constant(a)
        _check_tuple(_many(x), f(x), _many_ref(a))


def test_dynamic_result_shapes():
    seen = {}

    def f(x):
        outs = _many(x)
        seen["shapes"] = [o.shape.as_list() for o in outs]
        return outs
    spec = [tfn.TensorSpec([None, 3, 4], tfn.float32)]
    tfn.function(f, input_signature=spec)(tfn.constant(np.zeros((2, 3, 4), np.float32)))
    assert seen["shapes"][:6] == [[4, 3, None], [3, None, 4], [None], [3, None], [None, 3, 1], [1, None, 3, 4]]
    assert seen["shapes"][10:13] == [[None, 3, 4], [None, 3, 12], [None, 3, 4]]
    assert seen["shapes"][13] == [3, None, 3, 4]


def test_fully_dynamic_and_broadcast_to():
    def f(x):
        return (tfn.broadcast_to(x, [2, 3, 4]), tfn.reshape(x, [2, -1]), tfn.reshape(x, [4, 1]),
                tfn.transpose(x), tfn.squeeze(x, 0), tfn.concat([x, x], 1), tfn.stack([x, x]))

    def ref(a):
        return (np.broadcast_to(a, (2, 3, 4)), a.reshape(2, -1), a.reshape(4, 1), a.T, a[0],
                np.concatenate([a, a], 1), np.stack([a, a]))
    g = tfn.function(f, input_signature=[tfn.TensorSpec([None, None], tfn.int32)])
    a = np.arange(4, dtype=np.int32).reshape(1, 4)
    _check_tuple(f(tfn.constant(a)), g(tfn.constant(a)), ref(a))

    def h(x):
        return tfn.broadcast_to(x, [2, 3, 4]), tfn.broadcast_to(x, [3, 4])
    g = tfn.function(h, input_signature=[tfn.TensorSpec([None, None], tfn.float32)])
    for shape in [(1, 4), (3, 1), (1, 1), (3, 4)]:
        a = rand(shape, np.float32, RNG)
        want = (np.broadcast_to(a, (2, 3, 4)), np.broadcast_to(a, (3, 4)))
        _check_tuple(h(tfn.constant(a)), g(tfn.constant(a)), want)


def test_broadcast_to_static():
    def f(x):
        return tfn.broadcast_to(x, [2, 3, 4]), tfn.broadcast_to(x, (3, 4)), tfn.broadcast_to(x, [1, 3, 4])
    for dt in [np.float32, np.bool_, np.uint8, np.int32]:
        for shape in [(3, 1), (1, 4), (4,), (), (3, 4), (1, 1)]:
            a = rand(shape, dt, RNG)
            want = tuple(np.broadcast_to(a, s) for s in [(2, 3, 4), (3, 4), (1, 3, 4)])
            _check_tuple(f(tfn.constant(a)), tfn.function(f)(tfn.constant(a)), want)


def test_rank0_and_scalars():
    def f(s):
        return (tfn.reshape(s, [1, 1]), tfn.reshape(tfn.reshape(s, [1, 1]), []), tfn.expand_dims(s, 0),
                tfn.stack([s, s, s]), tfn.broadcast_to(s, [2, 2]), tfn.transpose(s),
                tfn.squeeze(tfn.reshape(s, [1, 1, 1])), tfn.reshape(s, [-1]), *tfn.unstack(tfn.reshape(s, [1])))
    for dt in [np.float32, np.bool_, np.uint8]:
        a = rand((), dt, RNG)
        want = (a.reshape(1, 1), a, a[None], np.stack([a, a, a]), np.broadcast_to(a, (2, 2)), a, a, a.reshape(-1), a)
        _check_tuple(f(tfn.constant(a)), tfn.function(f)(tfn.constant(a)), want)


def test_empty_shapes():
    def f(x):
        return (tfn.reshape(x, [0, 5]), tfn.reshape(x, [-1, 4]), tfn.transpose(x), tfn.concat([x, x], 0),
                tfn.stack([x, x], 1), tfn.broadcast_to(x, [2, 0, 4]), tfn.expand_dims(x, 0), tfn.unstack(x, axis=0))
    a = np.zeros((0, 4), np.float32)
    eager = f(tfn.constant(a))
    assert eager[-1] == []
    want = (a.reshape(0, 5), a.reshape(-1, 4), a.T, np.concatenate([a, a]), np.stack([a, a], 1),
            np.broadcast_to(a, (2, 0, 4)), a[None])
    _check_tuple(eager[:-1], tfn.function(lambda x: f(x)[:-1])(tfn.constant(a)), want)


def test_shape_arguments_as_tensors_and_lists():
    a = rand((2, 3), np.float32, RNG)
    x = tfn.constant(a)
    assert_close(tfn.reshape(x, tfn.constant([3, -1])).numpy(), a.reshape(3, -1))
    assert_close(tfn.reshape(x, np.array([6])).numpy(), a.reshape(6))
    assert_close(tfn.reshape(x, tfn.TensorShape([3, 2])).numpy(), a.reshape(3, 2))
    assert_close(tfn.transpose(x, tfn.constant([1, 0])).numpy(), a.T)
    assert_close(tfn.broadcast_to(x, (2, 2, 3)).numpy(), np.broadcast_to(a, (2, 2, 3)))
    assert_close(tfn.expand_dims(x, tfn.constant(1)).numpy(), a[:, None])
    assert_close(tfn.squeeze(tfn.reshape(x, [1, 2, 1, 3]), tfn.constant([0, 2])).numpy(), a)

    @tfn.function
    def f(x):
        return tfn.reshape(x, tfn.constant([3, 2])), tfn.concat([x, [[1.0, 2.0, 3.0]]], 0)
    r, c = f(x)
    assert_close(r.numpy(), a.reshape(3, 2))
    assert_close(c.numpy(), np.concatenate([a, [[1, 2, 3]]]).astype(np.float32))


def test_concat_and_stack_mixed_static_dynamic():
    def f(x, y):
        return tfn.concat([x, y], 0), tfn.concat([y, x, y], 1), tfn.stack([x, y]), tfn.stack([y, x], 1)
    sig = [tfn.TensorSpec([None, 3], tfn.float32), tfn.TensorSpec([2, None], tfn.float32)]
    g = tfn.function(f, input_signature=sig)
    a, b = rand((2, 3), np.float32, RNG), rand((2, 3), np.float32, RNG)
    seen = {}

    def shapes(x, y):
        outs = f(x, y)
        seen["s"] = [o.shape.as_list() for o in outs]
        return outs
    tfn.function(shapes, input_signature=sig)(tfn.constant(a), tfn.constant(b))
    assert seen["s"] == [[None, 3], [2, None], [2, 2, 3], [2, 2, 3]]
    want = (np.concatenate([a, b]), np.concatenate([b, a, b], 1), np.stack([a, b]), np.stack([b, a], 1))
    _check_tuple(f(tfn.constant(a), tfn.constant(b)), g(tfn.constant(a), tfn.constant(b)), want)


def test_stack_python_values_and_single():
    assert tfn.stack([]).dtype == tfn.float32 and tfn.stack([]).shape.as_list() == [0]
    t = tfn.stack([1, 2, 3])
    assert t.dtype == tfn.int32 and list(t.numpy()) == [1, 2, 3]
    x = tfn.constant([1.0, 2.0])
    assert_close(tfn.stack([x, [3.0, 4.0]], 1).numpy(), np.array([[1, 3], [2, 4]], np.float32))
    assert_close(tfn.concat([x], 0).numpy(), x.numpy())


def test_ir_uses_linalg_and_tensor_ops():
    def f(x):
        return (tfn.transpose(x), tfn.concat([x, x], 1), tfn.broadcast_to(x, [5, 2, 3]), tfn.reshape(x, [3, 2]),
                tfn.stack([x, x]), tfn.unstack(x)[0], tfn.expand_dims(x, 0))
    x = tfn.constant(np.zeros((2, 3), np.float32))
    ir_text = tfn.function(f).experimental_get_compiler_ir(x)("linalg")
    for op in ["linalg.transpose", "tensor.concat", "linalg.broadcast", "tensor.collapse_shape",
               "tensor.expand_shape", "tensor.insert_slice", "tensor.extract_slice"]:
        assert op in ir_text, op
    assert "tfn." not in ir_text


def _raises(cls, match, fn, *args):
    """fn raises cls(match) eagerly and while tracing."""
    with pytest.raises(cls, match=match):
        fn(*[tfn.constant(a) for a in args])
    with pytest.raises(cls, match=match):
        tfn.function(fn)(*[tfn.constant(a) for a in args])


IAE = tfn.errors.InvalidArgumentError
X = np.zeros((2, 3), np.float32)
ERRORS = [
    (IAE, r"Input to reshape is a tensor with 6 values, but the requested shape has 4", lambda x: tfn.reshape(x, [4])),
    (IAE, r"requested shape requires a multiple of 4", lambda x: tfn.reshape(x, [-1, 4])),
    (IAE, r"Only one input size may be -1, not both 0 and 1", lambda x: tfn.reshape(x, [-1, -1])),
    (IAE, r"Size 0 must be non-negative, not -2", lambda x: tfn.reshape(x, [-2, 3])),
    (IAE, r"Reshape cannot infer the missing input size for an empty tensor", lambda x: tfn.reshape(x, [0, -1])),
    (IAE, r"transpose expects a vector of size 2. But input\(1\) is a vector of size 3",
     lambda x: tfn.transpose(x, [0, 1, 2])),
    (IAE, r"0 is missing from \{1,1\}", lambda x: tfn.transpose(x, [1, 1])),
    (IAE, r"2 is out of range \[0 .. 2\)", lambda x: tfn.transpose(x, [2, 0])),
    (IAE, r"Tried to expand dim index 3 for tensor with 2 dimensions", lambda x: tfn.expand_dims(x, 3)),
    (IAE, r"Tried to expand dim index -4 for tensor with 2 dimensions", lambda x: tfn.expand_dims(x, -4)),
    (IAE, r"Can not squeeze dim\[1\], expected a dimension of 1, got 3", lambda x: tfn.squeeze(x, 1)),
    (IAE, r"Tried to squeeze dim index 2 for tensor with 2 dimensions", lambda x: tfn.squeeze(x, [2])),
    (IAE, r"Incompatible shapes: \[2,3\] vs. \[4,3\]", lambda x: tfn.broadcast_to(x, [4, 3])),
    (IAE, r"Rank of input \(2\) must be no greater than rank of output shape \(1\)",
     lambda x: tfn.broadcast_to(x, [3])),
    (IAE, r"ConcatOp : Dimension 1 in both shapes must be equal: shape\[0\] = \[2,3\] vs. shape\[2\] = \[2,4\]",
     lambda x: tfn.concat([x, x, tfn.constant(np.zeros((2, 4), np.float32))], 0)),
    (IAE, r"ConcatOp : Ranks of all input tensors should match: shape\[0\] = \[2,3\] vs. shape\[1\] = \[3\]",
     lambda x: tfn.concat([x, tfn.constant([1.0, 2.0, 3.0])], 0)),
    (IAE, r"ConcatOp : Expected concatenating dimensions in the range \[-2, 2\), but got 2",
     lambda x: tfn.concat([x, x], 2)),
    (IAE, r"Can't concatenate scalars \(use tf.stack instead\)", lambda x: tfn.concat([tfn.constant(1.0)] * 2, 0)),
    (IAE, r"cannot compute ConcatV2 as input #1\(zero-based\) was expected to be a float32 tensor but is a int32",
     lambda x: tfn.concat([x, tfn.constant(np.zeros((2, 3), np.int32))], 0)),
    (IAE, r"Shapes of all inputs must match: values\[0\].shape = \[2,3\] != values\[1\].shape = \[3,2\]",
     lambda x: tfn.stack([x, tfn.transpose(x)])),
    (IAE, r"cannot compute Pack as input #1\(zero-based\)",
     lambda x: tfn.stack([x, tfn.constant(np.zeros((2, 3), np.int32))])),
    (ValueError, r"Argument `axis` = 3 not in range \[-3, 3\)", lambda x: tfn.stack([x, x], 3)),
    (ValueError, r"Argument `axis` = 2 not in range \[-2, 2\)", lambda x: tfn.unstack(x, axis=2)),
    (IAE, r"Input shape axis 0 must equal 3, got shape \[2,3\]", lambda x: tfn.unstack(x, num=3)),
    (ValueError, r"List argument 'values' to 'ConcatV2' Op with length 0", lambda x: tfn.concat([], 0)),
    (TypeError, r"`shape` must contain integers", lambda x: tfn.reshape(x, [2.5, 3])),
]


@pytest.mark.parametrize("cls,match,fn", ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_errors(cls, match, fn):
    _raises(cls, match, fn, X)


def test_dynamic_errors():
    spec = [tfn.TensorSpec([None, 3], tfn.float32)]
    with pytest.raises(ValueError, match=r"Cannot infer argument `num` from shape \[\?,3\]"):
        tfn.function(lambda x: tfn.unstack(x), input_signature=spec)(tfn.constant(X))
    with pytest.raises(IAE, match=r"requested shape requires a multiple of 3|Input to reshape"):
        tfn.reshape(tfn.constant(X), [-1, 4])
    # A symbolic shape is reshaped to when the function runs; its count must match then (TF's error class).
    reshape = tfn.function(lambda x, s: tfn.reshape(x, s))
    assert reshape(tfn.constant(X), tfn.constant([3, 2])).shape == (3, 2)
    with pytest.raises(IAE, match=r"Input to reshape is a tensor with 6 values, but the requested shape has 8 "
                                  r"\[Op:Reshape\](.|\n)*node Assert"):
        reshape(tfn.constant(X), tfn.constant([4, 2]))
    with pytest.raises(IAE, match=r"with 6 values, but the requested shape requires a multiple of 4 \[Op:Reshape\]"):
        reshape(tfn.constant(X), tfn.constant([4, -1]))
    with pytest.raises(IAE, match=r"requires a multiple of 4"):  # a -1 given as a Python int beside a tensor size
        tfn.function(lambda x, n: tfn.reshape(x, [n, -1]))(tfn.constant(X), tfn.constant(4))
    assert reshape(tfn.constant(X), tfn.constant([-1, 2])).shape == (3, 2)
    broadcast = tfn.function(lambda x, s: tfn.broadcast_to(x, s))
    assert broadcast(tfn.constant([1.0, 2.0]), tfn.constant([3, 2])).numpy().tolist() == [[1.0, 2.0]] * 3
    with pytest.raises(IAE, match=r"Unable to broadcast tensor of shape \[2\] to tensor of shape \[3,5\] "
                                  r"\[Op:BroadcastTo\]"):
        broadcast(tfn.constant([1.0, 2.0]), tfn.constant([3, 5]))
    with pytest.raises(TypeError, match=r"`axis` must be known when the function is traced"):
        tfn.function(lambda x, a: tfn.expand_dims(x, a))(tfn.constant(X), tfn.constant(0))
    # Squeezing without an axis keeps dynamic dims; with the axis given, a dynamic dim may be squeezed.
    f = tfn.function(lambda x: (tfn.squeeze(x), tfn.squeeze(x, 0)), input_signature=[tfn.TensorSpec([None, 1, 3])])
    a = rand((1, 1, 3), np.float32, RNG)
    s_all, s0 = f(tfn.constant(a))
    assert_close(s_all.numpy(), a.reshape(1, 3))
    assert_close(s0.numpy(), a.reshape(1, 3))


def _spec(*shape, dtype=tfn.float32):
    return tfn.TensorSpec(list(shape), dtype)


RUNTIME_ERRORS = [
    (lambda x: tfn.reshape(x, [3, 4]), [_spec(None, 4)], [(2, 4)],
     r"Input to reshape is a tensor with 8 values, but the requested shape has 12"),
    (lambda x: tfn.reshape(x, [-1, 3]), [_spec(None, 4)], [(2, 4)],
     r"Input to reshape is a tensor with 8 values, but the requested shape requires a multiple of 3"),
    (lambda x: tfn.squeeze(x, 0), [_spec(None, 3)], [(2, 3)], r"Can not squeeze dim\[0\], expected a dimension "
                                                              r"of 1, got 2"),
    (lambda x: tfn.squeeze(x, 0), [_spec(None, 3)], [(0, 3)], r"Can not squeeze dim\[0\].* got 0"),
    (lambda x: tfn.broadcast_to(x, [2, 3]), [_spec(None)], [(2,)], r"Incompatible shapes: dimension 1 .* 2 at run"),
    (lambda x: tfn.broadcast_to(x, [2, 3]), [_spec(None)], [(0,)], r"Incompatible shapes"),
    (lambda x: tfn.broadcast_to(x, [3, 1]), [_spec(None, None)], [(3, 2)], r"Incompatible shapes"),
    (lambda x, y: tfn.concat([x, y], 0), [_spec(None, None), _spec(2, 3)], [(2, 4), (2, 3)],
     r"ConcatOp : Dimension 1 in both shapes must be equal: 3 vs. 4 at run time"),
    (lambda x, y: tfn.concat([x, y, x], 1), [_spec(None, 2), _spec(None, 2)], [(2, 2), (3, 2)],
     r"ConcatOp : Dimension 0 in both shapes must be equal: 2 vs. 3 at run time"),
    (lambda x, y: tfn.stack([x, y]), [_spec(None), _spec(None)], [(2,), (3,)],
     r"Shapes of all inputs must match: values\[0\].shape\[0\] = 2 != values\[1\].shape\[0\] = 3"),
    (lambda x: tfn.unstack(x, num=3), [_spec(None)], [(2,)], r"Input shape axis 0 must equal 3, got a dimension "
                                                             r"of 2 at run time"),
]


@pytest.mark.parametrize("fn,sig,bad,match", RUNTIME_ERRORS, ids=[e[3][:30] for e in RUNTIME_ERRORS])
def test_runtime_size_errors(fn, sig, bad, match):
    """Sizes known only at run time that TF rejects raise InvalidArgumentError (never read out of bounds)."""
    f = tfn.function(fn, input_signature=sig)
    args = [tfn.constant(rand(s, np.float32, RNG)) for s in bad]
    with pytest.raises(IAE, match=match):
        f(*args)
    with pytest.raises(IAE, match=match.split(":")[0].split(", got a")[0]):  # eagerly: TF's eager message
        fn(*args)


def test_runtime_error_then_good_call():
    f = tfn.function(lambda x: tfn.reshape(x, [3, 4]), input_signature=[_spec(None, 4)])
    with pytest.raises(IAE, match="requested shape has 12"):
        f(tfn.constant(np.zeros((2, 4), np.float32)))
    a = rand((3, 4), np.float32, RNG)
    assert_close(f(tfn.constant(a)).numpy(), a)
