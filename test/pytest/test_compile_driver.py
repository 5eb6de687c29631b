"""The compile driver: reused pass managers, the direct linker command, and the opt level of tiny functions."""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from test_completeness import SAMPLES

import tfn
from tfn import runtime
from tfn.dialects import context
from tfn.dialects.types import TensorType
from tfn.passes import registry
from tfn.runtime import cache, compiler, toolchain

_FUNC = "module { func.func @f(%a: i32) -> i32 { %0 = arith.addi %a, %a : i32 return %0 : i32 } }"


def test_the_shared_context_reuses_pass_managers():
    with context.shared_context(), ir.Location.unknown():
        registry.run("canonicalize,cse", ir.Module.parse(_FUNC).operation)
        (pm,) = registry._idle[("canonicalize,cse", registry.verify_each_pass())]
        module = ir.Module.parse("module { func.func @g() -> i32 { %c = arith.constant 1 : i32 "
                                 "%0 = arith.addi %c, %c : i32 return %0 : i32 } }")
        registry.run("canonicalize,cse", module.operation)
        assert registry._idle[("canonicalize,cse", registry.verify_each_pass())] == [pm]
        assert "arith.constant 2" in str(module) and "arith.addi" not in str(module)  # it ran on the new module


def test_a_failed_run_does_not_return_its_pass_manager():
    bad = ("module { func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> { "
           "%0 = \"tfn.add\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32> return %0 : tensor<3xf32> } }")
    with context.shared_context(), ir.Location.unknown():
        with pytest.raises(ir.MLIRError, match="operands give tensor<2xf32>"):
            registry.run("tfn-verify,canonicalize", ir.Module.parse(bad).operation)
        assert registry._idle[("tfn-verify,canonicalize", registry.verify_each_pass())] == []
        registry.run("tfn-verify,canonicalize", ir.Module.parse(_FUNC).operation)
        assert len(registry._idle[("tfn-verify,canonicalize", registry.verify_each_pass())]) == 1


def test_without_verifying_each_pass_invalid_ir_after_the_pipeline_is_an_error(monkeypatch):
    monkeypatch.setenv(registry.VERIFY_EACH_PASS, "0")
    with context.shared_context(), ir.Location.unknown():
        module = ir.Module.parse("module { func.func @f(%a: i32) -> i32 { return %a : i32 } }")
        fn = module.body.operations[0]
        ret = fn.regions[0].blocks[0].operations[0]
        with ir.InsertionPoint(ret):  # a return of no value from a function returning i32
            ir.Operation.create("func.return", operands=[])
        ret.erase()
        with pytest.raises(ir.MLIRError, match="has 0 operands, but enclosing function"):
            registry.run("cse", module.operation)


def test_another_context_gets_a_new_pass_manager_each_run():
    before = {k: list(v) for k, v in registry._idle.items()}
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(_FUNC)
        registry.run("canonicalize", module.operation)
    assert registry._idle == before


def test_tensor_types_belong_to_the_current_context():
    with context.shared_context():
        shared = TensorType((2, 3), tfn.float32).to_mlir()
        assert TensorType((2, 3), tfn.float32).to_mlir() is shared  # made once in the shared context
        assert str(TensorType((2, None), tfn.int8).to_mlir()) == "tensor<2x?xi8>"
    with ir.Context() as other:
        mine = TensorType((2, 3), tfn.float32).to_mlir()
        assert mine.context is other and str(mine) == str(shared)


_LIBS = [toolchain.C_RUNNER_UTILS]


def _object_file(tmp_path):
    """An object file of a compiled function, as build_shared_object makes it, and the function's C name."""
    f = tfn.function(lambda x: tfn.tanh(x) * 2.0)
    concrete = f.get_concrete_function(tfn.constant([1.0, 2.0]))
    with concrete.graph.ctx:
        module = ir.Module.parse(str(concrete.graph.module))
        registry.run("tfn-pipeline", module.operation)
        engine = ExecutionEngine(module, opt_level=3, shared_libs=[toolchain.C_RUNNER_UTILS],
                                          enable_pic=True)
        obj = str(tmp_path / "f.o")
        engine.dump_to_object_file(obj)
    return obj, "_mlir_ciface_" + concrete.graph.symbol


def test_the_lean_link_needs_neither_the_driver_nor_libc(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "_direct_links", {})
    obj, name = _object_file(tmp_path)
    lean = str(tmp_path / "lean.so")
    argv = toolchain.direct_link_command(lean, obj, _LIBS)
    if argv is None:
        pytest.skip(f"{toolchain.linker()} does not name its linker")
    assert os.path.basename(argv[0]) in ("ld", "ld.bfd", "ld.gold", "ld.lld") and lean in argv and obj in argv
    assert not any(a.startswith("-lc") or "libc.so" in a for a in argv)
    assert compiler.Link(lean, obj, _LIBS).wait() is None
    assert toolchain.direct_link_command(lean, obj, _LIBS) == argv  # it worked: still used
    monkeypatch.setattr(toolchain, "direct_link_command", lambda *a: None)
    driver = str(tmp_path / "driver.so")
    assert compiler.Link(driver, obj, _LIBS).wait() is None
    for path in (lean, driver):  # both load here and export the function
        assert getattr(ctypes.CDLL(path), name)


def test_the_linker_is_remembered_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(toolchain, "_direct_links", {})
    first = toolchain.direct_link_command("/o.so", "/i.o", _LIBS)
    (memo,) = tmp_path.glob("ld-*.memo")
    monkeypatch.setattr(toolchain, "_direct_links", {})
    monkeypatch.setattr(toolchain, "_ask_compiler", lambda *a: pytest.fail("the memo was not used"))
    assert toolchain.direct_link_command("/o.so", "/i.o", _LIBS) == first
    memo.write_text("[\"ld\", \"not absolute\"]")  # a memo that is not two absolute paths is not trusted
    monkeypatch.setattr(toolchain, "_direct_links", {})
    monkeypatch.setattr(toolchain, "_ask_compiler", lambda *a: None)
    assert toolchain.direct_link_command("/o.so", "/i.o", _LIBS) is None


def test_a_failing_lean_link_falls_back_to_the_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path / "cache"))
    obj, name = _object_file(tmp_path)
    monkeypatch.setattr(toolchain, "_direct_links", {toolchain.linker(): (shutil.which("false"), "/no/libgcc.a")})
    so = tmp_path / "f.so"
    assert compiler.Link(str(so), obj, _LIBS).wait() is None
    assert getattr(ctypes.CDLL(str(so)), name)
    assert toolchain.direct_link_command(str(so), obj, _LIBS) is None  # the driver links from now on


def test_a_lean_so_that_does_not_load_is_linked_again_by_the_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "_direct_links", {})
    obj, name = _object_file(tmp_path)
    if toolchain.direct_link_command("/o.so", obj, _LIBS) is None:
        pytest.skip(f"{toolchain.linker()} does not name its linker")
    monkeypatch.setattr(compiler, "_loads", lambda so, keep=True: False)  # as if a symbol did not bind here
    so = tmp_path / "f.so"
    assert compiler.Link(str(so), obj, _LIBS).wait() is None
    assert "libc.so" in subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True).stdout  # driver
    assert toolchain.direct_link_command(str(so), obj, _LIBS) is None


def test_link_errors_are_the_drivers(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    bad = tmp_path / "bad.o"
    bad.write_bytes(b"not an object file")
    error = compiler.Link(str(tmp_path / "bad.so"), str(bad), _LIBS).wait()
    assert error and "bad.o" in error


def test_without_a_compiler_there_is_no_direct_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "false")
    monkeypatch.setattr(toolchain, "_direct_links", {})
    assert toolchain.direct_link_command("/o.so", "/i.o", _LIBS) is None
    monkeypatch.setenv("CC", "no-such-compiler-tfn")
    assert toolchain.direct_link_command("/o.so", "/i.o", _LIBS) is None


def _level(fn, *args):
    concrete = tfn.function(fn).get_concrete_function(*args)
    with concrete.graph.ctx:
        return compiler.opt_level(concrete.graph.func)


def _loop(x):
    for _ in tfn.range(3):
        x = x + 1.0
    return x


def test_tiny_functions_are_compiled_at_O0_the_others_at_O3():
    small = tfn.ones([3, 2])
    assert _level(lambda x, w, b: tfn.tanh(tfn.matmul(x, w) + b), small, tfn.ones([2, 2]), tfn.ones([2])) == 0
    assert _level(lambda a, b: tfn.matmul(a, b), tfn.ones([4, 4]), tfn.ones([4, 4])) == 0
    assert _level(lambda a, b: tfn.matmul(a, b), tfn.ones([8, 8]), tfn.ones([8, 8])) == 3  # 64 x 64 > 1024
    assert _level(lambda x: x + 1.0, tfn.ones([1000])) == 3
    assert _level(lambda x: x + 1.0, tfn.TensorSpec([None], tfn.float32)) == 3  # a dynamic shape
    assert _level(_loop, tfn.ones([2])) == 3  # a loop: its trip count is not in the types

    def many(x):
        for _ in range(1100):
            x = x + 1.0
        return x
    assert _level(many, tfn.constant(1.0)) == 3


def test_the_opt_level_is_part_of_the_cache_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    x = tfn.constant([1.0, 2.0])
    tfn.function(lambda a: a * 3.0)(x)
    monkeypatch.setattr(compiler, "TINY_WORK", -1)
    tfn.function(lambda a: a * 3.0)(x)
    assert len([p for p in tmp_path.glob("*.so") if not p.name.startswith("fastcall-")]) == 2
    assert cache.cache_dir() == str(tmp_path)


def test_the_target_key_is_part_of_the_cache_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TFN_CACHE_DIR", str(tmp_path))
    concrete = tfn.function(lambda a: a * 3.0).get_concrete_function(tfn.TensorSpec([2], tfn.float32))
    g, vector = concrete.graph, TensorType((2,), tfn.float32)
    signature = dict(symbol=g.symbol, in_types=[vector], out_types=[vector])
    for target in ("", "", "avx512f;workers=16"):
        executable = runtime.compile(g.module, runtime.CompileOptions(target_key=target), **signature)
        assert executable([np.array([1.0, 2.0], np.float32)])[0].tolist() == [3.0, 6.0]
    assert len([p for p in tmp_path.glob("*.so") if not p.name.startswith("fastcall-")]) == 2


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_O0_and_O3_code_give_identical_results(name, monkeypatch):
    fn, args = SAMPLES[name]
    tensors = [tfn.constant(a) for a in args]
    results = []
    for level in (0, 3):
        monkeypatch.setattr(compiler, "opt_level", lambda func_op, level=level: level)
        results.append(tfn.function(fn)(*tensors).numpy())
    at_o0, at_o3 = results
    assert at_o0.dtype == at_o3.dtype and at_o0.shape == at_o3.shape
    assert np.array_equal(at_o0, at_o3, equal_nan=at_o0.dtype.kind == "f"), (at_o0, at_o3)


def test_compiling_keeps_llvm_out_of_the_global_symbol_scope(tmp_path):
    """A TensorFlow imported after tfn compiled binds its LLVM calls to any LLVM in the global scope and aborts:
    a function needing no runner utils must not put libLLVM there (in a new process: nothing loaded before)."""
    code = ("import ctypes, tfn\n"
            "f = tfn.function(lambda x: tfn.tanh(x) * 2.0)\n"
            "assert f(tfn.constant([1.0, 2.0])).shape == (2,)\n"
            "print(hasattr(ctypes.CDLL(None), 'LLVMContextCreate'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, TFN_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
