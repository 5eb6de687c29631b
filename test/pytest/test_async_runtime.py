"""tfn's async runtime (runtime/_async_runtime.c, loaded by runtime/async_runtime.py): parallel kernels bind to it,
not to MLIR's libmlir_async_runtime.so; it behaves as MLIR's does (tokens, values, groups, errors); its pool threads
sleep when idle; TFN_ASYNC_RUNTIME=mlir still runs MLIR's, with the same results."""
import os
import subprocess
import sys
import textwrap

import pytest

_MATMUL = """
import numpy as np, tfn
rng = np.random.default_rng(3)
a, b = rng.standard_normal((384, 301)).astype(np.float32), rng.standard_normal((301, 515)).astype(np.float32)
x = rng.standard_normal(1_000_003).astype(np.float32)
f = tfn.function(lambda a, b, x: (tfn.matmul(a, b), tfn.tanh(x * 3.0) + x))
got = [t.numpy() for t in f(a, b, x)]
assert np.allclose(got[0], a @ b, atol=1e-3) and np.allclose(got[1], np.tanh(x * 3.0) + x, atol=1e-5)
"""


def _run(code, **env):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_parallel_kernels_bind_tfns_runtime_and_a_new_process_loads_no_llvm(tmp_path):
    """The runtime's functions in the process's global scope come from tfn's library (built into the cache by the
    first process); no process maps libmlir_async_runtime.so, and the second, which finds the function in the cache,
    maps no libLLVM either. LLVM's symbols stay out of the global scope (MLIR's runtime, loaded there, brought
    libLLVM with it: a TensorFlow imported afterwards aborts, test_compile_driver.py)."""
    code = _MATMUL + """
import ctypes
from tfn.runtime import async_runtime
def address(lib, name):
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
ours = async_runtime.load()
print(async_runtime.loaded(), all(address(ctypes.CDLL(None), n) == address(ours, n) for n in
      ("mlirAsyncRuntimeExecute", "mlirAsyncRuntimeAwaitAllInGroup", "mlirAsyncRuntimeCreateGroup")))
maps = open("/proc/self/maps").read()
print("mlir runtime mapped:", "libmlir_async_runtime" in maps)
print("libLLVM mapped:", "libLLVM" in maps)
print("pool threads:", ours.tfn_async_started_threads() >= 1)
print("LLVM in the global scope:", hasattr(ctypes.CDLL(None), "LLVMContextCreate"))
"""
    env = {"TFN_CACHE_DIR": str(tmp_path)}
    first = _run(code, **env)
    assert first[0] == "tfn True", first
    assert first[1] == "mlir runtime mapped: False" and first[3:] == ["pool threads: True",
                                                                       "LLVM in the global scope: False"], first
    second = _run(code, **env)
    assert second == ["tfn True", "mlir runtime mapped: False", "libLLVM mapped: False", "pool threads: True",
                      "LLVM in the global scope: False"]


_CONFORMANCE = """
import ctypes, threading
from tfn.runtime import async_runtime
lib = async_runtime.load()
P, I64, B = ctypes.c_void_p, ctypes.c_int64, ctypes.c_bool
RESUME = ctypes.CFUNCTYPE(None, P)
for name, restype, argtypes in [
        ("AddRef", None, [P, I64]), ("DropRef", None, [P, I64]), ("CreateToken", P, []), ("CreateValue", P, [I64]),
        ("CreateGroup", P, [I64]), ("AddTokenToGroup", I64, [P, P]), ("EmplaceToken", None, [P]),
        ("EmplaceValue", None, [P]), ("SetTokenError", None, [P]), ("SetValueError", None, [P]),
        ("IsTokenError", B, [P]), ("IsValueError", B, [P]), ("IsGroupError", B, [P]), ("AwaitToken", None, [P]),
        ("AwaitValue", None, [P]), ("AwaitAllInGroup", None, [P]), ("GetValueStorage", P, [P]),
        ("Execute", None, [P, RESUME]), ("AwaitTokenAndExecute", None, [P, P, RESUME]),
        ("AwaitValueAndExecute", None, [P, P, RESUME]), ("AwaitAllInGroupAndExecute", None, [P, P, RESUME])]:
    fn = getattr(lib, "mlirAsyncRuntime" + name)
    fn.restype, fn.argtypes = restype, argtypes
    globals()[name] = fn
actions, log, handles = {}, [], iter(range(1000, 2000))

@RESUME
def resume(handle):
    actions.pop(handle)()

def later(fn):  # a handle for the resume function
    handle = next(handles)
    actions[handle] = fn
    return handle

# tasks on the pool: one emplaces its token, one sets its token in error; the group counts the error
ok, bad, group = CreateToken(), CreateToken(), CreateGroup(2)
print("ranks", AddTokenToGroup(ok, group), AddTokenToGroup(bad, group))
Execute(later(lambda: EmplaceToken(ok)), resume)
Execute(later(lambda: SetTokenError(bad)), resume)
AwaitAllInGroup(group)
AwaitToken(ok)
AwaitToken(bad)
print("errors", IsGroupError(group), IsTokenError(ok), IsTokenError(bad))
for o in (ok, bad, group):
    DropRef(o, 1)

# a task runs on a pool thread (a blocking await may run a queued task itself: not used here)
done = threading.Event()
Execute(later(lambda: (log.append(threading.current_thread() is not threading.main_thread()), done.set())), resume)
print("on a pool thread", done.wait(60) and log[0])

# a value: its payload written before it is emplaced, read after the await
value, failed = CreateValue(8), CreateValue(8)
ctypes.c_int64.from_address(GetValueStorage(value)).value = 42
Execute(later(lambda: EmplaceValue(value)), resume)
AwaitValue(value)
SetValueError(failed)
print("value", ctypes.c_int64.from_address(GetValueStorage(value)).value, IsValueError(value), IsValueError(failed))
DropRef(value, 1)
DropRef(failed, 1)

# awaiters: run when the object becomes ready (in the order added), at once when it is ready already
token, group, order = CreateToken(), CreateGroup(1), []
AwaitTokenAndExecute(token, later(lambda: order.append("token 1")), resume)
AwaitTokenAndExecute(token, later(lambda: order.append("token 2")), resume)
AddTokenToGroup(token, group)
AwaitAllInGroupAndExecute(group, later(lambda: order.append("group")), resume)
order.append("before")
EmplaceToken(token)
AwaitTokenAndExecute(token, later(lambda: order.append("ready token")), resume)
AwaitAllInGroupAndExecute(group, later(lambda: order.append("ready group")), resume)
print("order", order)
DropRef(token, 1)
DropRef(group, 1)

# a token in error added to a group afterwards still counts as an error; an empty group is ready
token, group, empty = CreateToken(), CreateGroup(1), CreateGroup(0)
SetTokenError(token)
AddTokenToGroup(token, group)
AwaitAllInGroup(group)
AwaitAllInGroup(empty)
print("late error", IsGroupError(group), IsGroupError(empty))
for o in (token, group, empty):
    DropRef(o, 1)
if async_runtime.loaded() == "tfn":
    print("live objects", lib.tfn_async_live_objects())
"""


@pytest.mark.parametrize("runtime", ["tfn"])
def test_runtime_semantics_match_mlirs(runtime):
    """A program of tokens, values, groups, errors and awaiters prints what it printed on MLIR's runtime when this
    test was written; tfn's frees every object once its references are dropped. (Not run on MLIR's runtime here: in
    a loaded full test run its blocking AwaitAllInGroup once never returned, past the 300 s timeout.)"""
    lines = _run(_CONFORMANCE, TFN_ASYNC_RUNTIME=runtime)
    assert lines[:6] == ["ranks 0 1", "errors True False True", "on a pool thread True", "value 42 False True",
                         "order ['before', 'token 1', 'token 2', 'group', 'ready token', 'ready group']",
                         "late error True False"], lines
    assert lines[6:] == (["live objects 0"] if runtime == "tfn" else []), lines


def test_both_runtimes_give_the_same_bits():
    """Parallel kernels (a matmul cut into row blocks, an elementwise chain of odd length) give bit-identical
    results on tfn's runtime and on MLIR's (TFN_ASYNC_RUNTIME=mlir, which the process then loads)."""
    code = _MATMUL + """
import hashlib
from tfn.runtime import async_runtime
print(async_runtime.loaded(), hashlib.sha256(got[0].tobytes() + got[1].tobytes()).hexdigest())
"""
    ours, mlirs = _run(code), _run(code, TFN_ASYNC_RUNTIME="mlir")
    assert ours[0].split()[0] == "tfn" and mlirs[0].split()[0] == "mlir"
    assert ours[0].split()[1] == mlirs[0].split()[1]


def test_idle_pool_threads_sleep():
    """After a run of parallel calls the pool threads spin for at most TFN_ASYNC_SPIN_US (here 2 ms), then sleep:
    the process uses little CPU time over an idle 0.3 s (a thread spinning throughout would use about all of it)."""
    code = _MATMUL + """
import time
from tfn.runtime import async_runtime
for _ in range(50):
    f(a, b, x)
assert async_runtime.load().tfn_async_started_threads() >= 1
before = time.process_time()
time.sleep(0.3)
print(round(time.process_time() - before, 3))
"""
    # (OpenBLAS's threads, woken by the check's `a @ b`, spin for a while too: one thread, as on a 2-core machine)
    cpu = float(_run(code, TFN_ASYNC_SPIN_US="2000", OPENBLAS_NUM_THREADS="1")[0])
    assert cpu < 0.1, cpu


def test_a_forked_child_starts_its_own_pool_threads():
    """A child forked after parallel calls has none of its parent's threads: its first parallel call starts them
    again (tasks would else wait for the caller alone) and its results are right."""
    code = _MATMUL + """
import os
from tfn.runtime import async_runtime
pid = os.fork()
if pid == 0:
    lib = async_runtime.load()
    before = lib.tfn_async_started_threads()
    again = [t.numpy() for t in f(a, b, x)]
    right = np.array_equal(again[0], got[0]) and np.array_equal(again[1], got[1])
    os._exit(0 if before == 0 and lib.tfn_async_started_threads() >= 1 and right else 1)
print(os.waitpid(pid, 0)[1])
"""
    assert _run(code) == ["0"]
