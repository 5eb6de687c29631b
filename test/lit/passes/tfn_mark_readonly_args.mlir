// RUN: tfn-opt %s --tfn-mark-readonly-args | FileCheck %s

// Public functions: every argument is marked non-writable, so bufferization copies instead of writing into it.
// CHECK-LABEL: func.func @public
// CHECK-SAME: (%{{.*}}: tensor<?x4xf32> {bufferization.writable = false}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})
func.func @public(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  // CHECK: "tfn.add"
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @no_args
// CHECK-SAME: () -> tensor<f32>
func.func @no_args() -> tensor<f32> {
  %0 = "tfn.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  return %0 : tensor<f32>
}

// Private functions and declarations are left alone.
// CHECK-LABEL: func.func private @private
// CHECK-NOT: bufferization.writable
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @private(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// CHECK: func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>
func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>
