// RUN: tfn-opt %s | FileCheck %s
// Printing and parsing again gives the same IR.
// RUN: tfn-opt %s | tfn-opt | FileCheck %s
// The generic form parses too.
// RUN: tfn-opt --mlir-print-op-generic %s | tfn-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @elementwise(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  // CHECK: %[[S:.*]] = "tfn.add"(%[[A]], %[[B]]) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: "tfn.exp"(%[[S]]) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = "tfn.exp"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @attributes
func.func @attributes(%x: tensor<?x?xf32>) -> (tensor<?x1xf32>, tensor<?x?xi32>, tensor<f32>) {
  // CHECK: "tfn.reduce_sum"(%{{.*}}) {axis = array<i64: 1>, keepdims = true} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %0 = "tfn.reduce_sum"(%x) {axis = array<i64: 1>, keepdims = true} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  // CHECK: "tfn.cast"(%{{.*}}) {dtype = i32} : (tensor<?x?xf32>) -> tensor<?x?xi32>
  %1 = "tfn.cast"(%x) {dtype = i32} : (tensor<?x?xf32>) -> tensor<?x?xi32>
  // CHECK: "tfn.constant"() {value = dense<2.500000e+00> : tensor<f32>} : () -> tensor<f32>
  %2 = "tfn.constant"() {value = dense<2.5> : tensor<f32>} : () -> tensor<f32>
  return %0, %1, %2 : tensor<?x1xf32>, tensor<?x?xi32>, tensor<f32>
}

// Unsigned and bool element types stay as written (ui8, i1) in the tfn dialect.
// CHECK-LABEL: func.func @unsigned_and_bool
// CHECK-SAME: (%{{.*}}: tensor<3xui8>, %{{.*}}: tensor<3xi1>) -> tensor<3xui8>
func.func @unsigned_and_bool(%u: tensor<3xui8>, %m: tensor<3xi1>) -> tensor<3xui8> {
  // CHECK: "tfn.constant"() {value = dense<[1, 2, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
  %c = "tfn.constant"() {value = dense<[1, 2, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
  // CHECK: "tfn.constant"() {value = dense<[true, false, true]> : tensor<3xi1>} : () -> tensor<3xi1>
  %t = "tfn.constant"() {value = dense<[true, false, true]> : tensor<3xi1>} : () -> tensor<3xi1>
  // CHECK: "tfn.greater"(%{{.*}}, %{{.*}}) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  %g = "tfn.greater"(%u, %c) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  // CHECK: "tfn.logical_and"(%{{.*}}, %{{.*}}) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %a = "tfn.logical_and"(%g, %m) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: "tfn.logical_not"(%{{.*}}) : (tensor<3xi1>) -> tensor<3xi1>
  %n = "tfn.logical_not"(%a) : (tensor<3xi1>) -> tensor<3xi1>
  // CHECK: "tfn.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<3xi1>, tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %s = "tfn.select"(%n, %u, %c) : (tensor<3xi1>, tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return %s : tensor<3xui8>
}

// Signed, unsigned and 64-bit types.
// CHECK-LABEL: func.func @dtypes
func.func @dtypes(%a: tensor<2xi64>, %b: tensor<2xi16>, %c: tensor<2xf64>, %d: tensor<2xf16>) -> tensor<2xi64> {
  // CHECK: "tfn.negative"(%{{.*}}) : (tensor<2xi64>) -> tensor<2xi64>
  %0 = "tfn.negative"(%a) : (tensor<2xi64>) -> tensor<2xi64>
  // CHECK: "tfn.maximum"(%{{.*}}, %{{.*}}) : (tensor<2xi16>, tensor<2xi16>) -> tensor<2xi16>
  %1 = "tfn.maximum"(%b, %b) : (tensor<2xi16>, tensor<2xi16>) -> tensor<2xi16>
  // CHECK: "tfn.sqrt"(%{{.*}}) : (tensor<2xf64>) -> tensor<2xf64>
  %2 = "tfn.sqrt"(%c) : (tensor<2xf64>) -> tensor<2xf64>
  // CHECK: "tfn.abs"(%{{.*}}) : (tensor<2xf16>) -> tensor<2xf16>
  %3 = "tfn.abs"(%d) : (tensor<2xf16>) -> tensor<2xf16>
  return %0 : tensor<2xi64>
}
