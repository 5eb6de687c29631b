"""Every differentiable op of the table: a gradient rule, and its gradients checked by finite differences (float64),
with several shapes and broadcasting; a few second derivatives; eager gradients equal compiled ones."""
import numpy as np
import pytest
from opcheck import central_differences

import tfn
from tfn.core.api import OP_API
from tfn.dialects.optable import OPS

RNG = np.random.default_rng(11)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float64)


def pos(*shape):
    return rand(*shape, lo=0.5, hi=2.0)


def apart(*shape):
    """Values whose pairs differ by at least 0.1 (no ties for max/min)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (RNG.permutation(n) * 0.25 - 1.0).reshape(shape).astype(np.float64)


def shifted(*shape):
    """apart() values moved off the 0.25 grid: never equal to another apart() value."""
    return apart(*shape) + 0.1


SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]
UNARY = {"identity": (tfn.identity, rand), "negative": (tfn.negative, rand), "abs": (tfn.abs, pos),
         "sign": (tfn.sign, pos), "square": (tfn.square, rand), "sqrt": (tfn.sqrt, pos),
         "rsqrt": (tfn.math.rsqrt, pos), "exp": (tfn.exp, rand), "log": (tfn.math.log, pos),
         "tanh": (tfn.tanh, rand), "sigmoid": (tfn.sigmoid, rand), "sin": (tfn.sin, rand), "cos": (tfn.cos, rand),
         # inside their domains: (-1, 1) for asin, acos, atanh, x > 1 for acosh, no pole of tan
         **{name: (getattr(tfn.math, name), lambda *s: rand(*s, lo=-0.9, hi=0.9))
            for name in ("asin", "acos", "atanh", "tan")},
         "acosh": (tfn.math.acosh, lambda *s: rand(*s, lo=1.2, hi=3.0))}
BINARY = {"add": (tfn.add, rand, rand), "subtract": (tfn.subtract, rand, rand),
          "multiply": (tfn.multiply, rand, rand), "divide": (tfn.divide, rand, pos),
          "pow": (tfn.pow, pos, rand), "maximum": (tfn.maximum, apart, shifted),
          "minimum": (tfn.minimum, apart, shifted),
          "floormod": (tfn.math.floormod, lambda *s: rand(*s, lo=0.1, hi=0.9), lambda *s: rand(*s, lo=1.1, hi=2.0))}
BOOL23 = np.array([[True, False, True], [False, False, True]])


def _cases():
    """op name -> list of (function of float64 tensors, numpy inputs): elementwise ops from the table (unary and
    binary ops without attributes, by their public function), the others by hand."""
    cases = {}
    for name, (fn, gen) in UNARY.items():
        cases[name] = [(fn, [gen(*s)]) for s in [(), (3,), (2, 3)]]
    for name, (fn, gx, gy) in BINARY.items():
        cases[name] = [(fn, [gx(*a), gy(*b)]) for a, b in SHAPES]
    for name, op in OPS.items():  # a new elementwise op of the table is checked without a line here
        if not op.differentiable or op.attrs or name in cases or name in NO_GRADIENT:
            continue
        if op.operands == ("x",):
            cases[name] = [(OP_API[op], [pos(*s)]) for s in [(), (3,), (2, 3)]]
        elif op.operands == ("x", "y"):
            cases[name] = [(OP_API[op], [pos(*a), pos(*b)]) for a, b in SHAPES]
    m = rand(3, 4)
    cases["select"] = [(lambda x, y: tfn.where(BOOL23, x, y), [rand(2, 3), rand(3)]),
                       (lambda x, y: tfn.where(BOOL23[0], x, y), [rand(2, 3), rand(2, 1)])]
    cases["cast"] = [(lambda x: tfn.cast(tfn.cast(x, tfn.float32), tfn.float64) * x, [rand(2, 3)])]
    cases["fill"] = [(lambda x: tfn.fill([2, 3], x), [rand()])]
    cases["gather"] = [(lambda x: tfn.gather(x, [[0, 2], [2, 2]]), [rand(3, 4)]),
                       (lambda x: tfn.gather(x, [3, 0, 3], axis=1), [rand(2, 4, 2)]),
                       (lambda x: tfn.gather(x, [[1, 1], [0, 2]], axis=1, batch_dims=1), [rand(2, 3, 2)])]
    cases["strided_slice"] = [(lambda x: x[1:, ::2], [rand(3, 4)]), (lambda x: x[0], [rand(3, 4)]),
                              (lambda x: x[..., None, ::-1], [rand(2, 3)]), (lambda x: x[None], [rand()])]
    cases["reduce_sum"] = [(tfn.reduce_sum, [m]), (lambda x: tfn.reduce_sum(x, 1, keepdims=True), [m])]
    cases["reduce_mean"] = [(tfn.reduce_mean, [m]), (lambda x: tfn.reduce_mean(x, 0), [m])]
    with_zero = rand(3, 4)
    with_zero[1, 2] = 0.0
    two_zeros = rand(3, 4)
    two_zeros[0, 1] = two_zeros[0, 3] = 0.0
    cases["reduce_prod"] = [(lambda x: tfn.reduce_prod(x, 1), [m]), (lambda x: tfn.reduce_prod(x, 1), [with_zero]),
                            (lambda x: tfn.reduce_prod(x, 1, keepdims=True), [two_zeros])]
    cases["reduce_max"] = [(tfn.reduce_max, [apart(3, 4)]), (lambda x: tfn.reduce_max(x, 0), [apart(3, 4)])]
    cases["reduce_min"] = [(lambda x: tfn.reduce_min(x, 1, keepdims=True), [apart(3, 4)])]
    cases["tensor_scatter_update"] = [(lambda t, u: tfn.tensor_scatter_nd_update(t, [[0], [2]], u),
                                       [rand(3, 2), rand(2, 2)]),
                                      (lambda t, u: tfn.tensor_scatter_nd_update(t, [[0, 1], [2, 0]], u),
                                       [rand(3, 2), rand(2)])]
    cases["gather_nd"] = [(lambda x: tfn.gather_nd(x, [[0, 1], [2, 0], [0, 1]]), [rand(3, 2)]),
                          (lambda x: tfn.gather_nd(x, [[[1]], [[0]]]), [rand(2, 3)])]
    cases["check_numerics"] = [(lambda x: tfn.debugging.check_numerics(x, "x"), [rand(2, 3)])]
    cases["ensure_shape"] = [(lambda x: tfn.ensure_shape(x, [None, 3]), [rand(2, 3)])]
    cases["tensor_scatter_add"] = [(lambda t, u: tfn.tensor_scatter_nd_add(t, [[0], [2], [0]], u),
                                    [rand(3, 2), rand(3, 2)]),
                                   (lambda t, u: tfn.tensor_scatter_nd_add(t, [[0, 1], [0, 1]], u),
                                    [rand(3, 2), rand(2)])]
    cases["transpose"] = [(tfn.transpose, [rand(2, 3)]), (lambda x: tfn.transpose(x, [1, 2, 0]), [rand(2, 3, 4)])]
    cases["reshape"] = [(lambda x: tfn.reshape(x, [3, -1]), [rand(2, 3)])]
    # a shape computed at run time: reshaped by a gather, whose result a tfn.check passes on
    cases["check"] = [(lambda x: tfn.reshape(x, tfn.shape(x)[::-1]), [rand(2, 3)])]
    cases["expand_dims"] = [(lambda x: tfn.expand_dims(x, -1), [rand(2, 3)])]
    cases["squeeze"] = [(tfn.squeeze, [rand(2, 1, 3, 1)]), (lambda x: tfn.squeeze(x, [1]), [rand(2, 1, 3, 1)])]
    cases["broadcast_to"] = [(lambda x: tfn.broadcast_to(x, [2, 4, 3]), [rand(4, 1)])]
    cases["tile"] = [(lambda x: tfn.tile(x, [2, 1, 3]), [rand(2, 3, 2)]), (lambda x: tfn.tile(x, [3]), [rand(2)])]
    cases["pad"] = [(lambda x, v: tfn.pad(x, [[1, 0], [2, 1]], constant_values=v), [rand(2, 3), rand()]),
                    (lambda x: tfn.pad(x, [[0, 2]], mode="REFLECT"), [rand(4)])]
    cases["concat"] = [(lambda x, y: tfn.concat([x, y], 1), [rand(2, 3), rand(2, 2)]),
                       (lambda x, y: tfn.concat([x, y, x], 0), [rand(2, 3), rand(1, 3)])]
    cases["stack"] = [(lambda x, y: tfn.stack([x, y], 1), [rand(2, 3), rand(2, 3)])]
    cases["unstack"] = [(lambda x: tfn.unstack(x, axis=1), [rand(2, 3)]), (lambda x: tfn.unstack(x)[1], [rand(3, 2)])]
    cases["matmul"] = [(lambda a, b, ta=ta, tb=tb: tfn.matmul(a, b, transpose_a=ta, transpose_b=tb),
                        [rand(*((3, 2) if ta else (2, 3))), rand(*((4, 3) if tb else (3, 4)))])
                       for ta in (False, True) for tb in (False, True)]
    cases["matmul"].append((tfn.matmul, [rand(2, 2, 3), rand(3, 4)]))
    conv = [(1, "SAME", 1), (1, "VALID", 1), (2, "SAME", 1), (2, "VALID", 1), (1, "SAME", 2), (1, "VALID", 2)]
    cases["conv2d"] = [(lambda x, w, s=s, p=p, d=d: tfn.nn.conv2d(x, w, s, p, dilations=d),
                        [rand(2, 5, 6, 2), rand(2, 3, 2, 3)]) for s, p, d in conv]
    # stride 1 with even SAME padding (odd filters): the input gradient is a SAME convolution of g itself
    cases["conv2d"].append((lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME"), [rand(2, 4, 5, 3), rand(3, 3, 3, 2)]))
    pools = [(2, 2, "VALID"), (3, 2, "SAME"), (2, 1, "SAME"), (3, 3, "VALID"), ((1, 3), (2, 1), "SAME")]
    cases["max_pool2d"] = [(lambda x, k=k, s=s, p=p: tfn.nn.max_pool2d(x, k, s, p), [rand(2, 5, 6, 3)])
                           for k, s, p in pools]
    depthwise = conv + [(1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1), (2, [[0, 0], [2, 0], [1, 1], [0, 0]], 1)]
    cases["depthwise_conv2d"] = [(lambda x, w, s=s, p=p, d=d: tfn.nn.depthwise_conv2d(x, w, [1, s, s, 1], p,
                                                                                      dilations=d),
                                  [rand(2, 5, 6, 2), rand(2, 3, 2, 3)]) for s, p, d in depthwise]
    cases["depthwise_conv2d"].append((lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
                                      [rand(1, 4, 4, 3), rand(3, 3, 3, 1)]))
    return cases


NO_GRADIENT = {"floordiv"}  # as TF: differentiable in the table, but its rule gives no gradient (piecewise const.)
CASES = _cases()
DIFFERENTIABLE = sorted(name for name, op in OPS.items() if op.differentiable)
PARAMS = [pytest.param(name, i, id=f"{name}-{i}") for name in sorted(CASES) for i in range(len(CASES[name]))]


def test_every_differentiable_op_has_a_finite_difference_check():
    missing = [n for n in DIFFERENTIABLE if n not in CASES and n not in NO_GRADIENT]
    assert not missing, f"differentiable ops without a finite-difference case: {missing}"


def _loss(fn, weights, xs):
    outs = fn(*xs)
    outs = outs if isinstance(outs, list) else [outs]
    return sum(tfn.reduce_sum(o * w) for o, w in zip(outs, weights))


def _weights(fn, arrays):
    outs = fn(*[tfn.constant(a) for a in arrays])
    outs = outs if isinstance(outs, list) else [outs]
    return [tfn.constant(rand(*o.shape)) for o in outs]


def _tape_grads(fn, weights, arrays):
    xs = [tfn.constant(a) for a in arrays]
    with tfn.GradientTape() as tape:
        tape.watch(xs)
        loss = _loss(fn, weights, xs)
    return tape.gradient(loss, xs)


def _numeric_grads(fn, weights, arrays, eps=1e-6):
    return central_differences(lambda xs: float(_loss(fn, weights, [tfn.constant(x) for x in xs]).numpy()),
                               arrays, eps)


@pytest.mark.parametrize("name,i", PARAMS)
def test_finite_differences(name, i):
    fn, arrays = CASES[name][i]
    weights = _weights(fn, arrays)
    got = _tape_grads(fn, weights, arrays)
    coarse = name == "cast"  # (through float32: a larger step, a looser tolerance)
    want = _numeric_grads(fn, weights, arrays, 1e-2 if coarse else 1e-6)
    tol = 1e-5 if coarse else 1e-6
    for g, w, a in zip(got, want, arrays):
        assert g is not None
        assert g.shape == a.shape and g.dtype is tfn.float64
        np.testing.assert_allclose(g.numpy(), w, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_equals_compiled(name):
    fn, arrays = CASES[name][-1]
    weights = _weights(fn, arrays)

    @tfn.function(autograph=False)
    def grads(*xs):
        with tfn.GradientTape() as tape:
            tape.watch(list(xs))
            loss = _loss(fn, weights, list(xs))
        return tape.gradient(loss, list(xs))

    eager = _tape_grads(fn, weights, arrays)
    compiled = grads(*[tfn.constant(a) for a in arrays])
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_floordiv_has_no_gradient():
    x = tfn.constant(rand(3))
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.math.floordiv(x, 0.3)
    assert tape.gradient(y, x) is None


SECOND = {"tanh": (tfn.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
          "sin": (tfn.sin, lambda x: -np.sin(x)), "exp": (tfn.exp, np.exp),
          "cube": (lambda x: x * x * x, lambda x: 6 * x), "sigmoid": (tfn.sigmoid, lambda x: (
              (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s))),
          "log": (tfn.math.log, lambda x: -1 / (x * x)), "div": (lambda x: 1.0 / x, lambda x: 2 / x ** 3)}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives(name):
    fn, want = SECOND[name]
    a = pos(4)
    x = tfn.constant(a)
    with tfn.GradientTape() as outer:
        outer.watch(x)
        with tfn.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), want(a), rtol=1e-10)


def test_hessian_of_a_quadratic_form_through_matmul():
    a = rand(3, 3)
    x = tfn.Variable(rand(3, 1))
    with tfn.GradientTape(persistent=True) as outer:
        with tfn.GradientTape() as inner:
            y = tfn.reduce_sum(tfn.matmul(tfn.transpose(x), tfn.matmul(tfn.constant(a), x)))
        g = inner.gradient(y, x)
        rows = [g[i, 0] for i in range(3)]
    hessian = np.stack([outer.gradient(r, x).numpy()[:, 0] for r in rows])
    np.testing.assert_allclose(hessian, a + a.T, rtol=1e-12)


_B = tfn.constant(np.arange(3.0))
_W = tfn.constant(rand(3, 2))
DYNAMIC = {"broadcasting": lambda x: x * _B + _B, "reductions": lambda x: tfn.reduce_sum(x, 1) + tfn.reduce_mean(x),
           "reduce_max": lambda x: tfn.reduce_max(x, 0), "reduce_prod": lambda x: tfn.reduce_prod(x, 1),
           "matmul": lambda x: tfn.matmul(x, _W), "reshape": lambda x: tfn.reshape(x, [-1]),
           "concat": lambda x: tfn.concat([x, x * 2.0], 0), "transpose": tfn.transpose,
           "slice": lambda x: x[:, 1:], "index": lambda x: x[:, 2, None], "unary": lambda x: tfn.tanh(x) * tfn.exp(x),
           "expand_squeeze": lambda x: tfn.squeeze(tfn.expand_dims(x, 1), [1]),
           "where": lambda x: tfn.where(x > 1.0, x, x * x), "tile": lambda x: tfn.tile(x, [2, 3])}


@pytest.mark.parametrize("name", sorted(DYNAMIC))
def test_compiled_gradients_with_a_dynamic_dim(name):
    fn = DYNAMIC[name]

    @tfn.function(input_signature=[tfn.TensorSpec([None, 3], tfn.float64)], autograph=False)
    def grad(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(fn(x) * fn(x))
        return tape.gradient(y, x)

    for rows in (4, 1):
        a = pos(rows, 3)
        weights = [tfn.constant(np.ones(fn(tfn.constant(a)).shape))]
        want = _numeric_grads(lambda x: fn(x) * fn(x), weights, [a])[0]
        np.testing.assert_allclose(grad(tfn.constant(a)).numpy(), want, rtol=1e-6, atol=1e-6)


def test_tensor_scatter_update_gradient_with_a_size_known_at_run_time():
    @tfn.function(input_signature=[tfn.TensorSpec([None, 3], tfn.float64)], autograph=False)
    def grad(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(tfn.tensor_scatter_nd_update(x, [[0]], [[1.0, 2.0, 3.0]]) * x)
        return tape.gradient(y, x)

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(grad(x).numpy(), [[1.0, 2.0, 3.0], 2 * x[1]])  # row 0 replaced: d/dx = its value


@pytest.mark.parametrize("axis,spec", [(0, [None, 3]), (1, [None, None])])
def test_gather_and_reshape_gradients_with_sizes_known_at_run_time(axis, spec):
    """Sizes of the gathered (and reshaped) tensor known only when the function runs are read then: one trace."""
    idx = [0, 1, 1]

    @tfn.function(input_signature=[tfn.TensorSpec(spec, tfn.float64)])
    def grad(x):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(tfn.square(tfn.gather(tfn.reshape(x * 1.0, tfn.shape(x)), idx, axis=axis)))
        return tape.gradient(y, x)

    for rows in (2, 5):
        a = np.arange(rows * 3, dtype=np.float64).reshape(rows, 3)
        picks = np.bincount(idx, minlength=a.shape[axis])  # d/da of sum(a[k]**2) over the picked k: 2 a per pick
        want = 2 * a * (picks[:, None] if axis == 0 else picks[None, :])
        np.testing.assert_allclose(grad(tfn.constant(a)).numpy(), want)
    assert grad.experimental_get_tracing_count() == 1


def test_indexing_at_a_run_time_index():
    w = rand(4)

    @tfn.function(autograph=False)
    def grad(x, i):
        with tfn.GradientTape() as tape:
            tape.watch(x)
            y = tfn.reduce_sum(x[i, 1:] * w[1:])
        return tape.gradient(y, x)

    for i in (1, -1):
        want = np.zeros((3, 4))
        want[i, 1:] = w[1:]
        np.testing.assert_array_equal(grad(tfn.constant(rand(3, 4)), tfn.constant(i)).numpy(), want)


def test_conv2d_gradient_with_channels_known_at_run_time_equals_eager():
    x, w = rand(2, 5, 6, 2).astype(np.float32), rand(2, 3, 2, 3).astype(np.float32)

    def grads(x, w):
        with tfn.GradientTape() as tape:
            tape.watch([x, w])
            y = tfn.nn.conv2d(x, w, 2, "SAME")
            loss = tfn.reduce_sum(y * y)
        return tape.gradient(loss, [x, w])
    eager = grads(tfn.constant(x), tfn.constant(w))
    f = tfn.function(grads, input_signature=[tfn.TensorSpec([None, 5, 6, None], tfn.float32),
                                             tfn.TensorSpec([2, 3, None, 3], tfn.float32)])
    for want, got in zip(eager, f(tfn.constant(x), tfn.constant(w))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
