# RUN: %PYTHON %s | FileCheck %s
# The IR of a traced tfn.function at the `tfn` and `linalg` stages.
import numpy as np

import tfn


@tfn.function
def affine(x, w, b):
    return tfn.maximum(tfn.matmul(x, w) + b, 0.0)


@tfn.function(input_signature=[tfn.TensorSpec([None, 4], tfn.float32), tfn.TensorSpec([None, 4], tfn.bool)])
def masked_mean(x, mask):
    kept = tfn.where(mask, x, tfn.zeros_like(x))
    return tfn.reduce_sum(kept, axis=1) / tfn.cast(tfn.reduce_sum(tfn.cast(mask, tfn.int32), axis=1), tfn.float32)


x = tfn.constant(np.ones((2, 3), np.float32))
w = tfn.constant(np.ones((3, 5), np.float32))
b = tfn.constant(np.ones((5,), np.float32))
ir = affine.experimental_get_compiler_ir(x, w, b)

# CHECK-LABEL: func.func @__inference_affine
# CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x5xf32>, %[[B:.*]]: tensor<5xf32>) -> tensor<2x5xf32>
# CHECK: %[[MM:.*]] = "tfn.matmul"(%[[X]], %[[W]]) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
# CHECK: %[[SUM:.*]] = "tfn.add"(%[[MM]], %[[B]]) : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
# CHECK: "tfn.maximum"(%[[SUM]], %{{.*}}) : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
# CHECK: return %{{.*}} : tensor<2x5xf32>
print(ir("tfn"))

# CHECK-LABEL: func.func @__inference_affine
# CHECK: linalg.fill
# CHECK: linalg.matmul
# CHECK: linalg.generic
# CHECK: arith.addf
# CHECK: arith.maximumf
# CHECK-NOT: "tfn.
print(ir("linalg"))

# Dynamic dimensions from input_signature; bool tensors are i1 in the tfn dialect.
# CHECK-LABEL: func.func @__inference_masked_mean
# CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[M:.*]]: tensor<?x4xi1>) -> tensor<?xf32>
# CHECK: "tfn.select"(%[[M]], %[[X]], %{{.*}}) : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
# CHECK: "tfn.cast"(%{{.*}}) {dtype = i32} : (tensor<?x4xi1>) -> tensor<?x4xi32>
# CHECK: "tfn.reduce_sum"(%{{.*}}) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xi32>) -> tensor<?xi32>
# CHECK: "tfn.divide"(%{{.*}}, %{{.*}}) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
print(masked_mean.get_concrete_function().ir("tfn"))

# ... and stored as i8 after lowering, with sizes read by tensor.dim.
# CHECK-LABEL: func.func @__inference_masked_mean
# CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[M:.*]]: tensor<?x4xi8>) -> tensor<?xf32>
# CHECK: tensor.dim %[[X]]
# CHECK: arith.trunci %{{.*}} : i8 to i1
# CHECK: arith.extui %{{.*}} : i8 to i32
# CHECK: arith.divf
print(masked_mean.get_concrete_function().ir("linalg"))

# The trace runs: eager and compiled agree.
# CHECK: [4. 4.]
print(affine(x, w, b).numpy()[:, 0])
