// RUN: tfn-opt %s --split-input-file --tfn-async-parallel=workers=2 | FileCheck %s
// RUN: tfn-opt %s --split-input-file --tfn-async-parallel=workers=4 | FileCheck %s --check-prefix=FOUR

// A two-iteration scf.forall becomes a parallel compute function dispatched as async-runtime tasks: the caller
// runs one block itself and awaits the group of the others.
// CHECK-LABEL: func.func @halves
// CHECK-NOT: scf.forall
// CHECK: call @mlirAsyncRuntimeCreateGroup
// CHECK: call @async_dispatch_fn
// CHECK: call @mlirAsyncRuntimeAwaitAllInGroup
// CHECK: call @mlirAsyncRuntimeDropRef
// CHECK-LABEL: func.func private @parallel_compute_fn
// CHECK: memref.store
// CHECK: call @mlirAsyncRuntimeExecute
func.func @halves(%m: memref<1024xf32>) {
  %c512 = arith.constant 512 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (2) {
    %base = arith.muli %i, %c512 : index
    memref.store %one, %m[%base] : memref<1024xf32>
  }
  return
}

// -----

// Without scf.forall nothing happens: no runtime function is even declared.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: mlirAsyncRuntime
func.func @serial(%m: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %m[%c0] : memref<1024xf32>
  return
}

// -----

// A loop of unknown trip count is cut into at most 8 blocks per worker (async-parallel-for's num-workers).
// CHECK-LABEL: func.func @dynamic
// CHECK: arith.ceildivsi %arg1, %c16
// FOUR-LABEL: func.func @dynamic
// FOUR: arith.ceildivsi %arg1, %c32
func.func @dynamic(%m: memref<?xf32>, %n: index) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (%n) {
    memref.store %one, %m[%i] : memref<?xf32>
  }
  return
}
