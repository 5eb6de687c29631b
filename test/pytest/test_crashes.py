"""No signal from user input, and every valid program compiles (issue 13): sizes that overflow int64, allocations
larger than the machine, Python ints that do not fit their dtype, shapes the kernel schedules do not fit."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfn
from tfn.dialects.errors import InvalidArgumentError, ResourceExhaustedError

# Each reproducer runs in a child process: an abort or a segfault fails the test instead of killing pytest.
_REPRODUCERS = textwrap.dedent("""
    import tfn

    def check(name, thunk, want):
        try:
            thunk()
        except Exception as e:
            got = type(e).__name__
            print(name, got if got == want else f"{got}: {e}", flush=True)
            return
        print(name, "no error", flush=True)

    x = tfn.ones([1])
    cases = {
        "zeros_overflow": (lambda: tfn.zeros([2 ** 62, 4]), "InvalidArgumentError"),
        "reshape_overflow": (lambda: tfn.reshape(tfn.ones([4]), [2 ** 32, 2 ** 32]), "InvalidArgumentError"),
        "one_hot_overflow": (lambda: tfn.one_hot(tfn.constant([1, 2]), 2 ** 62), "InvalidArgumentError"),
        "broadcast_overflow": (lambda: tfn.broadcast_to(x, [2 ** 40, 2 ** 30]), "InvalidArgumentError"),
        "zeros_huge": (lambda: tfn.zeros([2 ** 40]), "ResourceExhaustedError"),
        "one_hot_huge": (lambda: tfn.one_hot(tfn.constant([1, 2]), 2 ** 40), "ResourceExhaustedError"),
        "broadcast_huge": (lambda: tfn.broadcast_to(x, [2 ** 40, 2 ** 20]), "ResourceExhaustedError"),
    }
    for name, (thunk, want) in cases.items():
        check("eager_" + name, thunk, want)
        check("compiled_" + name, lambda: tfn.function(lambda y: thunk())(x), want)
    huge_range = tfn.function(lambda n: tfn.range(n))
    check("compiled_range_huge", lambda: huge_range(tfn.constant(2 ** 40, tfn.int64)), "ResourceExhaustedError")
    check("compiled_range_overflow", lambda: huge_range(tfn.constant(2 ** 62, tfn.int64)), "ResourceExhaustedError")
    # an allocation sized at run time by two dynamic dims: 2**20 x 2**20 floats (4 TiB), or an int64 overflow
    outer = tfn.function(lambda a, b: tfn.exp(a[:, None] * b[None, :]) + 1.0,
                         input_signature=[tfn.TensorSpec([None], tfn.float32)] * 2)
    check("compiled_outer_huge", lambda: outer(tfn.ones([2 ** 20]), tfn.ones([2 ** 20])), "ResourceExhaustedError")
    outer64 = tfn.function(lambda a, b: a[:, None, None] * b[None, :, None] * b[None, None, :],
                           input_signature=[tfn.TensorSpec([None], tfn.int64)] * 2)
    check("compiled_outer_overflow", lambda: outer64(tfn.ones([2 ** 22], tfn.int64), tfn.ones([2 ** 21], tfn.int64)),
          "ResourceExhaustedError")
    check("compiled_zeros_run_time_shape", lambda: tfn.function(tfn.zeros)(tfn.constant([2 ** 40, 2 ** 20])),
          "ResourceExhaustedError")
    matmul = tfn.function(tfn.matmul, input_signature=[tfn.TensorSpec([None, None], tfn.float32)] * 2)
    check("compiled_matmul_huge", lambda: matmul(tfn.ones([2 ** 20, 1]), tfn.ones([1, 2 ** 20])),
          "ResourceExhaustedError")
    print("outer after errors", outer(tfn.ones([2]), tfn.ones([1])).numpy().tolist())
    print("range after errors", huge_range(tfn.constant(3, tfn.int64)).numpy().tolist())
""")


def test_reproducers_raise_tf_errors_without_a_signal():
    done = subprocess.run([sys.executable, "-c", _REPRODUCERS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "range after errors [0, 1, 2]"
    assert lines[-2] == f"outer after errors {[[float(np.float32(np.e) + 1)]] * 2}"
    for line in lines[:-2]:
        name, got = line.split(" ", 1)
        assert got in ("InvalidArgumentError", "ResourceExhaustedError"), line


def test_overflow_names_the_multiplication():
    with pytest.raises(InvalidArgumentError, match="Encountered overflow when multiplying 4611686018427387904 with 4"):
        tfn.zeros([2 ** 62, 4])


def test_values_past_int64_raise_tf_errors():
    with pytest.raises(OverflowError, match="Python integer 1180591620717411303424 out of bounds for int64"):
        tfn.constant(2 ** 70)
    with pytest.raises(InvalidArgumentError, match="attribute 'strides' value 9223372036854775808 does not fit"):
        tfn.nn.conv2d(tfn.ones([1, 4, 4, 1]), tfn.ones([1, 1, 1, 1]), 2 ** 63, "SAME")
    with pytest.raises(InvalidArgumentError, match="Encountered overflow when multiplying 1 with 1000000015047"):
        tfn.range(0.0, 1e30, 1.0)
    with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[1099511627776\]"):
        tfn.range(0, 2 ** 40, 1, dtype=tfn.int64)


def test_huge_run_time_range_names_the_op_and_line():
    f = tfn.function(lambda n: tfn.range(n))
    with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[1099511627776\]"
                                                     r"(.|\n)*node Range}} defined at .*test_crashes.py"):
        f(tfn.constant(2 ** 40, tfn.int64))


def test_huge_run_time_allocation_names_its_shape_op_and_line():
    f = tfn.function(lambda a, b: a[:, None] * b[None, :], input_signature=[tfn.TensorSpec([None], tfn.float32)] * 2)
    with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[1048576,2097152\] and "
                                                     r"type float32(.|\n)*defined at .*test_crashes.py"):
        f(tfn.ones([2 ** 20]), tfn.ones([2 ** 21]))
    np.testing.assert_array_equal(f(tfn.ones([2]), tfn.ones([3])).numpy(), np.ones([2, 3]))


def test_tfn_opt_rejects_oversized_types(tmp_path):
    src = tmp_path / "big.mlir"
    src.write_text("func.func @f() -> tensor<4611686018427387904x4xf32> {\n"
                   "  %0 = tensor.empty() : tensor<4611686018427387904x4xf32>\n"
                   "  return %0 : tensor<4611686018427387904x4xf32>\n}\n")
    for pipeline in ([], ["-p", "builtin.module(tfn-pipeline)"],
                     ["-p", "builtin.module(one-shot-bufferize{bufferize-function-boundaries})"]):
        done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src), *pipeline], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "big.mlir:2:8: error: type tensor<4611686018427387904x4xf32> has more elements or bytes than int64" \
            in done.stderr


# Python ints that do not fit the dtype: OverflowError, as in a tf.function -----------------------------------

def test_python_int_out_of_dtype_range_raises():
    x = tfn.constant([1, 2, 3])
    with pytest.raises(OverflowError, match="Python integer 1099511627776 out of bounds for int32"):
        x + 2 ** 40
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint8"):
        tfn.constant(-1, tfn.uint8)
    with pytest.raises(OverflowError, match=r"2147483648 out of bounds for int32(.|\n)*'<lambda>' at .*test_cr"):
        tfn.function(lambda y: y + 2 ** 31)(x)
    assert tfn.constant(255, tfn.uint8).numpy() == 255
    assert (x + (2 ** 31 - 4)).numpy().tolist() == [2 ** 31 - 3, 2 ** 31 - 2, 2 ** 31 - 1]
    assert tfn.constant(np.array([300]), tfn.uint8).numpy().tolist() == [44]  # NumPy arrays are cast as TF casts


# integer pow and division by a literal zero --------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_pow_compiles(dtype):
    x = np.array([0, 1, 2, 3, 7, 100, 5], dtype)
    y = np.array([0, 5, 10, 3, 11, 3, 1], dtype)
    if dtype != "uint8":
        x[4] = -7
    f = tfn.function(lambda a, b: (a ** b, a ** 2))
    power, square = f(tfn.constant(x), tfn.constant(y))
    np.testing.assert_array_equal(power.numpy(), x ** y)
    np.testing.assert_array_equal(square.numpy(), x ** 2)


def test_integer_pow_negative_exponent_raises_as_eager():
    f = tfn.function(lambda a, b: a ** b)
    with pytest.raises(InvalidArgumentError, match="Integers to negative integer powers are not allowed"):
        f(tfn.constant([2]), tfn.constant([-1]))
    with pytest.raises(InvalidArgumentError, match="Integers to negative integer powers are not allowed"):
        tfn.constant([2]) ** tfn.constant([-1])


def test_floordiv_by_literal_zero_raises():
    f = tfn.function(lambda a: a // 0)
    with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
        f(tfn.constant([1, 2, 3]))


# every shape compiles: schedules fall back instead of failing ---------------------------------------------

def _rand(*shape):
    return np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape).astype(np.float32)


def test_conv2d_rgb_image_compiles():
    x, w = _rand(1, 224, 224, 3), _rand(3, 3, 3, 8)
    got = tfn.function(lambda a, b: tfn.nn.conv2d(a, b, 1, "SAME"))(tfn.constant(x), tfn.constant(w)).numpy()
    np.testing.assert_allclose(got, tfn.nn.conv2d(tfn.constant(x), tfn.constant(w), 1, "SAME").numpy(),
                               rtol=1e-4, atol=1e-4)
    ones = tfn.function(lambda a: tfn.nn.conv2d(a, tfn.ones([3, 3, 3, 8]), 1, "SAME"))(tfn.ones([1, 224, 224, 3]))
    assert ones.numpy()[0, 0, 0, 0] == 12 and ones.numpy()[0, 5, 5, 0] == 27


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_matmul_small_inner_dimension_at_large_sizes(k):
    a, b = _rand(600, k), _rand(k, 700)
    got = tfn.function(tfn.matmul)(tfn.constant(a), tfn.constant(b)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


_MATMUL_SHAPES = [(1, 1, 1), (0, 5, 3), (4, 0, 3), (4, 5, 0), (1, 97, 1), (97, 1, 89), (3, 7, 5), (67, 71, 73),
                  (128, 1, 128), (65, 3, 130)]


@pytest.mark.parametrize("m,k,n", _MATMUL_SHAPES)
def test_matmul_and_batch_matmul_shapes(m, k, n):
    a, b = _rand(m, k), _rand(k, n)
    f = tfn.function(tfn.matmul)
    np.testing.assert_allclose(f(tfn.constant(a), tfn.constant(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    ba, bb = _rand(2, m, k), _rand(2, k, n)
    np.testing.assert_allclose(f(tfn.constant(ba), tfn.constant(bb)).numpy(), ba @ bb, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n,h,w,c,f", [(1, 1, 1, 1, 1), (0, 5, 5, 3, 4), (1, 13, 11, 1, 7), (2, 31, 29, 2, 33),
                                       (1, 40, 40, 4, 64), (1, 9, 9, 5, 0)])
def test_conv2d_shapes(n, h, w, c, f):
    x, k = _rand(n, h, w, c), _rand(3, 3, c, f)
    conv = tfn.function(lambda a, b: tfn.nn.conv2d(a, b, 1, "SAME"))
    want = tfn.nn.conv2d(tfn.constant(x), tfn.constant(k), 1, "SAME").numpy()
    np.testing.assert_allclose(conv(tfn.constant(x), tfn.constant(k)).numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(0,), (1,), (97,), (0, 5), (5, 0), (1, 1), (31, 67), (1, 4099)])
def test_reduction_shapes(shape):
    x = _rand(*shape)

    @tfn.function
    def f(a):
        cols = tfn.reduce_max(a, axis=0) if shape[0] else tfn.reduce_sum(a, axis=0)  # NumPy has no max of nothing
        return tfn.reduce_sum(a), tfn.reduce_sum(a, axis=-1), cols

    total, rows, cols = f(tfn.constant(x))
    np.testing.assert_allclose(total.numpy(), x.sum(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(rows.numpy(), x.sum(axis=-1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cols.numpy(), x.max(axis=0) if shape[0] else x.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_conv2d_huge_filter_compiles_on_the_generic_path():
    x, k = _rand(1, 64, 64, 4), _rand(11, 11, 4, 8)
    conv = tfn.function(lambda a, b: tfn.nn.conv2d(a, b, 1, "SAME"))
    want = tfn.nn.conv2d(tfn.constant(x), tfn.constant(k), 1, "SAME").numpy()
    np.testing.assert_allclose(conv(tfn.constant(x), tfn.constant(k)).numpy(), want, rtol=1e-3, atol=1e-3)


def test_tfn_opt_rejects_a_dense_array_of_index(tmp_path):
    # MLIR's parser aborts on it (an assertion in Type::getIntOrFloatBitWidth); tfn-opt must report it instead.
    src = tmp_path / "index_array.mlir"
    src.write_text('func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n'
                   '  %0 = "tfn.identity"(%a) {note = "array<index: 2> in a string is text", axis = array<\n'
                   '    index: 1>} : (tensor<2xf32>) -> tensor<2xf32>\n'
                   '  return %0 : tensor<2xf32>\n}\n')
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert "index_array.mlir:2:81: error: a dense array cannot hold 'index' elements" in done.stderr
    text = src.read_text().replace("index: 1", "i64: 1")
    src.write_text(text)
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("attr, ok", [("permutation = func.func 0]", False), ("permutation = [1, x]", False),
                                       ("permutation = 5", False), ("permutation = [1, 0]", True)])
def test_tfn_opt_rejects_a_malformed_linalg_permutation(tmp_path, attr, ok):
    # linalg's custom parser stores the null attribute of a failed parse (an assertion in NamedAttrList::set).
    src = tmp_path / "permutation.mlir"
    src.write_text('func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n'
                   '  %e = tensor.empty() : tensor<3x2xf32>\n'
                   f'  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) {attr}\n'
                   '  return %t : tensor<3x2xf32>\n}\n')
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == (0 if ok else 1), done.stderr
    if not ok:
        assert "permutation.mlir:3:78: error: expected a list of integers in brackets" in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["attribute", "regions", "types"])
def test_tfn_opt_rejects_nesting_that_would_overflow_the_parser_stack(tmp_path, kind):
    # MLIR's parser (and verifier, printer, passes) recurse per level: ~10,000 nested brackets of an attribute,
    # ~4,000 nested regions or ~6,000 nested types segfaulted tfn-opt.
    n = 20000
    if kind == "attribute":
        text = "func.func @f() attributes {a = " + "[" * n + "]" * n + "} {\n  return\n}\n"
    elif kind == "types":
        text = "func.func @f(%a: " + "!llvm.array<2 x " * n + "i8" + ">" * n + ") {\n  return\n}\n"
    else:
        text = "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * n + "}\n" * n + "  return\n}\n"
    src = tmp_path / "deep.mlir"
    src.write_text(text)
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "deep.mlir:" in done.stderr and "nested more than 1000 levels deep" in done.stderr, done.stderr[-2000:]
    shallow = "func.func @f(%c: i1) -> i32 {\n" + "scf.if %c {\n" * 200 + "}\n" * 200 + \
        "  %0 = arith.constant 0 : i32\n  return %0 : i32\n}\n"
    src.write_text(shallow)
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_reductions_over_the_last_axis_with_two_dynamic_kept_dims_compile():
    """tfn-vectorize-reductions expanded the rows' results back to two dynamic dims, which memref.expand_shape cannot
    hold: compiling reduce_max(x, -1) for x of shape [None, None, None] aborted the process (an MLIR assertion)."""
    code = textwrap.dedent("""
        import numpy as np
        import tfn
        x = np.random.default_rng(0).random((3, 5, 70)).astype(np.float32)
        spec = [tfn.TensorSpec([None, None, None], tfn.float32)]
        for name, fn, ref in (("max", lambda v: tfn.reduce_max(v, -1), x.max(-1)),
                              ("sum", lambda v: tfn.reduce_sum(v * v, -1), (x * x).sum(-1)),
                              ("logsumexp", lambda v: tfn.reduce_logsumexp(v, -1), np.log(np.exp(x).sum(-1)))):
            got = tfn.function(fn, input_signature=spec)(tfn.constant(x)).numpy()
            print(name, np.allclose(got, ref, rtol=1e-5))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["max", "True", "sum", "True", "logsumexp", "True"]


def test_windows_whose_padded_input_overflows_raise_tf_errors(tmp_path):
    """A SAME window (a dilated filter, a pooling window) far larger than the input: its padded input's type
    overflowed int64 and MLIR's assertion aborted the process (compiled), NumPy raised ValueError (eagerly), and
    max_pool2d_grad's tap loops never ended (tfn-opt hung)."""
    code = textwrap.dedent("""
        import tfn
        x, w, wd = tfn.ones([2, 5, 6, 3]), tfn.ones([3, 2, 3, 4]), tfn.ones([3, 3, 3, 1])
        cases = {
            "conv": lambda: tfn.nn.conv2d(x, w, 1, "SAME", dilations=[1, 2 ** 62]),
            "depthwise": lambda: tfn.nn.depthwise_conv2d(x, wd, [1, 1, 1, 1], "SAME", dilations=[2 ** 62, 1]),
            "max_pool": lambda: tfn.nn.max_pool2d(x, [3, 2 ** 62], 2, "SAME"),
            "avg_pool": lambda: tfn.nn.avg_pool2d(x, [3, 2 ** 62], 2, "SAME"),
            "max_pool_oom": lambda: tfn.nn.max_pool2d(x, [3, 2 ** 33], 2, "SAME"),
        }
        for name, run in cases.items():
            for mode, f in (("eager", run), ("compiled", tfn.function(run))):
                try:
                    f()
                    print(name, mode, "no error")
                except Exception as e:
                    print(name, mode, type(e).__name__)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for line in done.stdout.splitlines():
        name, mode, got = line.split(" ", 2)
        assert got == ("ResourceExhaustedError" if name.endswith("oom") else "InvalidArgumentError"), line
    assert len(done.stdout.splitlines()) == 10
    src = tmp_path / "grad.mlir"
    src.write_text('func.func @f(%x: tensor<1x5x5x2xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x5x5x2xf32> {\n'
                   '  %0 = "tfn.max_pool2d_grad"(%x, %g) {ksize = array<i64: 3, 4611686018427387904>, '
                   'strides = array<i64: 2, 2>, same = true} : (tensor<1x5x5x2xf32>, tensor<1x3x3x2xf32>) -> '
                   'tensor<1x5x5x2xf32>\n  return %0 : tensor<1x5x5x2xf32>\n}\n')
    done = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", str(src), "-p", "builtin.module(tfn-pipeline)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Encountered overflow" in done.stderr, done.stderr[-2000:]


def test_a_pooling_window_far_wider_than_the_input_reads_only_the_taps_that_touch_it():
    """Pooling unrolled every tap of the window: a SAME max_pool2d of ksize [3, 65536] on a 5x7 input made a
    linalg.generic of 196,608 results for its gradient (the compile never ended), avg_pool2d concatenated 65,536
    slices of padding. Taps that read only padding are left out; results are the windows' max / in-bounds mean."""
    code = textwrap.dedent("""
        import numpy as np
        import tfn
        x = np.random.default_rng(1).random([1, 5, 7, 2]).astype(np.float32)
        for pool, ref in ((tfn.nn.max_pool2d, x.max(2, keepdims=True)), (tfn.nn.avg_pool2d, x.mean(2, keepdims=True))):
            @tfn.function
            def f(v):
                with tfn.GradientTape() as tape:
                    tape.watch(v)
                    y = pool(v, [1, 65536], [1, 2], "SAME")
                    total = tfn.reduce_sum(y)
                return y, tape.gradient(total, v)
            y, g = f(tfn.constant(x))
            print(pool.__name__, y.shape, np.allclose(y.numpy(), np.repeat(ref, 4, 2)), round(float(tfn.reduce_sum(g))))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["max_pool2d (1, 5, 4, 2) True 40", "avg_pool2d (1, 5, 4, 2) True 40"]


def test_malloc_returning_null_raises_resource_exhausted():
    """Under an address-space limit, a buffer smaller than the machine's memory still fails to allocate: malloc
    returns null, the function returns at once and the call raises; the process and the function live on."""
    program = textwrap.dedent("""
        import resource, tfn
        spec = tfn.TensorSpec([None], tfn.float32)
        f = tfn.function(lambda a, b: a[:, None] * b[None, :], input_signature=[spec, spec])
        print(f(tfn.ones([2]), tfn.ones([3])).shape)
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            f(tfn.ones([2 ** 16]), tfn.ones([2 ** 16]))  # 16 GiB
        except tfn.errors.ResourceExhaustedError as e:
            print(str(e).splitlines()[0])
            print("names the line:", "defined at <string>:4" in str(e))
        print(f(tfn.ones([2]), tfn.ones([2])).numpy().tolist())
    """)
    for env in ({}, {"TFN_FASTCALL": "0"}):
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                              env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["(2, 3)", "OOM when allocating 17179869248 bytes on /device:CPU:0 by "
                                            "allocator cpu", "names the line: True", "[[1.0, 1.0], [1.0, 1.0]]"]


_FAILING_MALLOC = """
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>
/* malloc that returns null for blocks of 64 KiB or more asked on a thread other than the main one, once armed */
static volatile int armed;
static volatile long failed;
void tfn_test_arm(int on) { armed = on; }
long tfn_test_failed(void) { return failed; }
void *malloc(size_t n) {
  static void *(*real)(size_t);
  if (!real) real = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  if (armed && n >= (64 << 10) && syscall(SYS_gettid) != getpid()) { __sync_fetch_and_add(&failed, 1); return 0; }
  return real(n);
}
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a worker thread: a host of 2 cores or more")
def test_null_malloc_on_a_worker_thread_reaches_the_caller(tmp_path):
    """A packed panel of the parallel matmul is allocated by each task, on whichever thread takes it (the caller or
    one of the async runtime's worker threads): a null malloc on a worker thread is reported to the calling thread
    (ResourceExhaustedError naming MatMul), the task stops without writing through it, and the next call is right
    (tfn-guard-worker-allocs). A call whose tasks the caller took all (its worker started late) fails no malloc
    and must be right; calls go on until three had a worker's malloc fail."""
    from tfn.runtime import toolchain

    shim = tmp_path / "failing_malloc.so"
    (tmp_path / "failing_malloc.c").write_text(_FAILING_MALLOC)
    subprocess.run([toolchain.linker(), "-shared", "-fPIC", "-O1", "-o", str(shim), str(tmp_path / "failing_malloc.c"),
                    "-ldl"], check=True, capture_output=True, text=True)
    program = textwrap.dedent("""
        import ctypes, numpy as np, tfn
        shim = ctypes.CDLL(None)
        f = tfn.function(lambda x, y: tfn.matmul(x, y))
        a = tfn.constant(np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32))
        want = f(a, a).numpy()
        shim.tfn_test_arm(1)
        reported = 0
        for _ in range(500):
            before = shim.tfn_test_failed()
            try:
                outcome = "right" if np.allclose(f(a, a).numpy(), want) else "wrong"
            except tfn.errors.ResourceExhaustedError as e:
                named = "MatMulV2}} defined at <string>:4" in str(e)
                outcome = str(e).splitlines()[0].split(" on ")[0] + " | names the line: " + str(named)
            if shim.tfn_test_failed() > before:
                print(outcome)
                reported += 1
            elif outcome != "right":
                print("no worker malloc failed, yet:", outcome)
            if reported == 3:
                break
        shim.tfn_test_arm(0)
        print("worker mallocs failed:", reported == 3)
        print("right after:", np.allclose(f(a, a).numpy(), want))
    """)
    # the buffer cache off: it would give each call's panels from the blocks the calls before freed, asking no malloc
    env = {**os.environ, "LD_PRELOAD": str(shim), "TFN_BUFFER_CACHE_BYTES": "0"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["worker mallocs failed: True", "right after: True"], done.stdout
    assert len(lines) == 5, done.stdout
    assert len(set(lines[:3])) == 1 and lines[0].startswith("OOM when allocating tensor with shape["), done.stdout
    assert lines[0].endswith("| names the line: True"), done.stdout


def test_repeated_null_mallocs_free_what_was_allocated_before():
    """A failed allocation frees the buffers the function allocated before it (here the concat's 8 MiB, which it
    would return): under an address-space limit, twenty failed calls leave the resident memory where it was (it
    grew by 160 MiB when they leaked)."""
    program = textwrap.dedent("""
        import resource, tfn
        def rss():
            return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20
        spec = tfn.TensorSpec([None], tfn.float32)
        @tfn.function(input_signature=[spec, spec])
        def f(a, b):
            t = tfn.concat([a, a], 0)
            return t[:, None] * b[None, :], t
        print(f(tfn.ones([2]), tfn.ones([3]))[0].shape)
        a, b = tfn.ones([2 ** 20]), tfn.ones([2 ** 11])
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
        def fail():
            try:
                f(a, b)  # 16 GiB
            except tfn.errors.ResourceExhaustedError as e:
                return str(e).splitlines()[0]
        print(fail())
        fail()
        before = rss()
        for _ in range(20):
            fail()
        print("grew less than 40 MiB:", rss() - before < 40)
        print(f(tfn.ones([2]), tfn.ones([1]))[1].numpy().tolist())
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["(4, 3)", "OOM when allocating 17179869248 bytes on /device:CPU:0 by "
                                        "allocator cpu", "grew less than 40 MiB: True", "[1.0, 1.0, 1.0, 1.0]"]


def test_oom_names_the_op_whose_result_the_buffer_holds():
    """A fused chain allocates its last result: `a[:, None] * b` too big names the Mul, not the StridedSlice that
    comes first on the line; the run-time shape's buffer of tfn.zeros is its internal Range temporary, named so."""
    spec = tfn.TensorSpec([None], tfn.float32)
    outer = tfn.function(lambda a, b: a[:, None] * b[None, :], input_signature=[spec, spec])
    with pytest.raises(ResourceExhaustedError) as e:
        outer(tfn.ones([2 ** 20]), tfn.ones([2 ** 20]))
    first, node = str(e.value).splitlines()[:2]
    assert first.startswith("OOM when allocating tensor with shape[1048576,1048576] and type float32"), first
    assert "{{node Multiply}} defined at " + __file__ in node, node
    zeros = tfn.function(lambda s: tfn.zeros(s))
    with pytest.raises(ResourceExhaustedError) as e:
        zeros(tfn.constant([2 ** 40, 2 ** 20]))
    first, node = str(e.value).splitlines()[:2]
    assert first.startswith("OOM when allocating tensor with shape[1099511627776] and type int64"), first
    assert "{{node Range}} defined at " + __file__ in node, node


def test_a_folded_failing_op_does_not_shift_the_error_of_a_later_one():
    """tfn-fold-constants folds the reshape of a constant: the gather's error still names the gather and its line."""
    def f(p, i):
        c = tfn.reshape(tfn.constant([1.0, 2.0, 3.0, 4.0]), [2, 2])
        return tfn.gather(p, i) + c[0, 0]  # the line the error names

    line = f.__code__.co_firstlineno + 2
    message = rf"indices\[0\] = 7 is not in \[0, 3\)(.|\n)*GatherV2(.|\n)*:{line}"
    with pytest.raises(InvalidArgumentError, match=message):
        tfn.function(f)(np.ones(3, np.float32), np.array([7], np.int32))


def test_concat_larger_than_memory_raises_before_building_its_pairwise_tree(monkeypatch):
    """The eager chain of binary concats keeps a whole level alive: for a result larger than the machine, the
    levels before the last one each passing the check took all its memory (the OOM killer, not an error)."""
    import tracemalloc

    from tfn.dialects import types
    monkeypatch.setattr(types, "memory_bytes", lambda: 2 ** 26)  # a 64 MiB machine, as the checks see it
    x = tfn.ones([2 ** 22])  # 16 MiB; 16 of them: 256 MiB
    tracemalloc.start()
    try:
        with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[67108864\]"):
            tfn.concat([x] * 16, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 24, peak


def test_huge_linspace_and_random_shapes_raise_tf_errors():
    """linspace's positions were a NumPy arange allocated before any check (a MemoryError); a random shape whose
    element count passes int64 was Python's OverflowError counting the draws."""
    for run in (lambda: tfn.linspace(0.0, 1.0, 2 ** 40), tfn.function(lambda: tfn.linspace(0.0, 1.0, 2 ** 40))):
        with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[1099511627774\]"):
            run()
    for shape in ([2 ** 40, 2 ** 40], tfn.constant([2 ** 40, 2 ** 40], tfn.int64)):
        with pytest.raises(InvalidArgumentError, match="Encountered overflow when multiplying 1099511627776 with "
                                                       "1099511627776"):
            tfn.random.normal(shape)
    np.testing.assert_allclose(tfn.linspace(0.0, 1.0, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))
