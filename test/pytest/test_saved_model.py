"""tfn.saved_model: round trips through fresh processes (the model's source deleted, the loading process never
traces), fine-tuning a loaded model and saving it again, damaged and foreign folders, recompiling native code built
for another target, what cannot be saved."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfn

MODEL_SOURCE = '''
import numpy as np
import tfn


class MLP(tfn.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.hidden = Dense(rng, 3, 8)
        self.out = Dense(rng, 8, 1)

    @tfn.function(input_signature=[tfn.TensorSpec([None, 3], tfn.float32)])
    def __call__(self, x):
        return self.out(tfn.nn.relu(self.hidden(x)))


class Dense(tfn.Module):
    def __init__(self, rng, n_in, n_out):
        super().__init__()
        self.w = tfn.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32), name="w")
        self.b = tfn.Variable(np.zeros(n_out, np.float32), name="b")

    def __call__(self, x):
        return tfn.matmul(x, self.w) + self.b
'''

X = [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]


def _run(code, tmp_path, **env):
    environ = dict(os.environ, TFN_CACHE_DIR=str(tmp_path / "cache"), **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=environ)
    assert out.returncode == 0, out.stderr
    return out.stdout


NO_TRACING = '''
import tfn
from tfn.core import graph
def _no_trace(*a, **k):
    raise AssertionError("the loading process traced a function")
graph.FuncGraph.__init__ = _no_trace
'''


def test_round_trip_through_processes_without_the_source(tmp_path):
    (tmp_path / "model_def.py").write_text(MODEL_SOURCE)
    first = _run(f'''
        import numpy as np, tfn
        from model_def import MLP
        m = MLP()
        print(m(tfn.constant({X})).numpy().tolist())
        tfn.saved_model.save(m, "saved")
    ''', tmp_path)
    (tmp_path / "model_def.py").unlink()
    second = _run(NO_TRACING + f'''
import numpy as np
loaded = tfn.saved_model.load("saved")
x = tfn.constant({X})
print(loaded(x).numpy().tolist())
print(sorted(v.name for v in loaded.trainable_variables), loaded.hidden.w.shape)
target = tfn.constant([[1.0], [0.0]])
losses = []
for _ in range(5):
    with tfn.GradientTape() as tape:
        loss = tfn.reduce_sum((loaded(x) - target) ** 2)
    grads = tape.gradient(loss, loaded.trainable_variables)
    assert all(g is not None for g in grads)
    for v, g in zip(loaded.trainable_variables, grads):
        v.assign_sub(0.01 * g)
    losses.append(float(loss))
assert losses[-1] < losses[0], losses
print(loaded(x).numpy().tolist())
print(loaded.signatures["serving_default"](x=x)["output_0"].numpy().tolist())
tfn.saved_model.save(loaded, "tuned")
print(loaded.out.b.numpy().tolist())
''', tmp_path)
    assert first.splitlines()[0] == second.splitlines()[0]
    assert second.splitlines()[1] == "['b:0', 'b:0', 'w:0', 'w:0'] (3, 8)"
    tuned_output, signature_output, tuned_b = second.splitlines()[2:5]
    assert tuned_output != first.splitlines()[0] and signature_output == tuned_output
    third = _run(NO_TRACING + '''
loaded = tfn.saved_model.load("tuned")
print(loaded(tfn.constant(%s)).numpy().tolist())
print(loaded.out.b.numpy().tolist())
''' % X, tmp_path)
    assert third.splitlines() == [tuned_output, tuned_b]


def _target_levels():
    from tfn.passes import target
    return [lvl[0] for lvl in target._host()[1]]


@pytest.mark.skipif("avx512" not in _target_levels() or "avx2" not in _target_levels(),
                    reason="needs an x86-64 host with AVX-512 (code for AVX2 is the other target)")
def test_native_code_for_another_target_is_compiled_again_from_the_ir(tmp_path):
    (tmp_path / "model_def.py").write_text(MODEL_SOURCE)
    _run('''
        import tfn
        from model_def import MLP
        tfn.saved_model.save(MLP(), "saved")
    ''', tmp_path, TFN_TARGET_FEATURES="avx2")
    check = NO_TRACING.replace("graph.FuncGraph.__init__ = _no_trace", "") + f'''
loaded = tfn.saved_model.load("saved")
c = loaded.__call__.concrete_functions[0]
print(c._executable.source.startswith(os.path.abspath("saved")), c._native is not None)
print(loaded(tfn.constant({X})).numpy().round(4).tolist())
'''
    check = "import os\n" + check
    native = _run(check, tmp_path, TFN_TARGET_FEATURES="native").splitlines()
    same = _run(check, tmp_path, TFN_TARGET_FEATURES="avx2").splitlines()
    assert native[0] == "False False"  # built for AVX2: compiled again for this AVX-512 target
    assert same[0] == "True True"      # built for the target in use: the stored code is loaded
    assert native[1] == same[1]
    manifest = json.loads((tmp_path / "saved" / "manifest.json").read_text())
    assert manifest["target"]["isa"] == "avx2" and "avx512f" in manifest["target"]["cpu_features"]


class Counter(tfn.Module):
    def __init__(self):
        super().__init__()
        self.count = tfn.Variable(0, name="count")
        self.table = tfn.Variable(np.arange(200, dtype=np.float32), trainable=False)  # > 128: a captured input

    @tfn.function
    def step(self, by, scale=2):
        self.count.assign_add(by * scale)
        return {"count": self.count.value(), "sum": tfn.reduce_sum(self.table) * tfn.cast(by, tfn.float32)}


def test_module_with_written_variables_and_traced_signatures(tmp_path):
    c = Counter()
    c.step(tfn.constant(1))
    tfn.saved_model.save(c, tmp_path / "s")
    loaded = tfn.saved_model.load(tmp_path / "s")
    out = loaded.step(tfn.constant(3))
    assert int(out["count"]) == 2 + 6 and float(out["sum"]) == 3 * 19900.0
    assert int(loaded.count) == 8 and not loaded.table.trainable
    assert loaded.signatures == {}
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.step(tfn.constant(1.5))


def test_bare_function_with_signatures(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([None], tfn.float32, name="values")])
    def scaled(v):
        return {"double": v * 2.0, "total": tfn.reduce_sum(v)}

    tfn.saved_model.save(scaled, tmp_path / "s")
    loaded = tfn.saved_model.load(tmp_path / "s")
    out = loaded.signatures["serving_default"](values=tfn.constant([1.0, 2.0]))
    assert sorted(out) == ["double", "total"] and out["double"].numpy().tolist() == [2.0, 4.0]
    assert float(loaded(tfn.constant([1.0, 2.0, 4.0]))["total"]) == 7.0
    with pytest.raises(TypeError, match="positional"):
        loaded.signatures["serving_default"](tfn.constant([1.0]))
    with pytest.raises(ValueError, match="Expected these arguments to match one of the following 1 option"):
        loaded(tfn.constant([[1.0]]))


def test_python_callbacks_cannot_be_saved(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([2], tfn.float32)])
    def calls_python(x):
        return tfn.py_function(lambda t: t * 2, [x], tfn.float32)

    with pytest.raises(ValueError, match="cannot save tfn.function 'calls_python'.*calls back into Python"):
        tfn.saved_model.save(calls_python, tmp_path / "s")


def test_only_modules_and_functions_are_saved(tmp_path):
    with pytest.raises(ValueError, match="Expected an object of type `tfn.Module`"):
        tfn.saved_model.save(lambda x: x, tmp_path / "s")


@pytest.fixture
def saved(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.float32)])
    def f(x):
        return x * v

    v = tfn.Variable([1.0, 2.0, 3.0])
    m = tfn.Module()
    m.v, m.f = v, f
    tfn.saved_model.save(m, tmp_path / "s")
    return tmp_path / "s"


def _flip(path, at=-10):
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_changed_native_file_is_refused(saved):
    _flip(saved / "functions" / "0.so", 200)
    with pytest.raises(tfn.errors.DataLossError, match=r"damaged: functions/0\.so is not the file its manifest"):
        tfn.saved_model.load(saved)


def test_a_truncated_variable_is_refused(saved):
    path = saved / "variables" / "0.npy"
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(tfn.errors.DataLossError, match=r"variables/0\.npy .*truncated or changed"):
        tfn.saved_model.load(saved)


def test_a_missing_ir_file_is_refused(saved):
    (saved / "functions" / "0.mlirbc").unlink()
    with pytest.raises(tfn.errors.NotFoundError, match=r"incomplete: functions/0\.mlirbc is missing"):
        tfn.saved_model.load(saved)


def test_a_damaged_manifest_is_refused(saved):
    path = saved / "manifest.json"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(tfn.errors.DataLossError, match=r"manifest\.json is not the file"):
        tfn.saved_model.load(saved)


def test_another_format_version_is_refused(saved):
    import hashlib
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["version"] = 99
    text = json.dumps(manifest).encode()
    (saved / "manifest.json").write_bytes(text)
    (saved / "manifest.json.sha256").write_text(hashlib.sha256(text).hexdigest())
    with pytest.raises(ValueError, match="has format version 99; this tfn reads version 1"):
        tfn.saved_model.load(saved)


def test_no_saved_model_there(tmp_path):
    with pytest.raises(OSError, match="SavedModel file does not exist at"):
        tfn.saved_model.load(tmp_path / "nothing")


def test_loaded_values_and_binding(saved):
    loaded = tfn.saved_model.load(saved)
    assert loaded.f(tfn.constant([1.0, 1.0, 1.0])).numpy().tolist() == [1.0, 2.0, 3.0]
    loaded.v.assign([2.0, 2.0, 2.0])  # the loaded function reads the loaded variable
    assert loaded.f(tfn.constant([1.0, 1.0, 1.0])).numpy().tolist() == [2.0, 2.0, 2.0]
    assert loaded.signatures["serving_default"](x=[1.0, 0.0, 1.0])["output_0"].numpy().tolist() == [2.0, 0.0, 2.0]


def test_run_time_errors_of_loaded_code_name_the_op_and_the_saved_line(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([4], tfn.float32), tfn.TensorSpec([], tfn.int32)])
    def pick(x, i):
        return tfn.gather(x, i)

    tfn.saved_model.save(pick, tmp_path / "s")
    loaded = tfn.saved_model.load(tmp_path / "s")
    assert float(loaded(tfn.constant([1.0, 2.0, 3.0, 4.0]), tfn.constant(2))) == 3.0
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"indices = 7 is not in \[0, 4\)(.|\n)*"
                                                               r"test_saved_model\.py:\d+"):
        loaded(tfn.constant([1.0, 2.0, 3.0, 4.0]), tfn.constant(7))


def test_tfn_print_is_saved_and_prints_when_loaded(tmp_path, capfd):
    @tfn.function(input_signature=[tfn.TensorSpec([2], tfn.float32)])
    def noisy(x):
        tfn.print("x is", x, "and its sum", tfn.reduce_sum(x))
        return x * 2.0

    tfn.saved_model.save(noisy, tmp_path / "s")
    capfd.readouterr()
    loaded = tfn.saved_model.load(tmp_path / "s")
    assert loaded(tfn.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert capfd.readouterr().err == "x is [1 2] and its sum 3\n"
    with tfn.GradientTape() as tape:  # replayed op by op: prints too
        x = tfn.constant([3.0, 4.0])
        tape.watch(x)
        y = tfn.reduce_sum(loaded(x))
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 2.0]
    assert capfd.readouterr().err == "x is [3 4] and its sum 7\n"


def test_a_manifest_naming_files_outside_the_folder_is_refused(saved):
    import hashlib
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["files"]["../outside.npy"] = manifest["files"]["variables/0.npy"]
    text = json.dumps(manifest).encode()
    (saved / "manifest.json").write_bytes(text)
    (saved / "manifest.json.sha256").write_text(hashlib.sha256(text).hexdigest())
    with pytest.raises(tfn.errors.DataLossError, match=r"names files it cannot hold: \.\./outside\.npy"):
        tfn.saved_model.load(saved)
