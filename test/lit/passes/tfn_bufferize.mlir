// The `bufferized` stage, run on the text of the `linalg` stage.
// RUN: tfn-opt %s --tfn-lower-to-linalg | tfn-opt --tfn-bufferize | FileCheck %s
// RUN: tfn-opt %s --tfn-lower-to-linalg | tfn-opt --tfn-bufferize | FileCheck %s --check-prefix=NOTENSOR
// NOTENSOR-NOT: tensor<
// NOTENSOR-NOT: bufferization.

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[A:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<4xf32>) -> memref<?xf32>
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  // CHECK: %[[DIM:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x4xf32>
  // CHECK: %[[TMP:.*]] = memref.alloc(%[[DIM]]) {{.*}} : memref<?x4xf32>
  // add and tanh are one fused kernel writing the temporary; the read-only arguments are never written.
  // CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<?x4xf32>, memref<4xf32>) outs(%[[TMP]] : memref<?x4xf32>)
  // CHECK: arith.addf
  // CHECK: math.tanh
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = "tfn.tanh"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: %[[OUT:.*]] = memref.alloc(%[[DIM]]) {{.*}} : memref<?xf32>
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<?xf32>)
  // CHECK: linalg.reduce ins(%[[TMP]] : memref<?x4xf32>) outs(%[[OUT]] : memref<?xf32>)
  %2 = "tfn.reduce_sum"(%1) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  // Every temporary is freed; the result is handed to the caller.
  // CHECK: memref.dealloc %[[TMP]] : memref<?x4xf32>
  // CHECK-NOT: memref.dealloc
  // CHECK: return %[[OUT]] : memref<?xf32>
  return %2 : tensor<?xf32>
}

// An argument returned unchanged is copied: the caller owns every result buffer.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME: (%[[A:.*]]: memref<3xf32>) -> memref<3xf32>
func.func @passthrough(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: %[[COPY:.*]] = memref.alloc(){{.*}}: memref<3xf32>
  // CHECK: memref.copy %[[A]], %[[COPY]]
  // CHECK: return %[[COPY]]
  %0 = "tfn.identity"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
