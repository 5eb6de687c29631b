"""Fuzzing, bounded and reproducible (derandomized, fixed example counts): mutated and random .mlir into tfn-opt under
each pipeline (a diagnostic or output, never a signal, a hang or a traceback); random argument structures, dtypes
and shapes into traced and concrete functions (TF's exception classes or the right result); random small programs
of ops: eager == compiled == NumPy."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfn
from tfn.passes.pipelines import PIPELINES

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Random argument types retrace on purpose: the retracing warning is expected here.
pytestmark = pytest.mark.filterwarnings("ignore:.*triggered tfn.function retracing")
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- tfn-opt ----------------------------------------------------------------------------------------------------


def _seed_functions():
    """Every func.func of the lit tests of the dialect and its passes, comments dropped: the mutation corpus."""
    seeds = []
    for path in sorted((ROOT / "test" / "lit").glob("*/*.mlir")):
        current = None
        for line in path.read_text().split("\n"):
            if line.startswith("func.func"):
                current = [line]
            elif current is not None:
                if not line.lstrip().startswith("//"):
                    current.append(line.split(" // ")[0])
                if line.startswith("}"):
                    seeds.append("\n".join(current))
                    current = None
    return seeds


SEEDS = _seed_functions()
ELEMENT_TYPES = ["f32", "f64", "f16", "bf16", "i1", "i8", "i32", "i64", "ui8", "index", "!tfn.string", "complex<f32>"]
# Huge dimensions too: element counts past int64 and allocations past memory must be diagnosed, not abort.
DIMS = ["0", "1", "2", "3", "4", "7", "16", "?", "2147483648", "4611686018427387904"]
_NUMBER = re.compile(r"(?<=[<x])(\d+|\?)(?=x)")
# Element types of tensors and of dense arrays alike (`array<index: 1>` once aborted MLIR's parser: tfn-opt rejects it
# before parsing, tools/driver.py).
_TYPE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|index)\b")
_OP_NAME = re.compile(r'"tfn\.[a-z_0-9]+"')


def _op_names():
    from tfn.dialects.optable import OPS
    return sorted(f'"{name}"' if name.startswith("tfn.") else f'"tfn.{name}"' for name in OPS)


@st.composite
def _mutant(draw):
    """A seed function with a few mutations: dims, element types, op names, deleted/duplicated lines, truncation."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["dim", "type", "op", "delete", "duplicate", "truncate", "token"]))
        lines = text.split("\n")
        if kind == "dim" and _NUMBER.search(text):
            spots = list(_NUMBER.finditer(text))
            m = spots[draw(st.integers(0, len(spots) - 1))]
            text = text[:m.start()] + draw(st.sampled_from(DIMS)) + text[m.end():]
        elif kind == "type" and _TYPE.search(text):
            spots = list(_TYPE.finditer(text))
            m = spots[draw(st.integers(0, len(spots) - 1))]
            text = text[:m.start()] + draw(st.sampled_from(ELEMENT_TYPES)) + text[m.end():]
        elif kind == "op" and _OP_NAME.search(text):
            spots = list(_OP_NAME.finditer(text))
            m = spots[draw(st.integers(0, len(spots) - 1))]
            text = text[:m.start()] + draw(st.sampled_from(_op_names())) + text[m.end():]
        elif kind == "delete" and len(lines) > 2:
            del lines[draw(st.integers(1, len(lines) - 2))]
            text = "\n".join(lines)
        elif kind == "duplicate" and len(lines) > 2:
            i = draw(st.integers(1, len(lines) - 2))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        elif kind == "token":
            tokens = text.split(" ")
            i, j = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
            tokens[i] = tokens[j]
            text = " ".join(tokens)
    return text


def _random_function(draw_ops, draw_type):
    """A function applying random tfn ops to random operands (mostly ill-typed: the verifier must say so)."""
    lines, values = [], ["%a", "%b"]
    types = {"%a": draw_type(), "%b": draw_type()}
    for i, (op, n_in) in enumerate(draw_ops):
        args = [values[(i + k) % len(values)] for k in range(n_in)]
        out = draw_type()
        lines.append(f'  %{i} = {op}({", ".join(args)}) : ({", ".join(types[a] for a in args)}) -> {out}')
        values.append(f"%{i}")
        types[f"%{i}"] = out
    last = values[-1]
    head = f'func.func @f(%a: {types["%a"]}, %b: {types["%b"]}) -> {types[last]} {{'
    return "\n".join([head, *lines, f"  return {last} : {types[last]}", "}"])


@st.composite
def _generated(draw):
    tensor = st.builds(lambda dims, t: f"tensor<{''.join(d + 'x' for d in dims)}{t}>",
                       st.lists(st.sampled_from(DIMS), max_size=3), st.sampled_from(ELEMENT_TYPES[:9]))
    ops = draw(st.lists(st.tuples(st.sampled_from(_op_names()), st.integers(1, 3)), min_size=1, max_size=4))
    return _random_function(ops, lambda: draw(tensor))


def _run_tfn_opt(pipeline, chunks):
    """Run tfn-opt on the chunks (split input) under pipeline: a diagnostic or output, not a crash or a hang."""
    text = "\n// -----\n".join(chunks)
    try:
        proc = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_opt", f"--{pipeline}", "--split-input-file"],
                              input=text, capture_output=True, text=True, timeout=30 + 10 * len(chunks),
                              env=dict(os.environ, TFN_CACHE_DIR="off"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"tfn-opt --{pipeline} hung on:\n{text}")
    assert proc.returncode in (0, 1), f"tfn-opt --{pipeline} died (status {proc.returncode}) on:\n{text}\n" \
                                      f"{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, f"tfn-opt --{pipeline} raised on:\n{text}\n{proc.stderr[-3000:]}"
    if proc.returncode == 1:
        assert "error" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@settings(FUZZ, max_examples=5)
@given(chunks=st.lists(st.one_of(_mutant(), _generated()), min_size=6, max_size=6))
def test_tfn_opt_survives_mutated_and_random_input(pipeline, chunks):
    _run_tfn_opt(pipeline, chunks)


def test_the_mutation_corpus_is_the_lit_tests():
    assert len(SEEDS) > 50 and all(s.startswith("func.func") and s.rstrip().endswith("}") for s in SEEDS)


# ---- arguments into traced and concrete functions ---------------------------------------------------------------

TF_ERRORS = (TypeError, ValueError, tfn.errors.OpError)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
_shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)


def _leaf():
    arrays = st.builds(lambda shape, dt, seed: (np.random.default_rng(seed).integers(-3, 4, size=shape)).astype(dt),
                       _shapes, st.sampled_from(DTYPES), st.integers(0, 2**16))
    return st.one_of(arrays.map(tfn.constant), arrays, st.integers(-5, 5), st.floats(-4, 4, width=32),
                     st.booleans(), st.none(), st.text(max_size=3))


_structures = st.recursive(_leaf(), lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.tuples(inner, inner),
                                                           st.dictionaries(st.sampled_from("abc"), inner, max_size=2)),
                           max_leaves=5)


def _numpy_or_none(x):
    if isinstance(x, tfn.Tensor):
        return x.numpy()
    return x if isinstance(x, np.ndarray) else None


@tfn.function
def _scale_add(a, b):
    return a * 2 + b


@tfn.function
def _plus_one(s):
    return tfn.nest.map_structure(lambda t: t if isinstance(t, (str, bool, type(None))) else t + 1, s)


@settings(FUZZ, max_examples=40)
@given(a=_leaf(), b=_leaf())
def test_random_arguments_give_tf_errors_or_the_right_result(a, b):
    x, y = _numpy_or_none(a), _numpy_or_none(b)
    try:
        got = _scale_add(a, b)
    except TF_ERRORS:
        if x is not None and y is not None and x.dtype == y.dtype and x.dtype != np.bool_:
            try:
                np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                return
            raise  # same dtype, broadcastable shapes: TF computes it, so must tfn
        return
    if x is not None and y is not None:
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(got.numpy(), x * x.dtype.type(2) + y)


@settings(FUZZ, max_examples=30)
@given(s=_structures)
def test_random_structures_keep_their_shape(s):
    try:
        got = _plus_one(s)
    except TF_ERRORS:
        return
    assert tfn.nest.map_structure(lambda _: 0, got) == tfn.nest.map_structure(lambda _: 0, s)
    for g, v in zip(tfn.nest.flatten(got), tfn.nest.flatten(s)):
        if isinstance(v, (tfn.Tensor, np.ndarray)) and np.asarray(v).dtype != np.bool_:
            want = _numpy_or_none(v) + 1
            np.testing.assert_array_equal(np.asarray(g), want)


_SPEC = tfn.TensorSpec([None, 2], tfn.float32)
_concrete = tfn.function(lambda a: tfn.reduce_sum(a, axis=1)).get_concrete_function(_SPEC)


_fitting = st.builds(lambda n, seed: tfn.constant(np.random.default_rng(seed).integers(-3, 4, (n, 2)), tfn.float32),
                     st.integers(0, 4), st.integers(0, 2**16))


@settings(FUZZ, max_examples=30)
@given(a=st.one_of(_leaf(), _fitting))
def test_a_concrete_function_takes_its_signature_or_raises_tf_errors(a):
    x = _numpy_or_none(a)
    try:
        got = _concrete(a)
    except TF_ERRORS:
        assert x is None or x.dtype != np.float32 or x.ndim != 2 or x.shape[1] != 2
        return
    assert x is not None or isinstance(a, (int, float))  # a Python value converts to the spec's dtype, or fails
    if x is not None:
        np.testing.assert_allclose(got.numpy(), x.sum(axis=1).astype(np.float32))


# ---- random programs: eager == compiled == NumPy ------------------------------------------------------------------

UNARY = {
    "abs": (tfn.abs, np.abs), "negative": (tfn.negative, np.negative), "square": (tfn.square, np.square),
    "sign": (tfn.sign, np.sign), "tanh": (tfn.tanh, np.tanh),
    "sum0": (lambda t: tfn.reduce_sum(t, axis=0, keepdims=True), lambda a: a.sum(axis=0, keepdims=True, dtype=a.dtype)),
    "max1": (lambda t: tfn.reduce_max(t, axis=1, keepdims=True), lambda a: a.max(axis=1, keepdims=True)),
    "min_all": (tfn.reduce_min, np.min),
}
BINARY = {
    "add": (tfn.add, np.add), "subtract": (tfn.subtract, np.subtract), "multiply": (tfn.multiply, np.multiply),
    "maximum": (tfn.maximum, np.maximum), "minimum": (tfn.minimum, np.minimum),
    "where_greater": (lambda a, b: tfn.where(tfn.greater(a, b), a, b), lambda a, b: np.where(a > b, a, b)),
}
_INTEGER_SAFE = {"abs", "negative", "square", "sign", "sum0", "max1", "min_all", "add", "subtract", "multiply",
                 "maximum", "minimum", "where_greater"}


@st.composite
def _program(draw):
    """(steps, inputs): each step an op name and operand indices into the values so far (inputs first)."""
    dtype = draw(st.sampled_from([np.float32, np.int32, np.float64]))
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.integers(-3, 4, size=(rows, cols)).astype(dtype) for _ in range(2)]
    names = sorted(UNARY) + sorted(BINARY)
    if dtype == np.int32:
        names = [n for n in names if n in _INTEGER_SAFE]
    steps = []
    shapes = [(rows, cols), (rows, cols)]
    for _ in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(names))
        pick = st.integers(0, len(shapes) - 1)
        if name in BINARY:
            i, j = draw(pick), draw(pick)
            shape = np.broadcast_shapes(shapes[i], shapes[j])
            steps.append((name, (i, j)))
        else:
            i = draw(pick)
            shape = np.shape(UNARY[name][1](np.zeros(shapes[i])))
            steps.append((name, (i,)))
        shapes.append(shape)
    return steps, inputs


def _interpret(steps, inputs, table_index):
    values = list(inputs)
    for name, operands in steps:
        fn = (BINARY.get(name) or UNARY[name])[table_index]
        values.append(fn(*[values[i] for i in operands]))
    return values[-1]


@settings(FUZZ, max_examples=40)
@given(program=_program())
def test_random_programs_agree_eager_compiled_and_numpy(program):
    steps, inputs = program
    want = _interpret(steps, inputs, 1)
    tensors = [tfn.constant(a) for a in inputs]
    eager = _interpret(steps, tensors, 0)
    compiled = tfn.function(lambda a, b: _interpret(steps, [a, b], 0))(*tensors)
    for got in (eager, compiled):
        assert got.dtype.as_numpy_dtype == np.asarray(want).dtype
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
