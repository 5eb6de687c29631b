"""Devices and placement as TF's, on any machine: listing, names, tensors' devices, soft and hard placement, the
CUDA driver probe never crashing, a missing driver reported by name."""
import threading

import numpy as np
import pytest

import tfn
from tfn.core import device_scope
from tfn.runtime import cuda_driver, devices

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
NO_GPU = not cuda_driver.probe().gpus


@pytest.fixture(autouse=True)
def _placement_defaults():
    devices.set_gpu_emulation(False)
    yield
    devices.set_gpu_emulation(None)
    tfn.config.set_soft_device_placement(True)


def test_cpu_is_listed_as_tf_lists_it():
    assert repr(tfn.config.list_physical_devices("CPU")) == \
        "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert repr(tfn.config.list_logical_devices("CPU")) == "[LogicalDevice(name='/device:CPU:0', device_type='CPU')]"
    assert tfn.config.list_physical_devices()[0].device_type == "CPU"


def test_gpus_listed_are_those_the_driver_reports():
    gpus = tfn.config.list_physical_devices("GPU")
    assert [g.name for g in gpus] == [f"/physical_device:GPU:{g.index}" for g in cuda_driver.probe().gpus]
    if NO_GPU:
        assert gpus == [] and tfn.config.list_logical_devices("GPU") == []


def test_probe_of_a_missing_driver_gives_its_reason():
    state = cuda_driver.probe("libcuda_not_here.so.1")
    assert state.gpus == () and "libcuda_not_here.so.1 could not be loaded" in state.reason


def test_probe_of_a_library_without_the_driver_api_does_not_crash():
    state = cuda_driver.probe("libm.so.6")
    assert state.gpus == () and "not a usable CUDA driver" in state.reason


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible: the missing-driver error cannot happen")
def test_missing_driver_is_a_not_found_error_naming_it():
    with pytest.raises(tfn.errors.NotFoundError, match="libcuda.so.1"):
        cuda_driver.runtime()


@pytest.mark.parametrize("name, spec", [
    ("/GPU:0", ("GPU", 0)), ("gpu:1", ("GPU", 1)), ("/device:CPU:0", ("CPU", 0)), ("GPU", ("GPU", 0)),
    ("/job:localhost/replica:0/task:0/device:GPU:2", ("GPU", 2)), ("/cpu:*", ("CPU", 0)), ("", None), (None, None),
])
def test_device_names_parse_as_tf_spells_them(name, spec):
    assert device_scope.parse(name) == spec


@pytest.mark.parametrize("name", ["/XPU:0", "GPU:x", "/GPU:0/CPU:0", "/job:worker/GPU:0"])
def test_malformed_device_names_are_value_errors_naming_them(name):
    with pytest.raises(ValueError, match="in '" + name.replace("*", r"\*") + "'"):
        tfn.device(name)


def test_tensors_know_their_device():
    assert tfn.constant([1.0]).device == CPU0
    seen = []

    @tfn.function
    def f(x):
        seen.append(x.device)
        return x + 1.0
    assert f(tfn.constant([1.0])).device == CPU0
    assert seen == [""]  # as TF: a traced tensor without placement has no device


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible")
def test_soft_placement_runs_gpu_placed_code_on_the_cpu():
    f = tfn.function(lambda x: x * 2.0)
    with tfn.device("/GPU:0"):
        y = f(tfn.constant([1.0, 2.0]))
        z = tfn.identity(y) + 1.0
    assert y.device == CPU0 and z.device == CPU0
    np.testing.assert_array_equal(z.numpy(), [3.0, 5.0])
    g = tfn.function(lambda x: x - 1.0, jit_device="GPU:0")
    assert g(tfn.constant([1.0])).device == CPU0


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible")
def test_hard_placement_names_the_missing_device():
    tfn.config.set_soft_device_placement(False)
    assert not tfn.config.get_soft_device_placement()
    f = tfn.function(lambda x: x * 2.0)
    with tfn.device("/GPU:0"):
        with pytest.raises(tfn.errors.InvalidArgumentError,
                           match=r"Could not satisfy device specification '/job:localhost/replica:0/task:0/"
                                 r"device:GPU:0'\. enable_soft_placement=0.*\[tfn.function <lambda>\]"):
            f(tfn.constant([1.0]))
        with pytest.raises(tfn.errors.InvalidArgumentError, match=r"GPU:0.*\[Op:AddV2\]"):
            tfn.constant(1.0) + 1.0
    with tfn.device("/CPU:0"):
        assert f(tfn.constant([1.0])).device == CPU0  # the CPU always exists


def test_device_scopes_nest_and_are_per_thread():
    seen = []
    with tfn.device("/GPU:1"):
        with tfn.device("/CPU:0"):
            seen.append(device_scope.current())
        with tfn.device(None):
            seen.append(device_scope.current())
        t = threading.Thread(target=lambda: seen.append(device_scope.current()))
        t.start()
        t.join()
        seen.append(device_scope.current())
    assert seen == [("CPU", 0), None, None, ("GPU", 1)]
    assert device_scope.current() is None


def test_memory_info_is_for_gpus_only():
    with pytest.raises(ValueError, match="No matching devices found for 'GPU:7'"):
        tfn.config.experimental.get_memory_info("GPU:7")
    with pytest.raises(ValueError, match="GPU memory only"):
        tfn.config.experimental.get_memory_info("CPU:0")


def _traced(fn, *specs):
    return tfn.function(fn).get_concrete_function(*specs)


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible: the missing-driver error cannot happen")
def test_compiling_for_a_cuda_gpu_without_a_driver_is_a_not_found_error():
    from tfn.dialects.types import TensorType
    from tfn.runtime import driver
    c = _traced(lambda x: x * 2.0, tfn.TensorSpec([8]))
    t = TensorType((8,), tfn.float32)
    with pytest.raises(tfn.errors.NotFoundError, match="libcuda.so.1"):
        driver.compile(c.graph.module, symbol=c.graph.symbol, in_types=[t], out_types=[t],
                       device=devices.Device("GPU", 0, devices.CUDA))


def test_cuda_host_code_leaves_every_host_device_copy_to_the_runtime(monkeypatch):
    """The NVVM pipeline the runtime uses (host side tfn-gpu-device-abi): the host code allocates device memory
    and launches kernels, and copies nothing between host and device (ptxas accepts the kernels on the way)."""
    from tfn.passes import registry
    from tfn.runtime import compiler, driver
    monkeypatch.setenv("TFN_GPU_CHIP", "sm_90")
    c = _traced(lambda x, y: (tfn.reduce_sum(x * y + 1.0, axis=1), tfn.tanh(x)), tfn.TensorSpec([64, 100]),
                tfn.TensorSpec([64, 100]))
    text = driver.gpu_pipeline(devices.Device("GPU", 0, devices.CUDA))
    assert "cubin-chip=sm_90" in text and "tfn-gpu-device-abi" in text
    with c.graph.module.context:
        lowered = driver._copy(c.graph.module)
        registry.run(text, lowered.operation)
    declared = compiler.declared_functions(lowered)
    assert compiler._uses_cuda_runtime(declared)
    assert "mgpuMemAlloc" in declared and "mgpuMemcpy" not in declared
    assert "gpu.binary" in str(lowered) and "gpu.launch_func" in str(lowered)
