"""Every op of the table has a lowering, a public function exported at TF's names and a sample run eagerly,
compiled and by its kernel; registries take OpDefs only; every tfn pass is found by its name."""
import subprocess
import sys

import numpy as np
import pytest
from opcheck import assert_close

import tfn
from tfn.core import api, dispatch
from tfn.core.api import EXPORTS, OP_API
from tfn.dialects import ops, optable
from tfn.dialects.optable import OPS
from tfn.ops import collective_ops
from tfn.passes import registry, tfn_to_linalg  # noqa: F401  (tfn_to_linalg registers every pattern)
from tfn.passes.lowering import callbacks, runtime_errors
from tfn.passes.lowering.common import PATTERNS, lowering
from tfn.passes.pipelines import PIPELINES

# op name -> why it has no public function (ops that only passes or the frontend's internals emit)
INTERNAL = {"max_pool2d_grad": "max_pool2d's gradient rule emits it (TF's is tf.raw_ops.MaxPoolGrad, not in tfn)",
            "bitwise_xor": "TF's tf.bitwise namespace is not in tfn yet (tfn.random.bitwise_xor is its function)",
            "philox4x32": "tfn.random's generator calls it (TF's generators are stateful ops of another design)",
            "check": "the run-time shape checks of tfn.reshape and tfn.broadcast_to emit it (TF's tf.debugging.Assert "
                     "takes tensors to print, not a message with the values put in)",
            **{name: "TF has no public function: tfn.distribute's strategy and replica context call it"
               for name in ("all_reduce", "broadcast", "all_gather")}}
COLLECTIVES = ("all_reduce", "broadcast", "all_gather")  # need MPI (the distribute extra); in one process: identity

RNG = np.random.default_rng(7)
F = RNG.random((2, 3)).astype(np.float32) + 0.5
G = RNG.random((3,)).astype(np.float32) + 0.5
B = F > 1.0
I = np.array([[3, -1, 2], [0, 4, -2]], np.int32)
IDX = np.array([2, 0], np.int32)
P = np.round(RNG.random((2, 5, 5, 2)) * 3).astype(np.float32)  # pooling input with ties (the first maximum wins)
POOL = {"ksize": (3, 3), "strides": (2, 2), "same": True}  # overlapping windows, padded

# op -> (a function of tensors that applies the op, its numpy arguments)
SAMPLES = {
    "constant": (lambda x: x + tfn.constant([1.0, 2.0, 3.0]), [F]),
    "identity": (tfn.identity, [F]),
    "abs": (tfn.abs, [I]), "negative": (tfn.negative, [F]), "sign": (tfn.sign, [I]),
    "square": (tfn.square, [F]), "sqrt": (tfn.sqrt, [F]), "rsqrt": (tfn.math.rsqrt, [F]),
    "exp": (tfn.exp, [F]), "log": (tfn.math.log, [F]), "tanh": (tfn.tanh, [F]),
    "sigmoid": (tfn.sigmoid, [F]), "sin": (tfn.sin, [F]), "cos": (tfn.cos, [F]),
    "atan": (tfn.math.atan, [F - 1]), "asin": (tfn.math.asin, [F - 1]), "acos": (tfn.math.acos, [F - 1]),
    "tan": (tfn.math.tan, [F]), "sinh": (tfn.math.sinh, [F - 1]), "cosh": (tfn.math.cosh, [F - 1]),
    "asinh": (tfn.math.asinh, [F - 1]), "acosh": (tfn.math.acosh, [F + 0.6]), "atanh": (tfn.math.atanh, [F - 1]),
    "erfc": (tfn.math.erfc, [F - 1]), "atan2": (tfn.math.atan2, [F - 1, G - 1]),
    "log1p": (tfn.math.log1p, [F - 1]), "expm1": (tfn.math.expm1, [F - 1]), "erf": (tfn.math.erf, [F - 1]),
    "softplus": (tfn.nn.softplus, [F * 4 - 4]),
    "logical_not": (tfn.logical_not, [B]),
    "add": (tfn.add, [F, G]), "subtract": (tfn.subtract, [F, G]), "multiply": (tfn.multiply, [F, G]),
    "divide": (tfn.divide, [F, G]), "floordiv": (tfn.math.floordiv, [I, np.int32(2)]),
    "floormod": (tfn.math.floormod, [I, np.int32(3)]), "pow": (tfn.pow, [F, G]),
    "maximum": (tfn.maximum, [F, G]), "minimum": (tfn.minimum, [F, G]),
    "equal": (tfn.equal, [I, I.T[:, :1].T]), "not_equal": (tfn.not_equal, [F, G]),
    "less": (tfn.less, [F, G]), "less_equal": (tfn.less_equal, [F, G]),
    "greater": (tfn.greater, [F, G]), "greater_equal": (tfn.greater_equal, [F, G]),
    "logical_and": (tfn.logical_and, [B, B[::-1]]), "logical_or": (tfn.logical_or, [B, B[::-1]]),
    "select": (tfn.where, [B, F, G]), "cast": (lambda x: tfn.cast(x, tfn.int32), [F * 3]),
    "matmul": (tfn.matmul, [F, F.T]),
    "conv2d": (lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME"), [F.reshape(1, 2, 3, 1), F.reshape(3, 2, 1, 1)]),
    "depthwise_conv2d": (lambda x, w: tfn.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
                         [F.reshape(1, 3, 2, 1), F.reshape(2, 1, 1, 3)]),
    "reduce_sum": (lambda x: tfn.reduce_sum(x, axis=1), [F]),
    "reduce_mean": (lambda x: tfn.reduce_mean(x, axis=0, keepdims=True), [F]),
    "reduce_max": (tfn.reduce_max, [F]), "reduce_min": (lambda x: tfn.reduce_min(x, 0), [I]),
    "reduce_prod": (lambda x: tfn.reduce_prod(x, 1), [F]),
    "reduce_any": (lambda x: tfn.reduce_any(x, 1), [B]), "reduce_all": (tfn.reduce_all, [B]),
    "argmax": (lambda x: tfn.math.argmax(x, 1), [F]), "argmin": (lambda x: tfn.math.argmin(x, 0), [F]),
    "transpose": (tfn.transpose, [F]), "reshape": (lambda x: tfn.reshape(x, [3, -1]), [F]),
    "expand_dims": (lambda x: tfn.expand_dims(x, 1), [F]),
    "squeeze": (lambda x: tfn.squeeze(tfn.expand_dims(x, 0)), [F]),
    "broadcast_to": (lambda x: tfn.broadcast_to(x, [4, 3]), [G]),
    "tile": (lambda x: tfn.tile(x, [2, 3]), [F]),
    "concat": (lambda x, y: tfn.concat([x, y], 0), [F, F]), "stack": (lambda x: tfn.stack([x, x], 1), [G]),
    "unstack": (lambda x: tfn.unstack(x)[1], [F]),
    "gather": (lambda x, i: tfn.gather(x, i, axis=1), [F, IDX]),
    "strided_slice": (lambda x: x[1, ::-2], [F]),
    "fill": (lambda x: x + tfn.fill([2, 3], 2.0), [F]),
    "fill_like": (tfn.ones_like, [F]),
    "range": (lambda n: tfn.range(n), [np.int32(5)]),
    "shape": (lambda x: tfn.shape(x, out_type=tfn.int64), [F]),
    "one_hot": (lambda i: tfn.one_hot(i, 4), [IDX]),
    "eye": (lambda x: x + tfn.eye(2, 3), [F]),
    "pad": (lambda x: tfn.pad(x, [[1, 0], [2, 1]], constant_values=-1.0), [F]),
    "print": (lambda x: (tfn.print("sample", x), tfn.identity(x))[1], [F]),
    "tensor_scatter_update": (tfn.tensor_scatter_nd_update, [F, IDX[:, None] // 2, F[::-1] * 2.0]),
    "gather_nd": (tfn.gather_nd, [F, np.array([[1, 2], [0, 0]], np.int32)]),
    "check_numerics": (lambda x: tfn.debugging.check_numerics(x, "sample"), [F]),
    "ensure_shape": (lambda x: tfn.ensure_shape(x, [2, None]), [F]),
    "tensor_scatter_add": (tfn.tensor_scatter_nd_add, [F, np.array([[1], [1]], np.int32), F[::-1] * 2.0]),
    "max_pool2d": (lambda x: tfn.nn.max_pool2d(x, 3, 2, "SAME"), [P]),
    "max_pool2d_grad": (lambda x, g: dispatch.apply(ops.max_pool2d_grad, [x, g], POOL),
                        [P, RNG.random((2, 3, 3, 2)).astype(np.float32)]),
    "check": (lambda x, n: dispatch.apply(ops.check, [tfn.identity(x), tfn.convert_to_tensor(n) < 5,
                                                      tfn.cast(n, tfn.int64)], {"message": "n = {0} is not below 5"}),
              [F, np.int32(3)]),
    "bitwise_xor": (lambda x, y: tfn.random.bitwise_xor(x, y), [I.astype(np.int64) * 977, np.int64(0x9E3779B9)]),
    "philox4x32": (lambda c, k: tfn.random.philox4x32(c, np.int64(1), k, np.int64(2), 7),
                   [np.int64(2**40 + 3), np.int64(87654321)]),
    "argsort": (lambda x: tfn.argsort(x, axis=0, direction="DESCENDING"), [np.concatenate([F, F])]),
    "all_reduce": (lambda x: collective_ops.all_reduce(x, "sum"), [F]),
    "broadcast": (lambda x: collective_ops.broadcast(x, 0), [I]),
    "all_gather": (lambda x: collective_ops.all_gather(x), [F]),
}


def test_every_op_has_a_lowering_a_public_function_and_a_sample():
    missing = {name: [what for what, ok in (("lowering", op in PATTERNS),
                                            ("public function", op in OP_API or INTERNAL.get(name)),
                                            ("TF's public name (tf_api)", op.tf_api or INTERNAL.get(name)),
                                            ("sample", name in SAMPLES)) if not ok]
               for name, op in OPS.items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"ops missing pieces: {missing}"


def _resolve(path):
    obj = tfn
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", sorted(EXPORTS))
def test_every_export_resolves_on_tfn(path):
    assert _resolve(path) is EXPORTS[path]


@pytest.mark.parametrize("name,path", [(n, p) for n, op in OPS.items() for p in op.tf_api])
def test_every_documented_tf_name_works(name, path):
    """tf.<path> of each op exists in tfn: its public function or another exported one (tf.ones_like)."""
    try:
        found = _resolve(path)
    except AttributeError:
        pytest.fail(f"tfn.{path} (TF's public name of tfn.{name}) does not exist")
    if path.startswith("Tensor."):
        assert callable(found)
        return
    assert found is OP_API[OPS[name]] or EXPORTS.get(path) is found, f"tfn.{path} is not a registered export"


def test_every_op_is_an_attribute_of_dialects_ops():
    assert all(getattr(ops, name) is op for name, op in OPS.items())
    with pytest.raises(AttributeError):
        ops.addd  # noqa: B018  (a typo in a registration fails when its module is imported)


def test_opdefs_key_dicts_by_identity():
    a = ops.add
    twin = optable.OpDef(a.name, a.operands, a.infer, a.kernel, a.attrs, a.results, a.tf_name, a.summary,
                         a.differentiable, a.tf_api)  # equal fields, another op object
    assert {ops.add: 1}[ops.add] == 1 and twin != ops.add and hash(ops.add) == object.__hash__(ops.add)
    assert twin.full_name == a.full_name == "tfn.add"


def test_opdefs_are_immutable():
    with pytest.raises(AttributeError, match="immutable"):
        ops.add.name = "sub"
    with pytest.raises(AttributeError, match="immutable"):
        del ops.add.infer
    assert ops.add.name == "add"


@pytest.mark.parametrize("register", [
    lambda: lowering("add"),
    lambda: callbacks.string_lowering("add"),
    lambda: runtime_errors.may_fail("gather", lambda details, op: ""),
    lambda: api.op_api("add"),
])
def test_registering_a_name_instead_of_an_opdef_fails(register):
    with pytest.raises(TypeError, match="OpDef"):
        register()


def test_bad_export_paths_and_duplicates_fail():
    with pytest.raises(ValueError, match="bad export path"):
        api.export("mth.add")
    with pytest.raises(ValueError, match="two public functions exported as tfn.add"):
        api.export("add")(lambda x: x)
    with pytest.raises(ValueError, match="two public functions for tfn.add"):
        api.op_api(ops.add)(lambda x: x)


def test_every_pass_is_found_by_its_file_name():
    passes = registry.all_passes()
    assert set(passes) == set(registry.pass_names()) and "tfn-to-linalg" in passes
    assert all(p.name == name for name, p in passes.items())
    assert registry.get_pass("canonicalize") is None and not set(passes) & set(PIPELINES)


def test_passes_are_imported_on_first_use():
    code = ("import sys; from tfn.passes import registry; registry.get_pass('tfn-verify'); "
            "print(sorted(m for m in sys.modules if m.startswith('tfn.passes.tfn_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tfn.passes.tfn_verify']"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_eager_equals_compiled_equals_kernel(name):
    if name in COLLECTIVES:
        pytest.importorskip("mpi4py", reason='collective ops need the distribute extra: pip install ".[distribute]"')
    fn, args = SAMPLES[name]
    tensors = [tfn.constant(a) for a in args]
    eager = fn(*tensors)
    f = tfn.function(fn)
    compiled = f(*tensors)
    assert f"tfn.{name}" in f.experimental_get_compiler_ir(*tensors)("tfn"), f"sample does not use tfn.{name}"
    assert eager.dtype == compiled.dtype and eager.shape == compiled.shape
    assert_close(compiled.numpy(), eager.numpy())
