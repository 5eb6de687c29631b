// RUN: tfn-opt %s --split-input-file --verify-diagnostics --tfn-verify | FileCheck %s

// Valid IR passes through unchanged.
// CHECK-LABEL: func.func @valid
// CHECK: "tfn.add"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: "tfn.reduce_sum"(%{{.*}}) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
func.func @valid(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = "tfn.reduce_sum"(%0) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A dynamic result dimension is compatible with a static inferred one.
// CHECK-LABEL: func.func @dynamic_result
func.func @dynamic_result(%a: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @broadcast_mismatch(%a: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'tfn.add' op Incompatible shapes: [2, 4] vs. [3]}}
  %0 = "tfn.add"(%a, %b) : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @wrong_rank(%a: tensor<2x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfn.reduce_sum' op result #0 has type tensor<2xf32>, but its operands give tensor<2x1xf32>}}
  %0 = "tfn.reduce_sum"(%a) {axis = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bool_arithmetic(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'tfn.add' op AddV2 does not support dtype bool}}
  %0 = "tfn.add"(%a, %a) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Every bad op is reported, not only the first.
func.func @two_errors(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfn.add' op cannot compute Add}}
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  // expected-error @+1 {{'tfn.exp' op result #0 has type tensor<3xf32>}}
  %1 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<2xf32>
}

// -----

// The same bad op twice (its rule is checked once per operand types, result types and attributes): both are
// reported; the same op with another attribute value is checked on its own.
func.func @repeated_errors(%a: tensor<2x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfn.reduce_sum' op result #0 has type tensor<2xf32>, but its operands give tensor<2x1xf32>}}
  %0 = "tfn.reduce_sum"(%a) {axis = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2xf32>
  // expected-error @+1 {{'tfn.reduce_sum' op result #0 has type tensor<2xf32>, but its operands give tensor<2x1xf32>}}
  %1 = "tfn.reduce_sum"(%a) {axis = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2xf32>
  %2 = "tfn.reduce_sum"(%a) {axis = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
