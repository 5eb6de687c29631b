"""Every GPU kernel kind compiles to a fatbin for sm_90 and sm_80 (pipeline tfn-gpu-nvvm via passes/gpu.py), and
its PTX is accepted by ptxas. Skips only where ptxas (the CUDA toolkit) is absent."""
import re
import shutil
import subprocess

import numpy as np
import pytest
from mlir import ir
from mlir.dialects.llvm import translate_module_to_llvmir

import tfn
from tfn.dialects import context
from tfn.passes import gpu, registry

PTXAS = shutil.which("ptxas")
pytestmark = pytest.mark.skipif(PTXAS is None, reason="ptxas (CUDA toolkit) not installed")

KERNELS = {
    "elementwise": (lambda x, y: tfn.tanh(x * y) + x - 1.0, [(37, 300), (37, 300)]),
    "row_reduction": (lambda x: tfn.reduce_sum(x, axis=1), [(37, 300)]),
    "full_reduction": (lambda x: tfn.reduce_max(x), [(7, 1001)]),
    "column_reduction": (lambda x: tfn.reduce_sum(x, axis=0), [(37, 300)]),
    "matmul": (lambda a, b: tfn.matmul(a, b), [(37, 50), (50, 29)]),
    "random": (lambda x: tfn.nn.dropout(x, 0.5, seed=1), [(37, 300)]),  # Philox: 32 x 32 -> 64-bit products
    # tfn-gpu-generalize + the 'loop' kernels: a padded convolution, an argmax, a scan's inserted slices
    "conv2d": (lambda x, w: tfn.nn.conv2d(x, w, 1, "SAME"), [(2, 9, 9, 3), (3, 3, 3, 5)]),
    "argmax": (lambda x: tfn.cast(tfn.argmax(x, axis=1), tfn.float32), [(37, 300)]),
    "cumsum": (lambda x: tfn.math.cumsum(x, axis=1), [(7, 10)]),
    # its labels' range check: a kernel writing no tensor
    "sparse_xent": (lambda x: tfn.nn.sparse_softmax_cross_entropy_with_logits(
        tfn.cast(tfn.abs(x[:, 0]), tfn.int32), x), [(37, 10)]),
}


def _linalg_text(name):
    fn, shapes = KERNELS[name]
    return tfn.function(fn).get_concrete_function(*[tfn.TensorSpec(s, tfn.float32) for s in shapes]).ir("tfn")


def _lower(name, pipeline):
    with context.new_context():
        module = ir.Module.parse(_linalg_text(name))
        registry.run(pipeline, module.operation)
        return str(module)


def _unescape(s):
    return re.sub(r'\\([0-9A-Fa-f]{2}|\\|")', lambda m: m.group(1) if m.group(1) in ("\\", '"') else
                  chr(int(m.group(1), 16)), s).encode("latin1")


@pytest.mark.parametrize("chip", ["sm_90", "sm_80"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_fatbin_is_built(name, chip):
    text = _lower(name, gpu.pipeline_for("nvvm", chip=chip))
    objects = re.findall(r'#gpu\.object<#nvvm\.target<[^>]*chip = "(\w+)"[^>]*>, properties = \{[^}]*\}, '
                         r'(?:(\w+) = )?"((?:[^"\\]|\\.)*)">', text)
    assert objects and all(found == chip for found, _, _ in objects)
    for _, _, blob in objects:
        assert _unescape(blob)[:4] == b"\x50\xed\x55\xba"  # the fatbin magic number
    assert "gpu.launch_func" in text and "llvm.call @mgpuMemAlloc" in text and "llvm.call @mgpuMemcpy" in text


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_ptx_is_accepted_by_ptxas(name, tmp_path):
    mapped = gpu.pipeline_for("mapped")
    isa = ("gpu-kernel-outlining, func.func(gpu-async-region), gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 "
           "cubin-features=+ptx80 cubin-format=isa opt-level=3}")
    text = _lower(name, mapped + ", " + isa)
    ptxs = [_unescape(b).decode() for b in re.findall(r'#gpu\.object<#nvvm\.target<[^>]*>, properties = '
                                                      r'\{[^}]*\}, (?:\w+ = )?"((?:[^"\\]|\\.)*)">', text)]
    assert ptxs
    for i, ptx in enumerate(ptxs):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(ptx)
        done = subprocess.run([PTXAS, "-arch=sm_90", str(path), "-o", str(tmp_path / f"k{i}.cubin")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    every = "".join(ptxs)
    if name in ("row_reduction", "full_reduction"):  # warp shuffles, then the warps' partials in shared memory
        assert "shfl.sync.bfly" in every and "bar.sync" in every and ".shared" in every
    if name == "matmul":  # A and B tiles in shared memory between two barriers
        assert "bar.sync" in every and ".shared" in every
    assert np.all([".entry" in p for p in ptxs])


def test_host_code_translates_to_llvm_ir_calling_the_cuda_runtime_wrappers():
    """What the runtime builds: LLVM IR whose function loads the embedded fatbins and launches them through
    libmlir_cuda_runtime.so's mgpu* functions (the ABI passes/tfn_gpu_device_buffers.py documents)."""
    fn = lambda a, b: tfn.reduce_sum(tfn.tanh(tfn.matmul(a, b)), axis=1)  # noqa: E731
    text = tfn.function(fn).get_concrete_function(tfn.TensorSpec([37, 50], tfn.float32),
                                                  tfn.TensorSpec([50, 29], tfn.float32)).ir("tfn")
    with context.new_context():
        module = ir.Module.parse(text)
        registry.run(gpu.pipeline_for("nvvm"), module.operation)
        llvm_ir = str(translate_module_to_llvmir(module.operation))
    called = set(re.findall(r"call \S+ @(mgpu\w+)\(", llvm_ir))
    assert {"mgpuStreamCreate", "mgpuMemAlloc", "mgpuMemcpy", "mgpuModuleLoad", "mgpuModuleGetFunction",
            "mgpuLaunchKernel", "mgpuMemFree", "mgpuStreamSynchronize", "mgpuStreamDestroy"} <= called
    binaries = re.findall(r'_binary = internal constant \[(\d+) x i8\] c"P\\EDU\\BA', llvm_ir)
    assert len(binaries) == 5 and all(int(n) > 1000 for n in binaries)  # fill, matmul, tanh, fill, row sum
