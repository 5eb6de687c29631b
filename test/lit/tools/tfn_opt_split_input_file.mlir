// Each chunk is processed on its own; outputs are joined by the marker; line numbers are the file's.
// RUN: not tfn-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// LLVM spelling with one dash works too.
// RUN: not tfn-opt %s -split-input-file -tfn-to-linalg 2>%t.lowered.err | FileCheck %s --check-prefix=LOWERED
// RUN: FileCheck %s --check-prefix=LOWERED-ERR < %t.lowered.err

// CHECK: module {
// CHECK-NEXT: func.func @first
// LOWERED: func.func @first
// LOWERED: math.exp
func.func @first(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @second
func.func @second(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

// -----

// A bad chunk is reported with its line in this file; the other chunks still print.
// ERR: tfn_opt_split_input_file.mlir:[[# @LINE + 3]]:8: error: 'tfn.add' op cannot compute Add
// LOWERED-ERR: tfn_opt_split_input_file.mlir:[[# @LINE + 2]]:8: error: 'tfn.add' op cannot compute Add
func.func @bad(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A module written out explicitly is used as is.
// CHECK: // -----
// CHECK-NEXT: module @named {
// CHECK-NEXT: func.func @fourth
// LOWERED: func.func @fourth
module @named {
  func.func @fourth(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "tfn.negative"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

// ERR: tfn_opt_split_input_file.mlir:[[# @LINE + 1]]:1: error: custom op 'garbage' is unknown
garbage
// CHECK-NOT: garbage
