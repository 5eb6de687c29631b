// The whole CPU pipeline in one go equals the three stages run one after another.
// RUN: tfn-opt %s --tfn-pipeline > %t.whole
// RUN: tfn-opt %s --tfn-lower-to-linalg | tfn-opt --tfn-bufferize | tfn-opt --tfn-lower-to-llvm > %t.staged
// RUN: diff %t.whole %t.staged
// RUN: FileCheck %s < %t.whole

// CHECK-LABEL: llvm.func @f(
// f32 exp is a polynomial (tfn-polynomial-approximation), not a libm call.
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.floor
// CHECK: llvm.intr.fma
// CHECK: llvm.return
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xui8>) -> tensor<?x4xi1> {
  %0 = "tfn.exp"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = "tfn.cast"(%b) {dtype = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %2 = "tfn.greater"(%0, %1) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  return %2 : tensor<?x4xi1>
}
