"""The GPU kernels (tfn-gpu-tile, tfn-gpu-map, tfn-gpu-device-buffers) run on the CPU by tfn-gpu-emulate and
compared with NumPy, one test per kernel kind, with sizes that are not multiples of the tiles (bounds guards)."""
import numpy as np
import pytest

import tfn
from tfn import runtime
from tfn.dialects.types import TensorType
from tfn.passes import gpu


def _run(fn, arrays, **map_options):
    specs = [tfn.TensorSpec(a.shape, tfn.as_dtype(a.dtype)) for a in arrays]
    concrete = tfn.function(fn).get_concrete_function(*specs)
    graph = concrete.graph
    out = fn(*[tfn.constant(a) for a in arrays])
    in_types = [TensorType(a.shape, tfn.as_dtype(a.dtype)) for a in arrays]
    out_types = [TensorType(tuple(out.shape), out.dtype)]
    executable = runtime.compile(graph.module, runtime.CompileOptions(pipeline=gpu.pipeline_for("emulate",
                                                                                                 **map_options)),
                                 symbol=graph.symbol, in_types=in_types, out_types=out_types)
    return executable(arrays)[0]


RNG = np.random.default_rng(7)
X = RNG.standard_normal((37, 300)).astype(np.float32)
Y = RNG.standard_normal((37, 300)).astype(np.float32)
V = RNG.standard_normal((300,)).astype(np.float32)


def test_elementwise_chain():
    got = _run(lambda x, y: tfn.tanh(x * y) + x - 1.0, [X, Y])
    np.testing.assert_allclose(got, np.tanh(X * Y) + X - 1.0, rtol=1e-5, atol=1e-6)


def test_broadcast_elementwise():
    got = _run(lambda x, v: x * v + 2.0, [X, V])
    np.testing.assert_allclose(got, X * V + 2.0, rtol=1e-6)


def test_row_reduction():
    got = _run(lambda x: tfn.reduce_sum(x, axis=1), [X])
    np.testing.assert_allclose(got, X.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_row_max_reduction():
    got = _run(lambda x: tfn.reduce_max(x, axis=1), [X])
    np.testing.assert_array_equal(got, X.max(axis=1))


def test_full_reduction_two_stages():
    big = RNG.standard_normal((7, 1001)).astype(np.float32)  # 7007 elements: more than one block's work
    got = _run(lambda x: tfn.reduce_sum(x), [big])
    np.testing.assert_allclose(got, big.sum(), rtol=1e-4)


def test_column_reduction():
    got = _run(lambda x: tfn.reduce_sum(x, axis=0), [X])
    np.testing.assert_allclose(got, X.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_matmul():
    a = RNG.standard_normal((37, 50)).astype(np.float32)
    b = RNG.standard_normal((50, 29)).astype(np.float32)
    got = _run(lambda p, q: tfn.matmul(p, q), [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_then_elementwise():
    a = RNG.standard_normal((20, 33)).astype(np.float32)
    b = RNG.standard_normal((33, 17)).astype(np.float32)
    got = _run(lambda p, q: tfn.nn.relu(tfn.matmul(p, q)) * 2.0, [a, b])
    np.testing.assert_allclose(got, np.maximum(a @ b, 0) * 2.0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["row", "matmul"])
def test_emulation_catches_an_off_by_one_bounds_guard(case):
    """guard-slack=-1 makes the guards drop the last element: the comparison with NumPy must fail."""
    if case == "row":
        fn, args, want = (lambda x: tfn.reduce_sum(x, axis=1)), [X], X.sum(axis=1)
    else:
        a = RNG.standard_normal((37, 50)).astype(np.float32)
        b = RNG.standard_normal((50, 29)).astype(np.float32)
        fn, args, want = (lambda p, q: tfn.matmul(p, q)), [a, b], a @ b
    np.testing.assert_allclose(_run(fn, args), want, rtol=1e-4, atol=1e-4)
    wrong = _run(fn, args, guard_slack=-1)
    assert not np.allclose(wrong, want, rtol=1e-4, atol=1e-4)


def _run_specs(fn, arrays, specs, out_type):
    concrete = tfn.function(fn).get_concrete_function(*specs)
    graph = concrete.graph
    executable = runtime.compile(graph.module, runtime.CompileOptions(pipeline=gpu.pipeline_for("emulate")),
                                 symbol=graph.symbol, in_types=[TensorType(tuple(s.shape), s.dtype) for s in specs],
                                 out_types=[out_type])
    return executable(arrays)[0]


def test_dynamic_shapes():
    """Sizes known only at run time: a fixed grid of blocks for elementwise ops, run-time bounds in the kernels."""
    spec = [tfn.TensorSpec([None, None], tfn.float32)]
    got = _run_specs(lambda x: x * 2.0 + 1.0, [X], spec, TensorType((None, None), tfn.float32))
    np.testing.assert_allclose(got, X * 2.0 + 1.0, rtol=1e-6)
    got = _run_specs(lambda x: tfn.reduce_sum(x, axis=1), [X], spec, TensorType((None,), tfn.float32))
    np.testing.assert_allclose(got, X.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_integer_reductions_and_bool_outputs():
    ints = RNG.integers(-1000, 1000, size=(9, 333)).astype(np.int32)
    np.testing.assert_array_equal(_run(lambda x: tfn.reduce_max(x, axis=1), [ints]), ints.max(axis=1))
    np.testing.assert_array_equal(_run(lambda x: tfn.reduce_min(x), [ints]), ints.min())
    np.testing.assert_array_equal(_run(lambda x: x > 0.5, [X]), X > 0.5)


def test_pipeline_for_names_kinds_and_chips():
    assert "gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80 cubin-features=+ptx80" in gpu.pipeline_for("nvvm", chip="sm_80")
    assert "tfn-gpu-emulate{warp-size=32}" in gpu.pipeline_for("emulate")
    assert "tfn-gpu-map{guard-slack=-1}" in gpu.pipeline_for("mapped", guard_slack=-1)
    with pytest.raises(ValueError, match="unknown GPU pipeline kind 'ptx'"):
        gpu.pipeline_for("ptx")
    with pytest.raises(ValueError, match="unknown GPU chip 'sm_70'; tfn generates code for sm_80, sm_90"):
        gpu.pipeline_for("nvvm", chip="sm_70")


def test_an_op_without_a_gpu_kernel_is_a_compile_error_at_the_users_line():
    def scatter(x, u):
        return tfn.tensor_scatter_nd_update(x, [[1], [3]], u)  # the line the error names: a loop over the updates
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    u = RNG.standard_normal((2, 4)).astype(np.float32)
    with pytest.raises(tfn.errors.CompileError, match=r'test_gpu_emulate.py":\d+:\d+: tfn-gpu-tile: '
                       r"scf.for has no GPU kernel"):
        _run(scatter, [x, u])


X3 = RNG.standard_normal((5, 13, 70)).astype(np.float32)


def _softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


PROGRAMS = {  # name: (function, arguments, NumPy reference)
    "softmax": (lambda x: tfn.nn.softmax(x), [X[:, :70]], _softmax),
    "mean_of_middle_axis": (lambda x: tfn.reduce_mean(x, axis=1), [X3], lambda x: x.mean(1)),
    "sum_of_leading_axes": (lambda x: tfn.reduce_sum(x, axis=[0, 1]), [X3], lambda x: x.sum((0, 1))),
    "sum_keepdims": (lambda x: tfn.reduce_sum(x, axis=2, keepdims=True), [X3], lambda x: x.sum(2, keepdims=True)),
    "transpose": (lambda x: tfn.transpose(x, [2, 0, 1]) * 2.0, [X3], lambda x: np.transpose(x, [2, 0, 1]) * 2.0),
    "broadcast_3d": (lambda x, y: x + y, [X3, X3[0]], lambda x, y: x + y),
    "rank_4": (lambda x: x * 3.0 - 1.0, [X3.reshape(5, 13, 7, 10)], lambda x: x * 3.0 - 1.0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_of_several_kernels(name):
    fn, args, reference = PROGRAMS[name]
    np.testing.assert_allclose(_run(fn, args), reference(*args), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("tile,per_thread", [(16, 4), (8, 2), (16, 1)])
def test_matmul_tilings(tile, per_thread):
    """Several blocks in both directions, k not a multiple of the k step, each thread's outputs spread apart."""
    a = RNG.standard_normal((130, 70)).astype(np.float32)
    b = RNG.standard_normal((70, 67)).astype(np.float32)
    got = _run(lambda p, q: tfn.matmul(p, q), [a, b], matmul_tile=tile, matmul_per_thread=per_thread)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


# tfn-gpu-generalize and the 'loop' kernels of tfn-gpu-tile: one thread per output point, reductions looped over
@pytest.mark.parametrize("name, fn, shapes", [
    ("conv2d SAME", lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME"), [(2, 9, 9, 3), (3, 3, 3, 5)]),
    ("conv2d strided SAME", lambda x, w: tfn.nn.conv2d(x, w, 2, "SAME"), [(2, 10, 9, 3), (5, 5, 3, 40)]),
    ("depthwise", lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), [(2, 9, 9, 3), (3, 3, 3, 2)]),
    ("max pool SAME", lambda x: tfn.nn.max_pool2d(x, 3, 2, "SAME"), [(2, 9, 9, 3)]),
    ("average pool SAME", lambda x: tfn.nn.avg_pool2d(x, 2, 2, "SAME"), [(2, 9, 9, 3)]),
    ("argmax as float", lambda x: tfn.cast(tfn.argmax(x, axis=1), tfn.float32), [(37, 300)]),
    ("pad", lambda x: tfn.pad(x, [[1, 2], [0, 3]]) + 1.0, [(37, 30)]),
    ("concat", lambda x, y: tfn.concat([x, y, x], axis=1) * 2.0, [(37, 3), (37, 5)]),
    ("cumsum", lambda x: tfn.math.cumsum(x, axis=1), [(7, 10)]),
    ("batch matmul", lambda a, b: tfn.matmul(a, b), [(3, 5, 7), (3, 7, 4)]),
])
def test_loop_kernels(name, fn, shapes):
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    want = tfn.function(fn)(*arrays).numpy()
    np.testing.assert_allclose(_run(fn, arrays), want, rtol=1e-5, atol=1e-5)
