// RUN: tfn-opt %s --tfn-lower-to-linalg | FileCheck %s
// RUN: tfn-opt %s -p 'builtin.module(tfn-lower-to-linalg)' | FileCheck %s
// RUN: tfn-opt %s --tfn-lower-to-linalg | FileCheck %s --check-prefix=NOTFN
// NOTFN-NOT: "tfn.

// tfn-verify, tfn-fold-constants, tfn-to-linalg{verify=0}, canonicalize, cse, tfn-fuse-elementwise-chains,
// linalg-fuse-elementwise-ops, canonicalize: the `linalg` stage.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<?xf32>
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  // cse leaves one tensor.dim for the dynamic size that every op shares.
  // CHECK: %[[DIM:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
  // CHECK-NOT: tensor.dim
  // add and exp fuse into one elementwise kernel.
  // CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>)
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: arith.addf
  // CHECK-NEXT: math.exp
  // CHECK-NEXT: linalg.yield
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = "tfn.exp"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: %[[R:.*]] = linalg.reduce ins(%[[EXP]] : tensor<?x4xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [1]
  %2 = "tfn.reduce_sum"(%1) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  // canonicalize folds the identity away.
  // CHECK-NOT: linalg.generic
  // CHECK: return %[[R]] : tensor<?xf32>
  %3 = "tfn.identity"(%2) : (tensor<?xf32>) -> tensor<?xf32>
  return %3 : tensor<?xf32>
}

// Ops on constants are folded before lowering (tracing keeps them as ops, as TF): 3 + 4 is the constant 7.
// CHECK-LABEL: func.func @folded
// CHECK: %[[C:.*]] = arith.constant dense<7> : tensor<i32>
// CHECK-NEXT: return %[[C]]
func.func @folded() -> tensor<i32> {
  %a = "tfn.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %b = "tfn.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  %s = "tfn.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %s : tensor<i32>
}
