"""Placement, device tensors and counted copies end to end on the emulated GPU (TFN_GPU_EMULATE): functions placed
on GPU:0 compile through the GPU emulation pipeline (mapped gpu.launch IR as CPU loops) and keep their results in
the emulated device's memory until `.numpy()`."""
import gc

import numpy as np
import pytest

import tfn
from tfn.runtime import devices

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
stats = tfn.config.experimental.get_device_copy_stats


@pytest.fixture(autouse=True)
def _emulated_gpu():
    devices.set_gpu_emulation(True)
    tfn.config.experimental.reset_device_copy_stats()
    yield
    devices.set_gpu_emulation(None)
    tfn.config.set_soft_device_placement(True)


def _copies():
    s = stats()
    return s["host_to_device"], s["device_to_host"]


def test_the_emulated_gpu_is_listed():
    assert [d.name for d in tfn.config.list_physical_devices("GPU")] == ["/physical_device:GPU:0"]
    assert [d.name for d in tfn.config.list_logical_devices()] == ["/device:CPU:0", "/device:GPU:0"]
    assert "emulated" in tfn.config.experimental.get_device_details("GPU:0")["device_name"]
    gpu = tfn.config.list_physical_devices("GPU")[0]
    assert tfn.config.experimental.get_device_details(gpu) == tfn.config.experimental.get_device_details("GPU:0")


def test_identity_under_a_gpu_scope_copies_to_the_device_once():
    x = tfn.constant([1.0, 2.0, 3.0])
    with tfn.device("/GPU:0"):
        y = tfn.identity(x)
    assert y.device == GPU0 and not y.on_host
    assert stats() == {"host_to_device": 1, "host_to_device_bytes": 12, "device_to_host": 0,
                       "device_to_host_bytes": 0}
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, 3.0])
    y.numpy()
    assert _copies() == (1, 1)  # the host copy is kept
    with tfn.device("/CPU:0"):
        z = tfn.identity(y)
    assert z.device == CPU0


def test_device_memory_is_freed_with_the_last_reference():
    before = tfn.config.experimental.get_memory_info("GPU:0")["current"]
    with tfn.device("/GPU:0"):
        y = tfn.identity(tfn.zeros([1000]))
    assert tfn.config.experimental.get_memory_info("GPU:0")["current"] == before + 4000
    del y
    gc.collect()
    info = tfn.config.experimental.get_memory_info("GPU:0")
    assert info["current"] == before and info["peak"] >= before + 4000


def test_a_function_called_under_a_gpu_scope_keeps_its_results_on_the_device():
    f = tfn.function(lambda x, y: tfn.nn.relu(x * y + 1.0))
    a = np.random.default_rng(0).standard_normal((37, 19)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((37, 19)).astype(np.float32)
    with tfn.device("/GPU:0"):
        r = f(a, b)
        r2 = f(r, r)  # inputs already on the device: no copies
    assert r.device == GPU0 and r2.device == GPU0
    assert _copies() == (2, 0)
    expected = np.maximum(a * b + 1.0, 0.0)
    np.testing.assert_allclose(r2.numpy(), np.maximum(expected * expected + 1.0, 0.0), rtol=1e-6)
    assert _copies() == (2, 1)
    assert f(a, b).device == CPU0  # outside the scope: the CPU trace
    assert f.experimental_get_tracing_count() == 2


def test_jit_device_places_every_call():
    g = tfn.function(lambda x: tfn.reduce_sum(x, axis=1), jit_device="GPU")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    with tfn.device("/CPU:0"):
        r = g(x)
    assert r.device == GPU0
    np.testing.assert_array_equal(r.numpy(), x.sum(axis=1))


def test_a_gpu_result_passed_to_a_cpu_function_is_copied_back_once():
    on_gpu = tfn.function(lambda x: x + 1.0, jit_device="GPU:0")
    on_cpu = tfn.function(lambda x: x * 2.0)
    r = on_gpu(tfn.constant([1.0, 2.0]))
    s = on_cpu(r)
    assert s.device == CPU0
    np.testing.assert_array_equal(s.numpy(), [4.0, 6.0])
    assert _copies() == (1, 1)


@pytest.mark.parametrize("name, fn, shapes", [
    ("elementwise chain", lambda x, y: tfn.tanh(x) * y - tfn.exp(-tfn.abs(y)), [(129, 65), (129, 65)]),
    ("broadcast", lambda x, y: x / (y + 3.0), [(33, 17), (17,)]),
    ("row reduction", lambda x: tfn.reduce_sum(x, axis=1), [(70, 300)]),
    ("column reduction", lambda x: tfn.reduce_max(x, axis=0), [(300, 70)]),
    ("full reduction", lambda x: tfn.reduce_mean(x), [(1000,)]),
    ("matmul", lambda a, b: tfn.matmul(a, b), [(67, 45), (45, 33)]),
])
def test_emulated_kernels_match_numpy(name, fn, shapes):
    rng = np.random.default_rng(len(name))
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    expected = fn(*[tfn.constant(a) for a in args]).numpy()  # eager: the NumPy kernels
    r = tfn.function(fn, jit_device="GPU:0")(*args)
    assert r.device == GPU0
    np.testing.assert_allclose(r.numpy(), expected, rtol=2e-5, atol=2e-5)


def test_variables_stay_on_the_host_and_are_updated():
    v = tfn.Variable(1.0)

    @tfn.function(jit_device="GPU:0")
    def step(x):
        v.assign_add(tfn.reduce_sum(x))
        return v * x
    x = tfn.constant([1.0, 2.0])
    np.testing.assert_array_equal(step(x).numpy(), [4.0, 8.0])
    np.testing.assert_array_equal(step(x).numpy(), [7.0, 14.0])
    assert v.numpy() == 7.0
    assert v.device == CPU0


def test_hard_placement_allows_gpu_functions_but_not_eager_ops_on_the_gpu():
    tfn.config.set_soft_device_placement(False)
    f = tfn.function(lambda x: x * 3.0)
    with tfn.device("/GPU:0"):
        r = f(tfn.constant([1.0]))
        y = tfn.identity(tfn.constant([2.0]))
        with pytest.raises(tfn.errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation AddV2: .*'/job:localhost/replica:0/task:0/"
                                 r"device:GPU:0' because no supported kernel for GPU devices is available"):
            tfn.add(r, 1.0)
        with pytest.raises(tfn.errors.InvalidArgumentError, match="device:GPU:1"):
            with tfn.device("/GPU:1"):
                f(tfn.constant([1.0]))
    assert r.device == GPU0 and y.device == GPU0
    assert (r + y).device == CPU0  # outside the scope: the eager op runs on the CPU, its inputs copied back


def test_device_tensors_print_and_convert_like_tensors():
    with tfn.device("/GPU:0"):
        y = tfn.identity(tfn.constant([[1, 2], [3, 4]]))
    assert repr(y) == repr(tfn.constant([[1, 2], [3, 4]]))
    assert tfn.convert_to_tensor(y) is y and tfn.constant(y) is y
    assert float(tfn.reduce_sum(y)) == 10.0
    with pytest.raises(ValueError, match="requested dtype float32"):
        tfn.convert_to_tensor(y, tfn.float32)


def test_gpu_functions_compile_through_the_gpu_emulation_pipeline():
    from tfn.runtime import driver
    gpu = devices.find("GPU", 0)
    text = driver.gpu_pipeline(gpu)
    assert "tfn-gpu-map" in text and "tfn-gpu-emulate" in text and "tfn-gpu-device-abi" in text
    assert "tfn-gpu-device-buffers" not in text  # the runtime makes and counts every host<->device copy
    f = tfn.function(lambda x: x + 1.0)
    x = tfn.constant([1.0])
    with tfn.device("/GPU:0"):
        f(x)
    f(x)
    on_gpu = f._placed[gpu].get_concrete_function(x)
    assert on_gpu.placement == gpu
    assert on_gpu._executable.source != f.get_concrete_function(x)._executable.source


def test_the_environment_variable_turns_emulation_on(monkeypatch):
    devices.set_gpu_emulation(None)  # let TFN_GPU_EMULATE decide
    monkeypatch.setenv("TFN_GPU_EMULATE", "1")
    assert [d.device_type for d in tfn.config.list_logical_devices()] == ["CPU", "GPU"]
    monkeypatch.setenv("TFN_GPU_EMULATE", "0")
    assert [d.device_type for d in tfn.config.list_logical_devices("GPU")] == \
        ["GPU"] * len(tfn.config.list_physical_devices("GPU"))
    assert all("emulated" not in str(d) for d in devices.devices("GPU"))


def test_a_device_executable_checks_its_inputs():
    from tfn.dialects.types import TensorType
    from tfn.runtime.device_executable import DeviceExecutable
    exe = DeviceExecutable(devices.find("GPU", 0), [TensorType((2, None), tfn.float32)], [], executable=None)
    buf = exe.on_device(np.ones((2, 5), np.float32), 0)
    assert exe.on_device(buf, 0) is buf  # already there: used as it is
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"input 0: expected a float32 tensor of shape "
                                                              r"\[2, None\], got int32 of shape \[2, 5\]"):
        exe.on_device(np.ones((2, 5), np.int32), 0)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="got float32 of shape \\[3, 5\\]"):
        exe.on_device(np.ones((3, 5), np.float32), 0)


def test_a_function_without_gpu_kernels_runs_on_the_cpu_under_soft_placement():
    """A sort (loops over its lines) has no GPU kernel (tfn-gpu-tile names it): TF's soft placement puts it on the
    CPU; hard placement is an InvalidArgumentError naming the device and the compiler's reason."""
    f = tfn.function(lambda x: tfn.sort(x, axis=1))
    x = np.array([[1.0, 3.0, 2.0], [5.0, 4.0, 0.0]], np.float32)
    with tfn.device("/GPU:0"):
        r = f(x)
    assert r.device == CPU0
    np.testing.assert_array_equal(r.numpy(), [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]])
    tfn.config.set_soft_device_placement(False)
    g = tfn.function(lambda x: tfn.sort(x, axis=1))
    with pytest.raises(tfn.errors.InvalidArgumentError, match=r"(?s)Cannot assign a device for '<lambda>': .*"
                                                              r"device:GPU:0' because no supported kernel.*"
                                                              r"has no GPU kernel"):
        with tfn.device("/GPU:0"):
            g(x)


def test_random_draws_run_on_the_gpu_and_equal_the_cpus():
    """The Philox kernel reads its counter and key itself (on a GPU they are device memory, which the host code
    cannot read): a dropout and a normal draw placed on GPU:0 run there, and draw what the CPU draws from the same
    seeds."""
    def draw(x):
        return tfn.nn.dropout(x, 0.5, seed=3) + tfn.random.normal([64, 33], seed=4)
    x = np.ones((64, 33), np.float32)
    results = []
    for device in ("GPU:0", "CPU:0"):
        tfn.random.set_seed(11)
        results.append(tfn.function(draw, jit_device=device)(x))
    assert results[0].device == GPU0 and results[1].device == CPU0
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_a_size_computed_on_the_gpu_runs_the_function_on_the_cpu_under_soft_placement():
    """A size the host code needs (an allocation's, a slice's start) computed by a GPU kernel would be read from
    device memory on the host: no GPU code for the function, so under soft placement it runs on the CPU, and under
    hard placement the error says no GPU kernel is available (both were a CompileError)."""
    x = np.random.default_rng(5).random((64, 32)).astype(np.float32)
    fns = [lambda x: tfn.fill([tfn.cast(tfn.reduce_sum(x), tfn.int32) % 7 + 1, 3], 1.0),
           lambda x: x[tfn.cast(tfn.reduce_max(x) * 10.0, tfn.int32):]]
    for fn in fns:
        with tfn.device("/GPU:0"):
            r = tfn.function(fn)(x)
        assert r.device == CPU0
        np.testing.assert_array_equal(r.numpy(), fn(tfn.constant(x)).numpy())
    tfn.config.set_soft_device_placement(False)
    with pytest.raises(tfn.errors.InvalidArgumentError, match="no supported kernel for GPU devices"):
        with tfn.device("/GPU:0"):
            tfn.function(fns[0])(x)


def test_a_cnn_training_step_runs_on_the_gpu():
    """A padded convolution, ReLU, global average pooling, sparse softmax cross-entropy (with its labels' range
    check), the gradient and an SGD update all have GPU kernels (tfn-gpu-generalize, tfn-gpu-tile's 'loop' kernels):
    under hard placement the step runs on GPU:0, and gives the CPU's numbers."""
    tfn.config.set_soft_device_placement(False)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8, 8, 3)).astype(np.float32)
    y = np.array([0, 2, 1, 3], np.int32)
    w = (rng.standard_normal((3, 3, 3, 4)) * 0.3).astype(np.float32)

    def step(w, x, y):
        with tfn.GradientTape() as tape:
            tape.watch(w)
            logits = tfn.reduce_mean(tfn.nn.relu(tfn.nn.conv2d(x, w, 1, "SAME")), axis=[1, 2])
            loss = tfn.reduce_mean(tfn.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        return loss, w - 0.1 * tape.gradient(loss, w)
    on_cpu = [t.numpy() for t in tfn.function(step)(w, x, y)]
    on_gpu = tfn.function(step, jit_device="GPU:0")(w, x, y)
    assert [t.device for t in on_gpu] == [GPU0, GPU0]
    for got, want in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
