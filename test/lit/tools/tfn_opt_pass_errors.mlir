// Pass failures and bad pipelines: a diagnostic and exit status 1, never a traceback or a crash.
// RUN: not tfn-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tfn-opt %s -p 'builtin.module(canonicalize, no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: tfn-opt: error: unknown pass or pipeline 'no-such-pass'
// RUN: not tfn-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tfn-opt: error: invalid pass pipeline: {{.*}}no such option no-such-option
// tfn passes parse their options as upstream passes do: an unknown option or a bad value names the pass and the
// option; a named pipeline takes none.
// RUN: not tfn-opt %s -p 'builtin.module(tfn-to-linalg{bogus=1})' 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: not tfn-opt %s --tfn-to-linalg=bogus=1 2>&1 | FileCheck %s --check-prefix=BOGUS
// BOGUS: tfn-opt: error: invalid pass pipeline: <Pass-Options-Parser>: no such option bogus failed to add `tfn-to-linalg` with options `bogus=1`
// RUN: not tfn-opt %s -p 'builtin.module(tfn-parallelize{workers=two})' 2>&1 | FileCheck %s --check-prefix=NOTINT
// NOTINT: tfn-opt: error: invalid pass pipeline: {{.*}}for the --workers option: 'two' value invalid for uint argument! failed to add `tfn-parallelize` with options `workers=two`
// RUN: not tfn-opt %s --tfn-parallelize=workers=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: tfn-opt: error: invalid pass pipeline: {{.*}}for the --workers option: '0' is not a positive integer failed to add `tfn-parallelize`
// RUN: not tfn-opt %s '--tfn-pack-matmul=workers=2 vector-bits=384' 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: tfn-opt: error: invalid pass pipeline: {{.*}}for the --vector-bits option: '384' is not one of 128, 256, 512 failed to add `tfn-pack-matmul` with options `workers=2 vector-bits=384`
// RUN: not tfn-opt %s -p 'builtin.module(tfn-vectorize-reductions{lanes})' 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: tfn-opt: error: invalid pass pipeline: {{.*}}for the --lanes option: requires a value! failed to add `tfn-vectorize-reductions`
// RUN: not tfn-opt %s -p 'builtin.module(tfn-pipeline{workers=2})' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: tfn-opt: error: invalid pass pipeline: {{.*}}no such option workers failed to add `tfn-pipeline` with options `workers=2`
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
