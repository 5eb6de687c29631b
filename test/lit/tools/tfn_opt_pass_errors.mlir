// Pass failures and bad pipelines: a diagnostic and exit status 1, never a traceback or a crash.
// RUN: not tfn-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tfn-opt %s -p 'builtin.module(canonicalize, no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: tfn-opt: error: unknown pass or pipeline 'no-such-pass'
// RUN: not tfn-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tfn-opt: error: invalid pass pipeline: {{.*}}no such option no-such-option
// RUN: not tfn-opt %s -p canonicalize --cse 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: tfn-opt: error: --pass-pipeline cannot be used with individual pass flags
// RUN: not tfn-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tfn-opt: error: could not open input file '{{.*}}.missing'

// Bufferizing tfn ops fails in the upstream pass: its error is reported at the op.
// RUN: not tfn-opt %s --one-shot-bufferize=bufferize-function-boundaries 2>&1 | FileCheck %s --check-prefix=PASS
// PASS-NOT: Traceback
// PASS: tfn_opt_pass_errors.mlir:[[# @LINE + 4]]:8: error: op was not bufferized
// Options with spaces, quoted as for mlir-opt.
// RUN: tfn-opt %s --tfn-lower-to-linalg '--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map' | FileCheck %s --check-prefix=OK
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// OK: func.func @f(%{{.*}}: memref<2xf32>) -> memref<2xf32>
