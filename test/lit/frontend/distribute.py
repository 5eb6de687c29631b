# REQUIRES: mpi
# RUN: %mpiexec -n 2 %PYTHON %s | FileCheck %s
# The compiled train step of Keras fit under MultiWorkerMirroredStrategy on 2 replicas: the gradients (and the
# loss and row count that weight them) are concatenated into one bucket, all-reduced by a tfn.all_reduce op of the
# step itself, which becomes a call of MPI_Allreduce in the native code.
import numpy as np

import tfn

strategy = tfn.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    model = tfn.keras.Sequential([tfn.keras.layers.Dense(3, input_shape=(4,)), tfn.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((8, 4), np.float32), np.ones((8, 2), np.float32)
model.fit(x, y, batch_size=8, epochs=1, verbose=0)  # each replica's shard: 4 rows
ir = model._steps["train_step"].experimental_get_compiler_ir(tfn.constant(x[:4]), tfn.constant(y[:4]))

# 2 scalars + 4*3 + 3 + 3*2 + 2 = 25 floats in one message, then split back into the gradients
# CHECK-LABEL: func.func @__inference_train_step
# CHECK: %[[BUCKET:.*]] = "tfn.concat"({{.*}}) {axis = 0 : i64} : ({{.*}}) -> tensor<25xf32>
# CHECK: %[[SUM:.*]] = "tfn.all_reduce"(%[[BUCKET]]) {reduction = "sum"} : (tensor<25xf32>) -> tensor<25xf32>
# CHECK: "tfn.strided_slice"(%[[SUM]])
# CHECK-NOT: "tfn.all_reduce"
# CHECK: return
if strategy.rank == 0:
    print(ir("tfn"))

# In native code: helpers calling MPI (MPICH's constants), called by the step: the signature check (2 x i64,
# MPI_MAX: replicas agree on the bucket's shape) and the bucket (25 x f32, MPI_SUM), reduced in place in the
# bucket's own buffer (MPI_IN_PLACE, MPICH's -1, as the send buffer: no second buffer)
# CHECK: llvm.func @MPI_Allreduce
# CHECK-LABEL: llvm.func @tfn_mpi_inplace_sum_25xf32
# CHECK: %[[MINUS_ONE:.*]] = llvm.mlir.constant(-1 : i64) : i64
# CHECK-NEXT: %[[IN_PLACE:.*]] = llvm.inttoptr %[[MINUS_ONE]] : i64 to !llvm.ptr
# CHECK: llvm.call @MPI_Allreduce(%[[IN_PLACE]],
# CHECK-LABEL: llvm.func @tfn_mpi_allreduce_max_2xi64
# CHECK: llvm.call @MPI_Allreduce
# CHECK-LABEL: llvm.func @__inference_train_step
# CHECK: llvm.call @tfn_mpi_allreduce_max_2xi64
# CHECK: llvm.call @tfn_mpi_inplace_sum_25xf32
if strategy.rank == 0:
    print(ir("llvm"))
