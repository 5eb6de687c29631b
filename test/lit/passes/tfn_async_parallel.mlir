// RUN: tfn-opt %s --split-input-file --tfn-async-parallel=workers=2 | FileCheck %s
// RUN: tfn-opt %s --split-input-file --tfn-async-parallel=workers=4 | FileCheck %s --check-prefix=FOUR

// A two-iteration scf.forall becomes a parallel compute function whose blocks the caller and workers - 1 async
// tasks take from an atomic counter; out of blocks, the caller spins a while on the count of finished blocks, then
// awaits the group of tasks only while a block is still running; the last holder of the counters frees them.
// CHECK-LABEL: func.func @halves
// CHECK-NOT: scf.forall
// CHECK: call @parallel_compute_fn_launch(%c2,
// CHECK-LABEL: func.func private @parallel_compute_fn(
// CHECK: memref.store
// CHECK-LABEL: func.func private @tfn_release_blocks(
// CHECK: memref.atomic_rmw addi %c-1_i64, %arg0[%c2]
// CHECK: memref.dealloc %arg0
// CHECK-LABEL: func.func private @parallel_compute_fn_take(
// CHECK: scf.while
// CHECK: %[[BLOCK:.*]] = memref.atomic_rmw addi %c1_i64, %arg0[%c0]
// CHECK: arith.cmpi slt, %[[BLOCK]]
// CHECK: call @parallel_compute_fn(
// CHECK: memref.atomic_rmw addi %c1_i64, %arg0[%c1]
// CHECK-LABEL: func.func private @parallel_compute_fn_launch(
// CHECK: %[[CTL:.*]] = memref.alloc() : memref<3xi64>
// CHECK: %[[TAKERS:.*]] = arith.minsi %arg0, %c2
// CHECK: %[[GROUP:.*]] = call @mlirAsyncRuntimeCreateGroup
// CHECK: scf.for %{{.*}} = %c1 to %[[TAKERS]]
// CHECK: call @async_execute_fn(%[[CTL]],
// CHECK: call @mlirAsyncRuntimeAddTokenToGroup
// CHECK: call @parallel_compute_fn_take(%[[CTL]],
// CHECK: %[[SPIN:.*]]:2 = scf.while
// CHECK: memref.atomic_rmw addi %c0_i64, %[[CTL]][%c1]
// CHECK: %[[PENDING:.*]] = arith.cmpi slt, %[[SPIN]]#1
// CHECK: cf.cond_br %[[PENDING]]
// CHECK: call @mlirAsyncRuntimeAwaitAllInGroup(%[[GROUP]])
// CHECK: call @tfn_release_blocks(%[[CTL]])
// CHECK-LABEL: func.func private @async_execute_fn(
// CHECK: call @mlirAsyncRuntimeExecute
// CHECK: call @parallel_compute_fn_take(
// CHECK-NEXT: call @tfn_release_blocks(
// FOUR-LABEL: func.func private @parallel_compute_fn_launch(
// FOUR: arith.minsi %arg0, %c4
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

// A loop of unknown trip count is cut into at most 16 blocks per worker (BLOCKS_PER_WORKER, through
// async-parallel-for's num-workers).
// CHECK-LABEL: func.func @dynamic
// CHECK: arith.ceildivsi %arg1, %c32
// FOUR-LABEL: func.func @dynamic
// FOUR: arith.ceildivsi %arg1, %c64
func.func @dynamic(%m: memref<?xf32>, %n: index) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (%n) {
    memref.store %one, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// Two loops: a launch and a take function each, one release function for both.
// CHECK-LABEL: func.func @two
// CHECK-DAG: call @parallel_compute_fn_launch(%c4,
// CHECK-DAG: call @parallel_compute_fn_0_launch(%c2,
// CHECK-COUNT-1: func.func private @tfn_release_blocks(
// CHECK-NOT: func.func private @tfn_release_blocks(
func.func @two(%m: memref<1024xf32>) {
  %c512 = arith.constant 512 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (2) {
    %base = arith.muli %i, %c512 : index
    memref.store %one, %m[%base] : memref<1024xf32>
  }
  scf.forall (%i) in (4) {
    memref.store %one, %m[%i] : memref<1024xf32>
  }
  return
}
