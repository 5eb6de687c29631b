"""tfn.experimental.aot_compile and tfn-aot: libraries compiled ahead of time, called from C programs built with cc.

Each C program is compiled against the generated header and library and run in its own process (no Python in
it); what it prints is checked against NumPy. Needs a C compiler (`cc`, or $CC): skipped on a machine without one.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfn
from tfn.passes import target
from tfn.runtime import toolchain

# Building a library needs a C compiler; the refusals do not (they come before anything is built).
needs_cc = pytest.mark.skipif(shutil.which(toolchain.linker()) is None, reason="no C compiler (cc) on this machine")

RNG = np.random.default_rng(7)
W1 = RNG.standard_normal((3, 8)).astype(np.float32)
B1 = RNG.standard_normal((8,)).astype(np.float32)
W2 = RNG.standard_normal((8, 2)).astype(np.float32)
X = RNG.standard_normal((4, 3)).astype(np.float32)


def build_and_run(tmp, lib, source, name="prog"):
    """Compile C `source` against the library `lib` (an aot_compile result), run it; (exit status, stdout)."""
    src, exe = os.path.join(tmp, f"{name}.c"), os.path.join(tmp, name)
    with open(src, "w") as f:
        f.write(textwrap.dedent(source))
    where = os.path.dirname(lib.library)
    libname = os.path.basename(lib.library)[3:-3]
    subprocess.run([toolchain.linker(), "-std=c11", "-Wall", "-Werror", "-o", exe, src, "-I", where, "-L", where,
                    f"-l{libname}", f"-Wl,-rpath,{where}", "-pthread"], check=True, capture_output=True, text=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([exe], capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout


def numbers(line):
    return np.array([float(v) for v in line.split()])


def c_array(a, ctype="float"):
    return f"{{{', '.join(repr(float(v)) if ctype in ('float', 'double') else str(int(v)) for v in a.ravel())}}}"


@pytest.fixture(scope="module")
def mlp_lib(tmp_path_factory):
    """A 2-layer matmul+relu with its weights in variables, and an elementwise output; compiled once."""
    w1, b1, w2 = tfn.Variable(W1), tfn.Variable(B1), tfn.Variable(W2)

    @tfn.function(input_signature=[tfn.TensorSpec([4, 3], tfn.float32)])
    def mlp(x):
        h = tfn.nn.relu(tfn.matmul(x, w1) + b1)
        return tfn.matmul(h, w2), tfn.tanh(x) * 2.0 - x

    out = tmp_path_factory.mktemp("mlp")
    lib = tfn.experimental.aot_compile(mlp, str(out))
    w1.assign(np.zeros_like(W1))  # frozen at compile time: the library keeps the values it was built with
    return lib, str(out)


MLP_PROGRAM = """
    #include <stdio.h>
    #include "mlp.h"
    int main(void) {
      float x[MLP_X_SIZE] = X_VALUES;
      float y[MLP_OUT0_SIZE], z[MLP_OUT1_SIZE];
      int rc = mlp(x, y, z);
      if (rc != 0) { printf("error %d: %s\\n", rc, mlp_last_error()); return 1; }
      for (int i = 0; i < MLP_OUT0_SIZE; ++i) printf("%.9g ", y[i]);
      printf("\\n");
      for (int i = 0; i < MLP_OUT1_SIZE; ++i) printf("%.9g ", z[i]);
      printf("\\n[%s] %d %d %d\\n", mlp_last_error(), MLP_OUT0_DIM0, MLP_OUT0_DIM1, MLP_X_RANK);
      return 0;
    }
"""


@needs_cc
def test_mlp_from_c_matches_numpy(mlp_lib):
    lib, tmp = mlp_lib
    assert os.path.basename(lib.library) == "libmlp.so" and os.path.basename(lib.header) == "mlp.h"
    rc, out = build_and_run(tmp, lib, MLP_PROGRAM.replace("X_VALUES", c_array(X)))
    assert rc == 0, out
    lines = out.splitlines()
    want = np.maximum(X @ W1 + B1, 0) @ W2
    np.testing.assert_allclose(numbers(lines[0]), want.ravel(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(numbers(lines[1]), (np.tanh(X) * 2 - X).ravel(), rtol=1e-5, atol=1e-6)
    assert lines[2] == "[] 4 2 2"


@needs_cc
def test_header_states_the_convention(mlp_lib):
    lib, _ = mlp_lib
    text = open(lib.header).read()
    assert "int mlp(const float *x, float *out0, float *out1);" in text
    assert "const char *mlp_last_error(void);" in text
    assert "row-major" in text and "returns 0 on success" in text
    assert "argument x: float32 [4, 3] (float)" in text


def _assert_needs_only_libc(library):
    """Assert the shared object needs the C library and its dynamic loader only (thread-local storage: the message
    buffer), nothing of Python or MLIR; returns readelf's path (skips the test without readelf)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf")
    needed = subprocess.run([readelf, "-d", library], capture_output=True, text=True, check=True).stdout
    libs = [line.split("[")[1].split("]")[0] for line in needed.splitlines() if "(NEEDED)" in line]
    assert libs and all(n.startswith(("libc.so", "libm.so", "libpthread.so", "ld-linux")) for n in libs), libs
    return readelf


@needs_cc
def test_library_needs_no_python_and_exports_only_its_entry_points(mlp_lib):
    lib, _ = mlp_lib
    readelf = _assert_needs_only_libc(lib.library)
    symbols = subprocess.run([readelf, "--dyn-syms", "-W", lib.library], capture_output=True, text=True).stdout
    defined = {line.split()[-1] for line in symbols.splitlines()
               if " FUNC " in line and " GLOBAL " in line and " UND " not in line}
    assert defined == {"mlp", "mlp_last_error"}


@pytest.fixture(scope="module")
def pick_lib(tmp_path_factory):
    @tfn.function(input_signature=[tfn.TensorSpec([5], tfn.float32), tfn.TensorSpec([3], tfn.int32)])
    def pick(params, idx):
        return tfn.gather(params, idx) * 10.0

    out = tmp_path_factory.mktemp("pick")
    return tfn.experimental.aot_compile(pick, str(out)), str(out)


PICK_PROGRAM = """
    #include <stdio.h>
    #include "pick.h"
    int main(void) {
      float p[5] = {0, 1, 2, 3, 4};
      int32_t i[3] = {0, 7, 1};
      float out[3] = {-1, -1, -1};
      int rc = pick(p, i, out);
      printf("rc=%d out=%g\\n%s\\n--\\n", rc, out[0], pick_last_error());
      i[1] = 4;
      rc = pick(p, i, out);
      printf("rc=%d [%s] %g %g %g\\n", rc, pick_last_error(), out[0], out[1], out[2]);
      i[2] = -3;
      rc = pick(p, i, out);
      printf("rc=%d\\n%s\\n--\\n", rc, pick_last_error());
      rc = pick(NULL, i, out);
      printf("rc=%d %s\\n", rc, pick_last_error());
      return 0;
    }
"""


@needs_cc
def test_run_time_error_returns_its_code_and_message(pick_lib):
    lib, tmp = pick_lib
    rc, out = build_and_run(tmp, lib, PICK_PROGRAM)
    assert rc == 0, out
    first, second, third = out.split("--\n")
    assert first.startswith("rc=3 out=-1\n")  # INVALID_ARGUMENT; the outputs are left alone
    assert "indices[1] = 7 is not in [0, 5)" in first
    assert "{{node GatherV2}} defined at " + __file__ in first and "tfn.gather(params, idx)" in first
    assert second.splitlines()[0] == "rc=0 [] 0 40 10"  # the error was reset: the next call succeeds
    assert "indices[2] = -3 is not in [0, 5)" in second
    assert third.strip() == "rc=3 pick: params is NULL (it needs 5 elements)"


@needs_cc
def test_library_with_an_error_channel_needs_only_libc_and_no_lock(pick_lib):
    """The thread-local error channel is native ELF TLS (or, from the ExecutionEngine, emulated TLS whose routine
    comes from libgcc.a, linked in), never libgcc_s; calls are not serialised by a lock: each thread reads its own
    flag through tfn_error_flag_slot()."""
    lib, _ = pick_lib
    readelf = _assert_needs_only_libc(lib.library)
    symbols = subprocess.run([readelf, "--syms", "-W", lib.library], capture_output=True, text=True).stdout
    native = any(line.split()[3:4] == ["TLS"] for line in symbols.splitlines())
    assert native != ("__emutls_get_address" in symbols), symbols
    assert " tfn_lock" not in symbols  # the wrapper once had one


@needs_cc
def test_threads_calling_at_once_get_their_own_results(pick_lib):
    lib, tmp = pick_lib
    source = """
        #include <pthread.h>
        #include <stdio.h>
        #include <string.h>
        #include "pick.h"
        static int bad[2];
        static void *run(void *arg) {
          int k = (int)(long)arg;
          float p[5] = {0, 1, 2, 3, 4}, out[3];
          for (int n = 0; n < 2000; ++n) {
            int32_t i[3] = {k, (n + k) % 2 ? 9 : 2, 1};  /* every other call fails */
            int rc = pick(p, i, out);
            int want_fail = (n + k) % 2;
            if (want_fail ? (rc != 3 || !strstr(pick_last_error(), "= 9 is not"))
                          : (rc != 0 || out[0] != 10 * k || out[1] != 20 || pick_last_error()[0])) bad[k]++;
          }
          return NULL;
        }
        int main(void) {
          pthread_t t[2];
          for (long k = 0; k < 2; ++k) pthread_create(&t[k], NULL, run, (void *)k);
          for (int k = 0; k < 2; ++k) pthread_join(t[k], NULL);
          printf("%d %d\\n", bad[0], bad[1]);
          return 0;
        }
    """
    rc, out = build_and_run(tmp, lib, source, "threads")
    assert (rc, out.strip()) == (0, "0 0")


@needs_cc
def test_dtypes_scalars_and_returned_inputs(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.int32), tfn.TensorSpec([], tfn.float64),
                                   tfn.TensorSpec([2, 2], tfn.bool)])
    def mixed(n, s, b):
        return n, n * 3 + 1, tfn.cast(n, tfn.float64) * s, tfn.logical_not(b), tfn.constant([7, 8], tfn.int64), s

    lib = tfn.experimental.aot_compile(mixed, str(tmp_path))
    header = open(lib.header).read()
    assert ("int mixed(const int32_t *n, const double *s, const bool *b, int32_t *out0, int32_t *out1, double *out2, "
            "bool *out3, int64_t *out4, double *out5);") in header
    source = """
        #include <stdio.h>
        #include "mixed.h"
        int main(void) {
          int32_t n[3] = {1, -2, 5}, o0[3], o1[3];
          double s = 0.5, o2[3], o5;
          bool b[4] = {true, false, false, true}, o3[4];
          int64_t o4[2];
          for (int k = 0; k < 2; ++k) {  /* twice: no buffer was freed that the library still uses */
            int rc = mixed(n, &s, b, o0, o1, o2, o3, o4, &o5);
            printf("%d | %d %d %d | %d %d %d | %g %g %g | %d %d %d %d | %lld %lld | %g\\n", rc, o0[0], o0[1], o0[2],
                   o1[0], o1[1], o1[2], o2[0], o2[1], o2[2], o3[0], o3[1], o3[2], o3[3], (long long)o4[0],
                   (long long)o4[1], o5);
          }
          return 0;
        }
    """
    rc, out = build_and_run(str(tmp_path), lib, source)
    assert rc == 0
    assert out.splitlines() == ["0 | 1 -2 5 | 4 -5 16 | 0.5 -1 2.5 | 0 1 1 0 | 7 8 | 0.5"] * 2


def test_py_function_is_refused_naming_it():
    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.float32)])
    def cb(x):
        return tfn.py_function(lambda a: a * 2, [x], tfn.float32) + 1

    with pytest.raises(ValueError, match=r"cannot compile 'cb' ahead of time: it calls tfn.py_function at "
                       + __file__ + r":\d+.*runs without Python") as e:
        tfn.experimental.aot_compile(cb, "unused")
    assert "tfn.py_function(lambda a: a * 2, [x], tfn.float32)" in str(e.value)  # the user's line
    assert not os.path.exists("unused")


def test_print_and_strings_are_refused():
    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.float32)])
    def shows(x):
        tfn.print("x:", x)
        return x

    with pytest.raises(ValueError, match="it calls tfn.print at"):
        tfn.experimental.aot_compile(shows, "unused")

    @tfn.function(input_signature=[tfn.TensorSpec([2], tfn.string)])
    def greet(s):
        return s + "!"

    with pytest.raises(ValueError, match="string tensors"):
        tfn.experimental.aot_compile(greet, "unused")


def test_dynamic_shapes_state_and_bad_names_are_refused():
    @tfn.function(input_signature=[tfn.TensorSpec([None, 3], tfn.float32)])
    def dyn(x):
        return x + 1

    with pytest.raises(ValueError, match=r"argument 'x' has the dynamic shape \(None, 3\).*static shapes"):
        tfn.experimental.aot_compile(dyn, "unused")

    v = tfn.Variable(np.zeros(3, np.float32))

    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.float32)])
    def step(x):
        v.assign_add(x)
        return v.read_value()

    with pytest.raises(ValueError, match="assigns to a variable.*holds no state"):
        tfn.experimental.aot_compile(step, "unused")
    with pytest.raises(ValueError, match="not usable as a C identifier"):
        tfn.experimental.aot_compile(dyn.get_concrete_function(tfn.TensorSpec([2, 3])), "unused", name="int")
    with pytest.raises(ValueError, match=r"the function's name '<lambda>' is not usable as a C identifier.*pass name="):
        tfn.experimental.aot_compile(tfn.function(lambda x: x).get_concrete_function(tfn.TensorSpec([2])), "unused")
    with pytest.raises(ValueError, match="has no input_signature"):
        tfn.experimental.aot_compile(tfn.function(lambda x: x), "unused")
    with pytest.raises(TypeError, match="ConcreteFunction"):
        tfn.experimental.aot_compile(lambda x: x, "unused")


def _cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "tfn.tools.tfn_aot", *args], capture_output=True, text=True,
                          cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


@needs_cc
def test_cli_compiles_a_function_of_a_file(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import numpy as np
        import tfn

        scale = tfn.Variable(np.array([1.0, -2.0, 0.5], np.float32))

        def affine(x, y):
            return tfn.nn.relu(x * scale) + y
    """))
    rc, out, err = _cli("model.py:affine", "-s", "float32[2,3]", "float32[]", "-o", "lib", "-n", "affine",
                        cwd=tmp_path)
    assert (rc, err) == (0, "")
    assert out.splitlines() == ["wrote lib/libaffine.so", "wrote lib/affine.h"]
    lib = type("Lib", (), {"library": str(tmp_path / "lib" / "libaffine.so")})
    source = """
        #include <stdio.h>
        #include "affine.h"
        int main(void) {
          float x[6] = {1, 2, 3, -1, -2, -3}, y = 10, out[6];
          if (affine(x, &y, out)) return 1;
          for (int i = 0; i < 6; ++i) printf("%g ", out[i]);
          return 0;
        }
    """
    rc, out = build_and_run(str(tmp_path), lib, source)
    assert (rc, out.split()) == (0, ["11", "10", "11.5", "10", "14", "10"])


def test_cli_errors(tmp_path):
    (tmp_path / "m.py").write_text("import tfn\n\ndef f(x):\n    return x + 1\n")
    (tmp_path / "m.mlir").write_text("func.func @f() { return }\n")
    for args, message in [
        (["m.py:f"], "has no input_signature: give its arguments' types with --signature"),
        (["m.py:g", "-s", "float32[2]"], "m.py has no 'g'"),
        (["m.py:f", "-s", "float32[2,?]"], "dimensions must be non-negative integers"),
        (["m.py:f", "-s", "float99[2]"], "unknown dtype 'float99'"),
        (["nope.py:f", "-s", "float32[2]"], "no such file: nope.py"),
        (["m.py", "-s", "float32[2]"], "expected FILE.py:NAME or module:NAME"),
        # a file with a path that is not Python source: no loader (was "'NoneType' object has no attribute 'loader'")
        (["./m.mlir:f", "-s", "float32[2]"], "expected a Python file (FILE.py:NAME), got ./m.mlir"),
    ]:
        rc, out, err = _cli(*args, cwd=tmp_path)
        assert rc == 1 and err.startswith("tfn-aot: error: ") and message in err, (args, err)
        assert "Traceback" not in err


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _indented_blocks(text):
    """The README's indented code blocks, as lists of lines."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith("    ") and line.strip():
            current.append(line[4:])
        elif current and line.strip():
            blocks.append(current)
            current = []
    return blocks + ([current] if current else [])


@needs_cc
def test_example_readme_commands_print_what_it_says(tmp_path):
    """examples/aot/README.md: its commands, run as written from a copy of the repository's root, print its output
    (which is also what the model prints from Python)."""
    with open(os.path.join(ROOT, "examples", "aot", "README.md")) as f:
        commands, expected = _indented_blocks(f.read())[:2]
    assert commands[0].startswith("tfn-aot ") and commands[1].startswith("cc ") and commands[2].startswith("./")
    os.symlink(os.path.join(ROOT, "examples"), tmp_path / "examples")
    tfn_aot = f"{sys.executable} -m tfn.tools.tfn_aot"
    outputs = []
    for command in commands:
        proc = subprocess.run(command.replace("tfn-aot", tfn_aot, 1), shell=True, cwd=tmp_path, capture_output=True,
                              text=True)
        assert proc.returncode == 0, (command, proc.stderr)
        outputs.append(proc.stdout)
    assert outputs[-1].splitlines() == expected
    from_python = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "aot", "model.py")],
                                 capture_output=True, text=True, check=True).stdout
    assert from_python.splitlines() == expected


@needs_cc
def test_keras_model_served_from_c(tmp_path):
    tfn.random.set_seed(3)
    model = tfn.keras.Sequential([tfn.keras.layers.Dense(8, activation="relu"), tfn.keras.layers.Dense(2)])
    x = RNG.standard_normal((1, 5)).astype(np.float32)
    want = model(x).numpy()

    @tfn.function(input_signature=[tfn.TensorSpec([1, 5], tfn.float32)])
    def serve(inputs):
        return model(inputs, training=False)

    lib = tfn.experimental.aot_compile(serve.get_concrete_function(), str(tmp_path), name="keras_model")
    source = """
        #include <stdio.h>
        #include "keras_model.h"
        int main(void) {
          float x[KERAS_MODEL_INPUTS_SIZE] = X_VALUES, y[KERAS_MODEL_OUT0_SIZE];
          int rc = keras_model(x, y);
          printf("%d %.9g %.9g\\n", rc, y[0], y[1]);
          return 0;
        }
    """.replace("X_VALUES", c_array(x))
    rc, out = build_and_run(str(tmp_path), lib, source)
    assert rc == 0 and out.split()[0] == "0"
    np.testing.assert_allclose(numbers(out)[1:], want.ravel(), rtol=1e-5, atol=1e-6)


def test_console_script_is_declared():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        assert tomllib.load(f)["project"]["scripts"]["tfn-aot"] == "tfn.tools.tfn_aot:main"


@needs_cc
def test_messages_are_the_runtimes(tmp_path):
    """Integer division by zero and a scatter index out of range: the library's message is the Python runtime's,
    word for word (templates made from the ops' formatters)."""
    @tfn.function(input_signature=[tfn.TensorSpec([3], tfn.int32), tfn.TensorSpec([3], tfn.int32),
                                   tfn.TensorSpec([2, 1], tfn.int32)])
    def ops(a, b, idx):
        return a // b, tfn.tensor_scatter_nd_update(a, idx, tfn.constant([5, 6], tfn.int32))

    cases = [([1, 2, 3], [1, 0, 1], [0, 1]), ([1, 2, 3], [1, 1, 1], [0, 4]), ([1, 2, 3], [1, 1, 1], [-7, 0])]
    want = []
    for a, b, idx in cases:
        with pytest.raises(tfn.errors.InvalidArgumentError) as e:
            ops(np.array(a, np.int32), np.array(b, np.int32), np.array(idx, np.int32).reshape(2, 1))
        want.append(str(e.value))
    lib = tfn.experimental.aot_compile(ops, str(tmp_path))
    calls = "\n".join(f"""
          {{ int32_t a[3] = {c_array(np.array(a), "int")}, b[3] = {c_array(np.array(b), "int")};
            int32_t idx[2] = {c_array(np.array(idx), "int")}, q[3], s[3];
            int rc = ops(a, b, idx, q, s);
            printf("%d\\n%s\\n@@\\n", rc, ops_last_error()); }}""" for a, b, idx in cases)
    source = '#include <stdio.h>\n#include "ops.h"\nint main(void) {' + calls + "\n  return 0;\n}\n"
    rc, out = build_and_run(str(tmp_path), lib, source)
    assert rc == 0
    got = out.split("\n@@\n")[:3]
    assert [g.split("\n", 1)[0] for g in got] == ["3"] * 3
    assert [g.split("\n", 1)[1] for g in got] == want


@needs_cc
def test_argument_names_become_distinct_c_identifiers(tmp_path):
    @tfn.function(input_signature=[tfn.TensorSpec([2], tfn.float32)] * 5)
    def names(x, X, OUT0, tfn_a, memcpy):
        return x + 2 * X + 3 * OUT0 + 4 * tfn_a + 5 * memcpy

    lib = tfn.experimental.aot_compile(names, str(tmp_path))
    assert ("int names(const float *x, const float *X_1, const float *arg_OUT0, const float *arg_tfn_a, "
            "const float *arg_memcpy, float *out0);") in open(lib.header).read()
    source = """
        #include <stdio.h>
        #include "names.h"
        int main(void) {
          float a[2] = {1, 0}, b[2] = {0, 1}, out[NAMES_OUT0_SIZE];
          int rc = names(a, a, b, b, a, out);
          printf("%d %g %g %d\\n", rc, out[0], out[1], NAMES_ARG_OUT0_SIZE + NAMES_X_1_SIZE);
          return 0;
        }
    """
    assert build_and_run(str(tmp_path), lib, source) == (0, "0 8 7 4\n")


def test_without_a_c_compiler_the_error_says_so(tmp_path, monkeypatch):
    @tfn.function(input_signature=[tfn.TensorSpec([2], tfn.float32)])
    def twice(x):
        return x * 2.0

    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(tfn.errors.InternalError, match="compiling the C wrapper failed: cannot run .*no-such-cc"):
        tfn.experimental.aot_compile(twice, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@needs_cc
def test_big_kernels_run_on_the_librarys_own_worker_threads(tmp_path):
    """A matmul big enough to be split (tfn-async-parallel) runs on a pool of worker threads that tfn's async runtime,
    compiled into the library, starts on the first call (the program's thread count grows); the result matches
    NumPy, the library still needs libc only and exports its two entry points only (the runtime's functions stay
    local: two libraries in one program have a pool each)."""
    if target.current().cores < 2:
        pytest.skip("one core: kernels are not split")
    a = RNG.standard_normal((384, 512)).astype(np.float32)
    b = RNG.standard_normal((512, 256)).astype(np.float32)

    @tfn.function(input_signature=[tfn.TensorSpec([384, 512], tfn.float32), tfn.TensorSpec([512, 256], tfn.float32)])
    def big(x, y):
        return tfn.matmul(x, y)

    lib = tfn.experimental.aot_compile(big, str(tmp_path))
    assert "worker threads of the library's own" in open(lib.header).read()
    readelf = _assert_needs_only_libc(lib.library)
    symbols = subprocess.run([readelf, "--dyn-syms", "-W", lib.library], capture_output=True, text=True).stdout
    assert {line.split()[-1] for line in symbols.splitlines()
            if " FUNC " in line and " GLOBAL " in line and " UND " not in line} == {"big", "big_last_error"}
    source = """
        #include <dirent.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include "big.h"
        static int threads(void) {
          int n = 0;
          DIR *d = opendir("/proc/self/task");
          for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
          closedir(d);
          return n;
        }
        int main(void) {
          static float a[BIG_X_SIZE] = A_VALUES, b[BIG_Y_SIZE] = B_VALUES, c[BIG_OUT0_SIZE];
          int before = threads();
          int rc = big(a, b, c);
          printf("%d %d\\n", rc, threads() > before);
          for (int i = 0; i < BIG_OUT0_SIZE; ++i) printf("%.9g ", c[i]);
          printf("\\n");
          return 0;
        }
    """.replace("A_VALUES", c_array(a)).replace("B_VALUES", c_array(b))
    rc, out = build_and_run(str(tmp_path), lib, source)
    lines = out.splitlines()
    assert rc == 0 and lines[0] == "0 1", lines[0]
    np.testing.assert_allclose(numbers(lines[1]).reshape(384, 256), a @ b, rtol=1e-4, atol=1e-3)
