// RUN: tfn-opt %s --tfn-to-linalg --canonicalize --cse | FileCheck %s
// The result is valid input for the rest of the pipeline (no i1 memrefs, no abort).
// RUN: tfn-opt %s --tfn-pipeline > /dev/null

// ---- tensor_scatter_update: an scf.for over the index rows, each checked and inserted in place

// CHECK-LABEL: func.func @scatter
func.func @scatter(%t: tensor<?x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<?x3xf32> {
  // CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x3xf32>
  // CHECK: scf.for %[[ROW:.*]] = %c0 to %c2 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x3xf32>)
  // CHECK: %[[RAW:.*]] = tensor.extract %{{.*}}[%[[ROW]], %c0] : tensor<2x1xi32>
  // CHECK: %[[I:.*]] = arith.index_cast %[[RAW]] : i32 to index
  // CHECK: arith.cmpi sge, %[[I]], %[[N]] : index
  // CHECK: scf.if %{{.*}} -> (tensor<?x3xf32>)
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: scf.yield %[[ACC]]
  // CHECK: } else {
  // CHECK: %[[ROWV:.*]] = tensor.extract_slice %{{.*}}[%[[ROW]], 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  // CHECK: tensor.insert_slice %[[ROWV]] into %[[ACC]][%[[I]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<?x3xf32>
  %0 = "tfn.tensor_scatter_update"(%t, %i, %u) : (tensor<?x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// ---- control flow around tfn ops: bool and unsigned values carried by scf ops take their storage types

// CHECK-LABEL: func.func @bool_loop
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<i8>) -> (tensor<4xi8>, tensor<i8>)
func.func @bool_loop(%b: tensor<4xi1>, %n: tensor<ui8>) -> (tensor<4xi1>, tensor<ui8>) {
  // CHECK: scf.while (%[[B:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}) : (tensor<4xi8>, tensor<i8>) -> (tensor<4xi8>, tensor<i8>)
  // CHECK: %[[E:.*]] = tensor.extract %{{.*}}[] : tensor<i8>
  // CHECK: %[[C:.*]] = arith.trunci %[[E]] : i8 to i1
  // The module has the run-time error flag (@scatter can fail): the traced loop also stops once it is set.
  // CHECK: %[[FLAG:.*]] = memref.get_global @tfn_error_flag : memref<i32>
  // CHECK: %[[V:.*]] = memref.load %[[FLAG]][] : memref<i32>
  // CHECK: %[[OK:.*]] = arith.cmpi eq, %[[V]], %c0_i32 : i32
  // CHECK: %[[GO:.*]] = arith.andi %[[C]], %[[OK]] : i1
  // CHECK: scf.condition(%[[GO]]) %[[B]], %[[N]] : tensor<4xi8>, tensor<i8>
  // CHECK: ^bb0(%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<i8>):
  // CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<4xi8>, tensor<i8>
  %r:2 = scf.while (%x = %b, %k = %n) : (tensor<4xi1>, tensor<ui8>) -> (tensor<4xi1>, tensor<ui8>) {
    %any = "tfn.reduce_any"(%x) {axis = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
    %go = tensor.extract %any[] : tensor<i1>
    scf.condition(%go) %x, %k : tensor<4xi1>, tensor<ui8>
  } do {
  ^bb0(%x: tensor<4xi1>, %k: tensor<ui8>):
    %f = "tfn.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    %y = "tfn.logical_and"(%x, %f) : (tensor<4xi1>, tensor<i1>) -> tensor<4xi1>
    %one = "tfn.constant"() {value = dense<1> : tensor<ui8>} : () -> tensor<ui8>
    %k1 = "tfn.add"(%k, %one) : (tensor<ui8>, tensor<ui8>) -> tensor<ui8>
    scf.yield %y, %k1 : tensor<4xi1>, tensor<ui8>
  }
  // CHECK: scf.if %{{.*}} -> (tensor<4xi8>)
  %c0 = arith.constant 0 : index
  %p = tensor.extract %b[%c0] : tensor<4xi1>
  %s = scf.if %p -> (tensor<4xi1>) {
    scf.yield %r#0 : tensor<4xi1>
  } else {
    %n1 = "tfn.logical_not"(%r#0) : (tensor<4xi1>) -> tensor<4xi1>
    scf.yield %n1 : tensor<4xi1>
  }
  return %s, %r#1 : tensor<4xi1>, tensor<ui8>
}
