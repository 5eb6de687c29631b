// -o writes the output to a file; IR printing goes to stderr.
// RUN: tfn-opt %s --tfn-to-linalg -o %t 2>&1 | count 0
// RUN: FileCheck %s < %t
// RUN: tfn-opt %s --tfn-lower-to-linalg --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: IR Dump After tfn-verify
// DUMP: IR Dump After tfn-fold-constants
// DUMP: IR Dump After tfn-to-linalg
// DUMP: IR Dump After Canonicalizer
// DUMP: IR Dump After CSE

// CHECK: func.func @f
// CHECK: math.exp
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
