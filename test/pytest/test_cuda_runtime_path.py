"""The CUDA runtime path on any machine: GPU functions compiled by the NVVM pipeline (fatbin included), linked and
called exactly as on a GPU, against a stand-in for MLIR's CUDA runtime wrappers whose `mgpu*` functions keep
"device" memory in host memory (malloc / memcpy) and count kernel launches without running them.

This checks the host side the runtime owns — linking, the calling convention over device-memory descriptors,
results kept as device buffers, counted copies, device memory freed — not the kernels (test_gpu_execution.py
runs those where a GPU is visible; test_devices_emulated.py emulates them)."""
import ctypes
import gc
import subprocess

import numpy as np
import pytest

import tfn
from tfn.runtime import cuda_driver, devices, toolchain

STUB = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
int stub_launches, stub_allocs, stub_frees;
void *mgpuStreamCreate(void) { return (void *)1; }
void mgpuStreamSynchronize(void *s) {}
void mgpuStreamDestroy(void *s) {}
void *mgpuEventCreate(void) { return (void *)1; }
void mgpuEventDestroy(void *e) {}
void mgpuEventSynchronize(void *e) {}
void mgpuEventRecord(void *e, void *s) {}
void mgpuStreamWaitEvent(void *s, void *e) {}
void *mgpuMemAlloc(uint64_t n, void *s, _Bool host_shared) { stub_allocs++; return malloc(n ? n : 1); }
void mgpuMemFree(void *p, void *s) { stub_frees++; free(p); }
void mgpuMemcpy(void *dst, void *src, size_t n, void *s) { memcpy(dst, src, n); }
void *mgpuModuleLoad(void *data, size_t size) { return (void *)1; }
void *mgpuModuleLoadJIT(void *data, int opt) { return (void *)1; }
void mgpuModuleUnload(void *m) {}
void *mgpuModuleGetFunction(void *m, const char *name) { return (void *)1; }
void mgpuLaunchKernel(void *f, intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx, intptr_t by, intptr_t bz,
                      int32_t smem, void *s, void **params, void **extra, size_t n) { stub_launches++; }
void mgpuSetDefaultDevice(int32_t d) {}
"""


@pytest.fixture
def stub(tmp_path, monkeypatch):
    src, so = tmp_path / "mgpu_stub.c", tmp_path / "libmgpu_stub.so"
    src.write_text(STUB)
    subprocess.run([toolchain.linker(), "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    fake = cuda_driver.Cuda(str(so), driver=None)
    monkeypatch.setattr(cuda_driver, "runtime", lambda: fake)
    monkeypatch.setattr(cuda_driver, "probe", lambda driver=None: cuda_driver.DriverState(
        (cuda_driver.Gpu(0, "stand-in GPU", (9, 0)),)))
    devices.set_gpu_emulation(False)
    tfn.config.experimental.reset_device_copy_stats()
    yield fake
    devices.set_gpu_emulation(None)


def _counter(fake, name):
    return ctypes.c_int.in_dll(fake.lib, name).value


def test_gpu_functions_run_through_the_cuda_runtime_wrappers(stub):
    gpus = tfn.config.list_physical_devices("GPU")
    assert [g.name for g in gpus] == ["/physical_device:GPU:0"]
    assert tfn.config.experimental.get_device_details("GPU:0") == {"device_name": "stand-in GPU",
                                                                    "compute_capability": (9, 0)}
    f = tfn.function(lambda x: (x, tfn.reduce_sum(x * 2.0 + 1.0, axis=1)), jit_device="GPU:0")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = tfn.config.experimental.get_memory_info("GPU:0")["current"]
    same, sums = f(x)
    assert _counter(stub, "stub_launches") >= 1  # the kernels were launched through mgpuLaunchKernel
    assert isinstance(same._buffer, devices.CudaBuffer) and same.device.endswith("device:GPU:0")
    assert sums.shape == (3,) and not sums.on_host
    s = tfn.config.experimental.get_device_copy_stats()
    assert (s["host_to_device"], s["device_to_host"]) == (1, 0)
    # The argument returned is a device buffer of its own, copied on the device: its value made the round trip.
    assert same._buffer.ptr != sums._buffer.ptr
    np.testing.assert_array_equal(same.numpy(), x)
    assert tfn.config.experimental.get_device_copy_stats()["device_to_host"] == 1
    assert tfn.config.experimental.get_memory_info("GPU:0")["current"] == before + 48 + 12
    frees = _counter(stub, "stub_frees")
    del same, sums
    gc.collect()
    assert tfn.config.experimental.get_memory_info("GPU:0")["current"] == before
    assert _counter(stub, "stub_frees") == frees + 2  # both results' device memory went back (mgpuMemFree)


def test_device_tensors_are_passed_to_the_next_gpu_function_without_copies(stub):
    f = tfn.function(lambda x: x * 3.0)
    with tfn.device("/GPU:0"):
        a = f(tfn.constant([1.0, 2.0]))
        b = f(a)
        c = tfn.identity(b)
    assert c._buffer is b._buffer
    s = tfn.config.experimental.get_device_copy_stats()
    assert (s["host_to_device"], s["device_to_host"]) == (1, 0)
