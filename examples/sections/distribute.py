"""Multi-process training (tfn.distribute): MultiWorkerMirroredStrategy with one replica per MPI process.

Run here in one process, the job has one replica; `mpiexec -n 4 python this_file.py` runs the same program as
4 replicas (README: "Running on several processes"). Needs the distribute extra (mpich, mpi4py)."""
import numpy as np
from common import section

import tfn as tf

section("Distributed training: MultiWorkerMirroredStrategy (one replica per MPI process)")

strategy = tf.distribute.MultiWorkerMirroredStrategy()
print("Replicas in sync:", strategy.num_replicas_in_sync)

with strategy.scope():  # variables made here start from replica 0's values on every replica
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 4)).astype(np.float32)
y = x @ np.array([[1.0], [-2.0], [0.5], [0.0]], np.float32)
history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)  # batch_size is the global batch
print("Loss per epoch:", [round(v, 4) for v in history.history["loss"]])

section("Distributed training: collectives inside a tf.function")


@tf.function
def global_mean(v):
    ctx = tf.distribute.get_replica_context()
    return ctx.all_reduce(tf.distribute.ReduceOp.MEAN, v)


v = tf.constant([1.0, 2.0, 3.0])
print(strategy.run(global_mean, (v,)))
ir = global_mean.experimental_get_compiler_ir(v)("tfn")
print("\n".join(line.strip() for line in ir.splitlines() if "tfn.all_reduce" in line))
print("Reduced over replicas:", strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None))
