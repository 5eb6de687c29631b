"""Code generation through LLVM's C API (runtime/llvm_codegen.py): objects with the engine's packed wrappers,
thread-local variables per thread, the engine where the C API cannot be used, errors as CompileError, and the same
results at O0 and O3."""
import ctypes
import threading

import numpy as np
import pytest
from mlir import ir

import tfn
from tfn.dialects.context import new_context
from tfn.dialects.errors import CompileError
from tfn.runtime import compiler, llvm_codegen

pytestmark = pytest.mark.skipif(not llvm_codegen.available(), reason="LLVM's C API has no target for this CPU")

# bump(x): adds x to this thread's counter and returns it; its C interface returns the value (a packed wrapper then
# stores it after the arguments), reset() returns nothing.
_MODULE = """
module {
  llvm.mlir.global external thread_local @counter(0 : i64) {addr_space = 0 : i32} : i64
  llvm.func @_mlir_ciface_bump(%x: i64, %scale: f64) -> i64 {
    %a = llvm.mlir.addressof @counter : !llvm.ptr
    %v = llvm.load %a : !llvm.ptr -> i64
    %f = llvm.fptosi %scale : f64 to i64
    %m = llvm.mul %x, %f : i64
    %s = llvm.add %v, %m : i64
    llvm.store %s, %a : i64, !llvm.ptr
    llvm.return %s : i64
  }
  llvm.func @_mlir_ciface_reset() {
    %a = llvm.mlir.addressof @counter : !llvm.ptr
    %z = llvm.mlir.constant(0 : i64) : i64
    llvm.store %z, %a : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @helper() {
    llvm.return
  }
}
"""


def _build(text, level=0):
    with new_context() as ctx, ir.Location.unknown(ctx):
        so, work = compiler.build_shared_object(ir.Module.parse(text), level)
    return ctypes.CDLL(so)


def _packed(lib, name, *args):
    """Call the packed wrapper `_mlir_<name>(void **)` with `args` (ctypes values) and an int64 result slot."""
    result = ctypes.c_int64(-1)
    slots = (ctypes.c_void_p * (len(args) + 1))(*[ctypes.addressof(a) for a in args], ctypes.addressof(result))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(ctypes.cast(getattr(lib, "_mlir_" + name), ctypes.c_void_p).value)
    fn(slots)
    return result.value


def test_o0_objects_have_packed_wrappers_of_the_c_interfaces_and_per_thread_tls():
    lib = _build(_MODULE)
    assert not hasattr(lib, "_mlir_helper")  # only C interfaces get one: the trampoline calls nothing else
    assert _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(3), ctypes.c_double(2.0)) == 6
    assert _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(1), ctypes.c_double(1.0)) == 7
    seen = []
    thread = threading.Thread(target=lambda: seen.append(
        _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(5), ctypes.c_double(1.0))))
    thread.start()
    thread.join()
    assert seen == [5]  # the other thread's counter started at 0
    assert _packed(lib, "_mlir_ciface_reset") == -1  # no result: the slot after the arguments is left alone
    assert _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(2), ctypes.c_double(1.0)) == 2


@pytest.mark.parametrize("level", [0, 3])
def test_code_is_built_through_the_c_api_and_by_the_engine_where_it_cannot(monkeypatch, level):
    calls = []
    write = llvm_codegen.write_object
    monkeypatch.setattr(llvm_codegen, "write_object", lambda *a: calls.append(a) or write(*a))
    lib = _build(_MODULE, level)
    assert [a[2] for a in calls] == [level]
    monkeypatch.setattr(llvm_codegen, "available", lambda: False)
    engine_lib = _build(_MODULE, level)
    assert len(calls) == 1
    for built in (lib, engine_lib):
        assert _packed(built, "_mlir_ciface_bump", ctypes.c_int64(3), ctypes.c_double(2.0)) == 6


def test_a_module_that_does_not_translate_is_a_compile_error():
    with pytest.raises(CompileError, match="does not translate to LLVM IR"):
        _build("module { func.func @f() { return } }")


def test_o0_and_o3_code_give_the_same_results(monkeypatch):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((37, 70), dtype=np.float32), rng.standard_normal((70, 29), dtype=np.float32)

    def f(a, b):
        return tfn.reduce_sum(tfn.nn.softmax(tfn.nn.relu(tfn.matmul(a, b)) * 0.3), axis=0)
    out = {}
    for level in (0, 3):
        monkeypatch.setattr(compiler, "opt_level", lambda func, level=level: level)
        out[level] = tfn.function(f)(tfn.constant(x), tfn.constant(w)).numpy()
    np.testing.assert_array_equal(out[0], out[3])
