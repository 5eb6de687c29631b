// Malformed input: MLIR's diagnostic at file:line:col with the source line, exit status 1, no traceback.
// RUN: not tfn-opt %s 2>&1 | FileCheck %s
// RUN: not tfn-opt < %s 2>&1 | FileCheck %s --check-prefix=STDIN

// CHECK-NOT: Traceback
// CHECK: tfn_opt_errors.mlir:[[# @LINE + 6]]:10: error: use of value '%0' expects different type than prior uses: 'tensor<3xf32>' vs 'tensor<2xf32>'
// CHECK-NEXT: {{^}}  return %0 : tensor<3xf32>
// CHECK-NEXT: {{^}}         ^
// CHECK: tfn_opt_errors.mlir:[[# @LINE + 2]]:3: note: prior use here
func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<3xf32>
}
// CHECK-NOT: Traceback

// STDIN: <stdin>:12:10: error: use of value '%0'
