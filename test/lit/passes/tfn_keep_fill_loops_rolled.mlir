// RUN: tfn-opt %s --tfn-keep-fill-loops-rolled | FileCheck %s
// RUN: tfn-opt %s --tfn-keep-fill-loops-rolled --convert-scf-to-cf --convert-cf-to-llvm | FileCheck %s --check-prefix=LLVM

// A nest of loops storing a constant (a kernel's fill): both loops are annotated; the annotation reaches the
// back edges of the LLVM loops.
// CHECK: #[[ANN:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// CHECK-LABEL: func.func @fill
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.store
// CHECK-NEXT: } {loop_annotation = #[[ANN]]}
// CHECK-NEXT: } {loop_annotation = #[[ANN]]}
// LLVM-LABEL: func.func @fill
// LLVM-COUNT-2: llvm.br {{.*}} {loop_annotation = #
func.func @fill(%m: memref<128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c64 = arith.constant 64 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant dense<0.0> : vector<16xf32>
  scf.for %i = %c0 to %c128 step %c1 {
    scf.for %j = %c0 to %c64 step %c16 {
      vector.store %z, %m[%i, %j] : memref<128x64xf32>, vector<16xf32>
    }
  }
  return
}

// A loop storing a computed value, a loop carrying a value and an empty loop are left alone.
// CHECK-LABEL: func.func @others
// CHECK-NOT: loop_annotation
// CHECK: return
// CHECK-NOT: loop_annotation
func.func @others(%m: memref<128xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %c128 step %c1 {
    memref.store %x, %m[%i] : memref<128xf32>
  }
  %s = scf.for %i = %c0 to %c128 step %c1 iter_args(%a = %x) -> (f32) {
    %v = memref.load %m[%i] : memref<128xf32>
    %b = arith.addf %a, %v : f32
    scf.yield %b : f32
  }
  scf.for %i = %c0 to %c128 step %c1 {
  }
  return %s : f32
}
