// The emulation pipeline in one go equals its stages run one after another, and leaves no GPU op.
// RUN: tfn-opt %s --tfn-gpu-emulation > %t.whole
// RUN: tfn-opt %s --tfn-gpu-mapped | tfn-opt --tfn-gpu-emulate | tfn-opt --canonicalize | tfn-opt --tfn-lower-to-llvm > %t.staged
// RUN: diff %t.whole %t.staged
// RUN: FileCheck %s < %t.whole
// CHECK-LABEL: llvm.func @f(
// CHECK-NOT: gpu.
// CHECK: llvm.call @malloc
// CHECK: llvm.return
func.func @f(%a: tensor<37x50xf32>, %b: tensor<50x29xf32>, %c: tensor<37x29xf32>) -> tensor<37xf32> {
  %0 = "tfn.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
  %1 = "tfn.tanh"(%0) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %2 = "tfn.add"(%1, %c) : (tensor<37x29xf32>, tensor<37x29xf32>) -> tensor<37x29xf32>
  %3 = "tfn.reduce_sum"(%2) {axis = array<i64: 1>, keepdims = false} : (tensor<37x29xf32>) -> tensor<37xf32>
  return %3 : tensor<37xf32>
}
