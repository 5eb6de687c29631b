// --verify-diagnostics fails, with mlir-opt's messages, when an expected diagnostic is missing or an unexpected one appears.
// RUN: not tfn-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

func.func @missing(%a: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: tfn_opt_verify_diagnostics.mlir:[[# @LINE + 1]]:6: error: expected error "never emitted" was not produced
  // expected-error @+1 {{never emitted}}
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @unexpected(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // CHECK: tfn_opt_verify_diagnostics.mlir:[[# @LINE + 1]]:8: error: unexpected error: 'tfn.add' op cannot compute Add
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @wrong_kind(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // CHECK: tfn_opt_verify_diagnostics.mlir:[[# @LINE + 1]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
  // expected-warning @+1 {{cannot compute Add}}
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Matched annotations (here @below and a regex) produce no output.
// CHECK-NOT: matched
func.func @matched(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error-re @below {{'tfn.add' op cannot compute {{[A-Z][a-z]+}} as input #1}}
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
