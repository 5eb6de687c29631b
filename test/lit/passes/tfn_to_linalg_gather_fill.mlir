// RUN: tfn-opt %s --tfn-to-linalg --canonicalize --cse | FileCheck %s
// The result is valid input for the rest of the pipeline (no i1 memrefs, no abort).
// RUN: tfn-opt %s --tfn-pipeline > /dev/null

// ---- the run-time error channel: two exported globals, codes are positions among the failing ops

// CHECK: memref.global "public" @tfn_error_flag : memref<i32> = dense<0>
// CHECK: memref.global "public" @tfn_error_detail : memref<8xi64> = dense<0>

// CHECK-LABEL: func.func @gather
func.func @gather(%p: tensor<?x3xf32>, %i: tensor<2xi32>) -> tensor<?x2xf32> {
  // CHECK: linalg.generic
  // CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i32 to index
  // CHECK: %[[LO:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
  // CHECK: %[[HI:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : index
  // CHECK: %[[BAD:.*]] = arith.ori %[[LO]], %[[HI]] : i1
  // CHECK: scf.if %[[BAD]] -> (f32)
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: memref.store %c1_i32
  // CHECK: } else {
  // CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[I]]] : tensor<?x3xf32>
  %0 = "tfn.gather"(%p, %i) {axis = 1 : i64, batch_dims = 0 : i64} : (tensor<?x3xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x?xf32>, %i: tensor<i64>) -> (tensor<2x1x?xf32>, tensor<?xf32>) {
  // x[3::-2, None, :]: a static slice, then a reversing generic, then expand_shape for the new axis
  // CHECK: tensor.extract_slice %{{.*}}[1, %{{.*}}] [2, %{{.*}}] [2, 1] : tensor<4x?xf32> to tensor<2x?xf32>
  // CHECK: linalg.generic
  // CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [2, 1, %{{.*}}] : tensor<2x?xf32> into tensor<2x1x?xf32>
  %0 = "tfn.strided_slice"(%x) {begin = array<i64: 3, 0>, end = array<i64: 0, 0>, strides = array<i64: -2, 1>, begin_mask = array<i64>, end_mask = array<i64: 0, 1>, shrink_axis = array<i64>, new_axis = array<i64: 1>, dynamic_begin = array<i64>, dynamic_end = array<i64>} : (tensor<4x?xf32>) -> tensor<2x1x?xf32>
  // x[i] with a run-time i: checked (error code 3: the module's third failing op), read by a guarded generic
  // CHECK: %[[IDX:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
  // CHECK: scf.if
  // CHECK: memref.store %c3_i32
  // CHECK: memref.store %[[IDX]]
  // CHECK: linalg.generic
  // CHECK: scf.if %{{.*}} -> (f32)
  %1 = "tfn.strided_slice"(%x, %i) {begin = array<i64: 0, 0>, end = array<i64: 0, 0>, strides = array<i64: 1, 1>, begin_mask = array<i64>, end_mask = array<i64: 1>, shrink_axis = array<i64: 0>, new_axis = array<i64>, dynamic_begin = array<i64: 0>, dynamic_end = array<i64>} : (tensor<4x?xf32>, tensor<i64>) -> tensor<?xf32>
  return %0, %1 : tensor<2x1x?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @fills
func.func @fills(%x: tensor<?x2xi32>, %v: tensor<f32>, %s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>, %on: tensor<f32>, %off: tensor<f32>) -> (tensor<2x3xf32>, tensor<?x2xf32>, tensor<?xi64>, tensor<?x2x4xf32>) {
  // CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
  // CHECK: linalg.fill ins(%[[V]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
  %0 = "tfn.fill"(%v) {shape = array<i64: 2, 3>} : (tensor<f32>) -> tensor<2x3xf32>
  // CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x2xi32>
  // CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
  // CHECK: linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<?x2xf32>)
  %1 = "tfn.fill_like"(%x, %v) : (tensor<?x2xi32>, tensor<f32>) -> tensor<?x2xf32>
  // range: the size never divides by zero; a bad range reports code 4
  // CHECK: arith.ceildivui
  // CHECK: memref.store %c4_i32
  // CHECK: linalg.generic
  // CHECK: linalg.index 0
  %2 = "tfn.range"(%s, %l, %d) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: linalg.generic
  // CHECK: linalg.index 2
  // CHECK: arith.cmpi eq
  // CHECK: arith.select
  %3 = "tfn.one_hot"(%x, %on, %off) {depth = 4 : i64, axis = -1 : i64} : (tensor<?x2xi32>, tensor<f32>, tensor<f32>) -> tensor<?x2x4xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<?x2xf32>, tensor<?xi64>, tensor<?x2x4xf32>
}
