"""MLIR loads on first use (tracing, compiling), not at `import tfn`: eager programs never load it."""
import os
import subprocess
import sys
import tempfile

# Which MLIR modules hold their real code: the deferred ones (dialects/mlir_loading.py) do not until first used.
_LOADED_MLIR = """
def loaded_mlir():
    from tfn.dialects import mlir_loading
    return sorted(m for m, mod in sys.modules.items() if m.startswith("mlir.") and m != "mlir.dialects"
                  and not isinstance(mod, mlir_loading._Deferred))
"""


def _run(code):
    # an empty artifact cache: a function found there by its recorded trace would run without MLIR
    # (test_recorded_traces.py)
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", "import sys\n" + _LOADED_MLIR + code], capture_output=True,
                             text=True, timeout=300, env=dict(os.environ, TFN_CACHE_DIR=cache))
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_import_tfn_and_eager_ops_load_no_mlir_and_tracing_then_does():
    out = _run("""
flags = sys.getdlopenflags()
import numpy as np
import tfn as tf
print(loaded_mlir())
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
v = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.matmul(x, x) + 1.0) * v
print(float(y), float(tape.gradient(y, v)), tf.cond(x[0, 0] > 0, lambda: x, lambda: -x).shape,
      tf.constant(["a"]).dtype.name, tf.keras.layers.Dense(3)(x).shape)
print(loaded_mlir())

@tf.function
def f(a):
    return tf.tanh(a) * 2.0

print([round(float(a), 4) for a in f(x).numpy()[0]], "mlir.ir" in loaded_mlir(), sys.getdlopenflags() == flags)
from mlir import ir  # a program's own use of MLIR after tfn's
with ir.Context():
    print(ir.Module.parse("func.func @g() { return }").operation.name)
""")
    assert out == ["[]", "116.0 58.0 (2, 2) string (2, 3)", "[]", "[1.5232, 1.9281] True True", "builtin.module"]


def test_first_traces_in_several_threads_at_once():
    # the first use of MLIR in a process, from several threads: each waits for the one load
    out = _run("""
import threading
import tfn
barrier = threading.Barrier(4)
results = [None] * 4

def work(i):
    f = tfn.function(lambda a: a * float(i + 1))
    barrier.wait()
    results[i] = float(tfn.reduce_sum(f(tfn.ones([3]))))

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(results)
""")
    assert out == ["[3.0, 6.0, 9.0, 12.0]"]


def test_mlir_loaded_before_tfn_is_used_as_it_is():
    out = _run("""
from mlir import ir
import tfn
f = tfn.function(lambda a: a + 1.0)
print(sys.modules["mlir.ir"] is ir, "mlir.ir" in loaded_mlir(), float(f(tfn.constant(1.0))))
""")
    assert out == ["True True 2.0"]
