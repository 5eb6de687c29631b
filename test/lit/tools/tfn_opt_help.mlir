// RUN: tfn-opt --help | FileCheck %s
// RUN: tfn-opt -h | FileCheck %s

// CHECK: usage: tfn-opt
// CHECK: --split-input-file
// CHECK: --verify-diagnostics
// CHECK: --mlir-print-ir-after-all
// CHECK-LABEL: tfn passes:
// CHECK-DAG: --tfn-verify{{ +}}Verify tfn ops against the type rules of the op table
// CHECK-DAG: --tfn-to-linalg{{ +}}Lower tfn ops to linalg
// CHECK-DAG: --tfn-mark-readonly-args{{ +}}Mark public function arguments
// CHECK-LABEL: tfn pipelines:
// CHECK-DAG: --tfn-lower-to-linalg{{ +}}Stage `linalg`
// CHECK-DAG: --tfn-bufferize{{ +}}Stage `bufferized`
// CHECK-DAG: --tfn-lower-to-llvm{{ +}}Stage `llvm`
// CHECK-DAG: --tfn-pipeline{{ +}}The whole CPU pipeline
// CHECK: Any upstream MLIR pass works
