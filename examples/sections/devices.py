"""Device placement (TF's "Use a GPU" guide), run by tfn: tf.device scopes, where tensors live, host<->device
copies. The output is the same on every machine: the program makes tfn emulate a GPU (TFN_GPU_EMULATE=1 does the
same from outside), whose functions compile to CPU loops over the kernels' blocks and threads."""
from common import section

import tfn as tf

section("Device placement: tf.device, tensors' devices, counted host<->device copies")

tf.config.experimental.set_gpu_emulation(True)  # one emulated GPU:0 instead of the GPUs the driver reports
print("Num GPUs Available:", len(tf.config.list_physical_devices("GPU")))
print(tf.config.list_physical_devices())
print(tf.config.list_logical_devices("GPU"))

a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
print(a.device)


@tf.function
def matmul_relu(x, y):
    return tf.nn.relu(tf.matmul(x, y) - 30.0)


tf.config.experimental.reset_device_copy_stats()
held = tf.config.experimental.get_memory_info("GPU:0")["current"]
with tf.device("/GPU:0"):
    c = matmul_relu(a, b)  # traced and compiled for GPU:0; a and b are copied there
    d = matmul_relu(c, c)  # c is already on GPU:0: no copy
    row_sums = tf.function(lambda x: tf.reduce_sum(x, axis=1))(d)
print(c.device)
print(tf.config.experimental.get_device_copy_stats())
print(d)  # reading the value copies it to the host once
print(row_sums.device, row_sums.numpy())
print(tf.config.experimental.get_device_copy_stats())
now_held = tf.config.experimental.get_memory_info("GPU:0")["current"]
print("GPU memory held by c, d and row_sums:", now_held - held, "bytes")

# A function can name its device itself; tf.identity under a device scope moves a tensor.
square = tf.function(lambda x: x * x, jit_device="GPU:0")
print(square(tf.constant([1.0, 2.0, 3.0])).device)
with tf.device("/GPU:0"):
    e = tf.identity(a)
print(e.device)

section("A convolutional network's training step on the GPU")
images = tf.reshape(tf.sin(tf.range(8 * 12 * 12 * 3, dtype=tf.float32)), [8, 12, 12, 3])
labels = tf.constant([0, 1, 2, 3, 0, 1, 2, 3])
filters = tf.Variable(tf.reshape(tf.cos(tf.range(3 * 3 * 3 * 4, dtype=tf.float32)), [3, 3, 3, 4]) * 0.2)


@tf.function(jit_device="GPU:0")
def train_step(x, y):
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.nn.conv2d(x, filters, strides=1, padding="SAME"))
        logits = tf.reduce_mean(tf.nn.max_pool2d(h, 2, 2, "VALID"), axis=[1, 2])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
    filters.assign_sub(0.5 * tape.gradient(loss, filters))
    return loss


for step in range(3):
    loss = train_step(images, labels)
    print("step", step, "loss", round(float(loss), 4), "on", loss.device)
# A sort has no GPU kernel: soft placement runs the function holding it on the CPU.
with tf.device("/GPU:0"):
    print(tf.function(lambda v: tf.sort(v))(tf.constant([3.0, 1.0, 2.0])).device)

section("Soft placement: a device that does not exist")
with tf.device("/GPU:1"):
    f = matmul_relu(a, b)  # no GPU:1: soft placement runs it on the CPU
print(f.device)
tf.config.set_soft_device_placement(False)
try:
    with tf.device("/GPU:1"):
        matmul_relu(a, b)
except tf.errors.InvalidArgumentError as err:
    print("InvalidArgumentError:", err)
tf.config.set_soft_device_placement(True)
tf.config.experimental.set_gpu_emulation(None)  # back to the GPUs the driver reports
