"""Traces recorded without MLIR (core/graph.py): built on demand into the very IR a direct trace builds, and found
in the artifact cache by their record's key (core/record_key.py) in a new process that then never loads MLIR."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfn
from tfn.core import graph as graph_mod
from tfn.core import record_key


def _concrete(fn, args, defer):
    saved = graph_mod.DEFER
    graph_mod.DEFER = defer
    try:
        return tfn.function(fn).get_concrete_function(*args)
    finally:
        graph_mod.DEFER = saved


def _strided(x):
    return x[1:, ::2] * 3.0


def _reductions(x):
    return tfn.reduce_sum(x, axis=1, keepdims=True) - tfn.reduce_max(x), tfn.argmax(x, axis=0)


def _constants(x):
    ints = tfn.constant([1, 2, 3], tfn.int32)
    big = tfn.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    return x + tfn.cast(ints, tfn.float32) + big[:3], tfn.constant(["a", "bc"]), tfn.constant(True)


def _several_results(x):
    parts = tfn.unstack(x)
    return tfn.concat([x[:, :2], x[:, 2:]], axis=0), parts[0] + parts[-1]


def _prints(x):
    tfn.print("x is", x)
    return tfn.where(x > 0.5, x, tfn.zeros_like(x))


def _branch(x):
    y = x * 2.0
    if tfn.reduce_sum(x) > 0:  # a tensor `if`: the recorded ops are built when it is traced
        y = y + 1.0
    else:
        y = -y
    return tfn.nn.relu(y)


def _loop(x):
    s = tfn.zeros([3])
    for row in x:
        s = s + row
    return s


_V = tfn.Variable(np.ones(3, np.float32))


def _variable(x):
    _V.assign_add(x[0])
    return _V * 2.0


def _tape(x):
    with tfn.GradientTape() as tape:
        tape.watch(x)
        y = tfn.reduce_sum(tfn.sin(x) * x)
    return tape.gradient(y, x)


_FUNCTIONS = [
    (lambda x, y: tfn.tanh(tfn.matmul(x, y) + 1.0) * 2, (np.ones((3, 3), np.float32), np.eye(3, dtype=np.float32))),
    (_strided, (np.arange(12, dtype=np.float32).reshape(3, 4),)),
    (_reductions, (np.arange(12, dtype=np.float32).reshape(3, 4),)),
    (_constants, (np.ones((3, 3), np.float32),)),
    (_several_results, (np.arange(12, dtype=np.float32).reshape(3, 4),)),
    (_prints, (np.linspace(0, 1, 3, dtype=np.float32),)),
    (_branch, (np.linspace(-1, 1, 3, dtype=np.float32),)),
    (_loop, (np.ones((4, 3), np.float32),)),
    (_variable, (np.ones((2, 3), np.float32),)),
    (_tape, (np.linspace(-1, 1, 3, dtype=np.float32),)),
]


@pytest.mark.parametrize("fn,args", _FUNCTIONS, ids=lambda v: getattr(v, "__name__", "") if callable(v) else "")
def test_a_recorded_trace_builds_the_ir_a_direct_trace_builds(fn, args):
    args = [tfn.constant(a) for a in args]
    direct = _concrete(fn, args, False)
    recorded = _concrete(fn, args, True)
    assert not direct.graph.recorded
    text = direct.graph.module.operation.get_asm(enable_debug_info=True)
    built = recorded.graph.module.operation.get_asm(enable_debug_info=True)
    assert built.replace(recorded.graph.symbol, direct.graph.symbol) == text
    assert [t.dtype for t in direct.outputs] == [t.dtype for t in recorded.outputs]
    _V.assign(np.ones(3, np.float32))
    expected = tfn.nest.flatten(direct(*args))
    _V.assign(np.ones(3, np.float32))
    for a, b in zip(expected, tfn.nest.flatten(recorded(*args))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_record_keys_tell_apart_what_changes_the_ir():
    x = tfn.constant(np.ones((2, 3), np.float32))

    def keys(*fns):
        out = []
        for fn in fns:
            c = _concrete(fn, [x], True)
            assert c.graph.recorded  # straight-line code: nothing built yet
            out.append(record_key.key(c.graph))
        return out

    def twice(v):
        return v * 2.0

    same = keys(twice, twice)
    assert same[0] == same[1]
    assert record_key.key(_concrete(twice, [tfn.ones([3])], True).graph) != same[0]  # another input shape
    different = keys(lambda v: tfn.reduce_sum(v, axis=0), lambda v: tfn.reduce_sum(v, axis=1),
                     lambda v: v * 2.0, lambda v: v * 3.0, lambda v: v + tfn.constant([1.0, 2.0, 3.0]),
                     lambda v: v + tfn.constant([1.0, 2.0, 4.0]), lambda v: tfn.cast(v, tfn.int32),
                     lambda v: tfn.cast(v, tfn.int64), lambda v: v[:, 1:], lambda v: v[:, :2],
                     lambda v: (v, v * 2.0), lambda v: (v * 2.0, v))
    assert len(set(different)) == len(different)


_PROGRAM = """
import sys
import numpy as np
import tfn

@tfn.function
def dense(x, w, b):
    print("tracing dense")  # a Python side effect: runs at every trace, in every process
    return tfn.tanh(tfn.matmul(x, w) + b) * SCALE

@tfn.function
def pick(x, i):
    return tfn.gather(x, i)

x = tfn.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 6)
print(np.round(dense(x, tfn.ones([2, 2]), tfn.ones([2])).numpy().astype(float), 4).tolist())
print(np.round(pick(x, tfn.constant([2, 0])).numpy().astype(float), 4).tolist())
print("mlir loaded:", "mlir._mlir_libs._mlir" in sys.modules)
try:  # (the message is made from the IR, which is built then)
    pick(x, tfn.constant([7]))
except tfn.errors.InvalidArgumentError as e:
    print("error:", str(e).splitlines()[0], "program.py:13:12" in str(e))  # the gather's line
"""


def _run(tmp_path, scale, cache):
    script = tmp_path / "program.py"  # a file: AutoGraph reads the function's source
    script.write_text(textwrap.dedent(_PROGRAM).replace("SCALE", scale))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TFN_CACHE_DIR=str(cache)))
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_a_new_process_finds_its_functions_without_loading_mlir(tmp_path):
    cache = tmp_path / "cache"
    first = _run(tmp_path, "2.0", cache)
    assert first[0] == "tracing dense" and first[3] == "mlir loaded: True"
    assert first[2] == "[[0.6667, 0.8333], [0.0, 0.1667]]"
    assert first[4] == "error: indices[0] = 7 is not in [0, 3) True"
    second = _run(tmp_path, "2.0", cache)  # the same program: both functions from the cache by their records
    assert second[:3] == first[:3] and second[3] == "mlir loaded: False" and second[4] == first[4]
    changed = _run(tmp_path, "3.0", cache)  # another constant: another key, compiled anew (never the old code)
    assert changed[3] == "mlir loaded: True"
    x = np.arange(6, dtype=np.float64).reshape(3, 2) / 6
    assert changed[1] == str(np.round(np.tanh(x.sum(1, keepdims=True) + np.ones((1, 2))) * 3.0, 4).tolist())
    for entry in cache.iterdir():  # aliases naming artifacts that are gone: misses, compiled again
        if entry.suffix == ".so":
            entry.unlink()
    again = _run(tmp_path, "2.0", cache)
    assert again == first
