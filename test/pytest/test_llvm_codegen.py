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
    write = llvm_codegen.write_objects
    monkeypatch.setattr(llvm_codegen, "write_objects", lambda *a: calls.append(a) or write(*a))
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


# Two products big enough for tfn-pack-matmul, of different shapes: their register tiles are calls of one outlined
# function (passes/tfn_outline_micro_kernels.py), marked inlinehint. (LLVM's inliner would inline a function called
# once anyway.)
_MATMULS = """
func.func @mm(%a: tensor<96x64xf32>, %b: tensor<64x128xf32>, %c: tensor<64x96xf32>, %d: tensor<96x256xf32>)
    -> (tensor<96x128xf32>, tensor<64x256xf32>) attributes {llvm.emit_c_interface} {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<96x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<96x128xf32>) -> tensor<96x128xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x128xf32>) outs(%1 : tensor<96x128xf32>)
    -> tensor<96x128xf32>
  %3 = tensor.empty() : tensor<64x256xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %5 = linalg.matmul ins(%c, %d : tensor<64x96xf32>, tensor<96x256xf32>) outs(%4 : tensor<64x256xf32>)
    -> tensor<64x256xf32>
  return %2, %5 : tensor<96x128xf32>, tensor<64x256xf32>
}
"""


def test_outlined_register_tiles_are_inlined_at_o3_only(tmp_path):
    from tfn.passes import registry

    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(_MATMULS)
        registry.run("builtin.module(tfn-bufferize, tfn-lower-to-llvm)", module.operation)
        text = str(module)
        assert text.count("llvm.call @__tfn_micro_kernel_0(") == 2 and "__tfn_micro_kernel_1" not in text
        for level in (0, 3):
            llvm_codegen.write_object(module, str(tmp_path / f"o{level}.o"), level)
    # O0's pipeline inlines only alwaysinline functions: the kernel is generated once, a local symbol; at O3
    # the inlinehint function is made alwaysinline, so no copy of it is left
    assert b"__tfn_micro_kernel_0" in (tmp_path / "o0.o").read_bytes()
    assert b"__tfn_micro_kernel_0" not in (tmp_path / "o3.o").read_bytes()


def _hinted_module(steps=150):
    """@_mlir_ciface_three(x) = mix(x, 3) + mix(x, 5) + mix(x, 7), with mix an internal inlinehint function too big
    for LLVM's inliner to copy into three callers by its own measure."""
    body = ["%v0 = llvm.add %x, %k : i64"]
    for i in range(steps):
        body += [f"%m{i} = llvm.mul %v{i}, %k : i64", f"%v{i + 1} = llvm.xor %m{i}, %x : i64"]
    calls = [f"%c{k} = llvm.mlir.constant({k} : i64) : i64\n    %r{k} = llvm.call @mix(%x, %c{k}) : (i64, i64) -> i64"
             for k in (3, 5, 7)]
    return f"""
module {{
  llvm.func internal @mix(%x: i64, %k: i64) -> i64 attributes {{passthrough = ["inlinehint"]}} {{
    {chr(10).join(body)}
    llvm.return %v{steps} : i64
  }}
  llvm.func @_mlir_ciface_three(%x: i64) -> i64 {{
    {chr(10).join(calls)}
    %s = llvm.add %r3, %r5 : i64
    %t = llvm.add %s, %r7 : i64
    llvm.return %t : i64
  }}
}}
"""


def test_inlinehint_functions_are_always_inlined_at_o3(tmp_path):
    def mix(x, k):
        v = (x + k) % 2 ** 64
        for _ in range(150):
            v = ((v * k) % 2 ** 64) ^ x
        return v

    expected = ctypes.c_int64((mix(12345, 3) + mix(12345, 5) + mix(12345, 7)) % 2 ** 64).value
    for level in (0, 3):
        with new_context() as ctx, ir.Location.unknown(ctx):
            module = ir.Module.parse(_hinted_module())
            llvm_codegen.write_object(module, str(tmp_path / f"o{level}.o"), level)
            assert _packed(_build(_hinted_module(), level), "_mlir_ciface_three", ctypes.c_int64(12345)) == expected
    assert b"mix" in (tmp_path / "o0.o").read_bytes()
    assert b"mix" not in (tmp_path / "o3.o").read_bytes()


# Two functions sharing an internal helper, an internal global (a call counter) and the thread-local counter:
# split, the step function and the rest go to two objects that must still share one helper, one counter.
_SPLIT_MODULE = """
module {
  llvm.mlir.global external thread_local @counter(0 : i64) {addr_space = 0 : i32} : i64
  llvm.mlir.global internal @calls(0 : i64) {addr_space = 0 : i32} : i64
  llvm.func internal @twice(%x: i64) -> i64 {
    %c = llvm.mlir.addressof @calls : !llvm.ptr
    %n = llvm.load %c : !llvm.ptr -> i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %n1 = llvm.add %n, %one : i64
    llvm.store %n1, %c : i64, !llvm.ptr
    %y = llvm.add %x, %x : i64
    llvm.return %y : i64
  }
  llvm.func @tfn_test_step(%x: i64) -> i64 {
    %a = llvm.mlir.addressof @counter : !llvm.ptr
    %v = llvm.load %a : !llvm.ptr -> i64
    %t = llvm.call @twice(%x) : (i64) -> i64
    %s = llvm.add %v, %t : i64
    llvm.store %s, %a : i64, !llvm.ptr
    llvm.return %s : i64
  }
  llvm.func @_mlir_ciface_bump(%x: i64) -> i64 {
    %s = llvm.call @tfn_test_step(%x) : (i64) -> i64
    %t = llvm.call @twice(%s) : (i64) -> i64
    llvm.return %t : i64
  }
  llvm.func @_mlir_ciface_calls() -> i64 {
    %c = llvm.mlir.addressof @calls : !llvm.ptr
    %n = llvm.load %c : !llvm.ptr -> i64
    llvm.return %n : i64
  }
}
"""


def test_big_modules_are_split_for_o0_code_generation_on_two_threads(monkeypatch):
    monkeypatch.setattr(llvm_codegen, "_idle_core", lambda: True)  # whatever the machine's load
    monkeypatch.setattr(llvm_codegen, "SPLIT_MIN_BLOCKS", 0)  # any module with two functions or more
    monkeypatch.setattr(llvm_codegen, "SPLIT_LARGEST", 1.0)
    written = []
    write = llvm_codegen.write_objects
    monkeypatch.setattr(llvm_codegen, "write_objects", lambda *a: written.append(write(*a)) or written[-1])
    lib = _build(_SPLIT_MODULE)
    assert len(written[0]) == 2  # the largest function apart from the others
    assert _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(3)) == 12  # counter 6, then doubled
    assert _packed(lib, "_mlir_ciface_bump", ctypes.c_int64(1)) == 16  # counter 6 + 2
    assert _packed(lib, "_mlir_ciface_calls") == 4  # one counter of calls, whichever part called the helper
    assert not hasattr(lib, "twice") and not hasattr(lib, "calls")  # what was internal is hidden
    _build(_SPLIT_MODULE, 3)
    assert len(written[1]) == 1  # O3: one object


def test_split_o0_code_gives_the_same_results(monkeypatch):
    monkeypatch.setattr(llvm_codegen, "_idle_core", lambda: True)
    monkeypatch.setattr(llvm_codegen, "SPLIT_MIN_BLOCKS", 0)
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((96, 70), dtype=np.float32), rng.standard_normal((70, 130), dtype=np.float32)

    def f(a, b):
        return tfn.reduce_sum(tfn.nn.softmax(tfn.nn.relu(tfn.matmul(a, b)) * 0.3), axis=0)
    out = {}
    for level, split_largest in ((0, 1.0), (0, 0.0), (3, 1.0)):
        monkeypatch.setattr(llvm_codegen, "SPLIT_LARGEST", split_largest)
        monkeypatch.setattr(compiler, "opt_level", lambda func, level=level: level)
        out[level, split_largest] = tfn.function(f)(tfn.constant(x), tfn.constant(w)).numpy()
    np.testing.assert_array_equal(out[0, 1.0], out[0, 0.0])
    np.testing.assert_array_equal(out[0, 1.0], out[3, 1.0])
